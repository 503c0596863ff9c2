// Small HLO texts, one per syntax feature: what the parser builds, and the canonical text
// the printer writes back (which must itself round-trip).
#include <gtest/gtest.h>

#include <cmath>

#include "hlo_text_test_util.h"

namespace gspmd {
namespace {

using testing::Canonical;
using testing::Find;

TEST(SyntaxRoundTripTest, BareNamesAndMissingSignaturesPrintCanonically) {
  const char* text = R"(HloModule m, entry_computation_layout={(f32[2]{0}, /*index=1*/f32[2]{0})->f32[2]{0}}, num_partitions=2, replica_count=1, some_flag=true

add_comp {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  a = f32[2]{0} parameter(0), sharding={devices=[2]<=[2]}, metadata={op_name="a" source_file="f.py" source_line=3}
  b = f32[2]{0} parameter(1), frontend_attributes={k="v",k2="x{y}"}
  c = f32[2]{0} add(f32[2]{0} a, f32[2]{0} b)
  z = f32[] constant(0)
  r = f32[] reduce(c, z), dimensions={0}, to_apply=add_comp
  ROOT out = f32[2]{0} broadcast(r), dimensions={}
}
)";
  EXPECT_EQ(Canonical(text), R"(HloModule m, entry_computation_layout={(f32[2]{0}, /*index=1*/f32[2]{0})->f32[2]{0}}, num_partitions=2, replica_count=1, some_flag=true

%add_comp (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0), sharding={devices=[2]<=[2]}, metadata={op_name="a" source_file="f.py" source_line=3}
  %b = f32[2]{0} parameter(1), frontend_attributes={k="v",k2="x{y}"}
  %c = f32[2]{0} add(%a, %b)
  %z = f32[] constant(0)
  %r = f32[] reduce(%c, %z), dimensions={0}, to_apply=%add_comp
  ROOT %out = f32[2]{0} broadcast(%r), dimensions={}
}

)");
  std::unique_ptr<Module> module = ParseModule(text);
  ASSERT_EQ(module->attributes.size(), 4u);
  EXPECT_EQ(module->attributes[0].first, "entry_computation_layout");
  EXPECT_EQ(module->attributes[0].second, "{(f32[2]{0}, /*index=1*/f32[2]{0})->f32[2]{0}}");
  EXPECT_EQ(module->attributes[3], (std::pair<std::string, std::string>("some_flag", "true")));
  EXPECT_EQ(module->num_partitions(), 2);
  EXPECT_EQ(module->entry()->name(), "main");
  EXPECT_FALSE(module->entry()->printed_with_signature);
  const Instruction& reduce = Find(*module, "r");
  EXPECT_EQ(reduce.to_apply()->name(), "add_comp");
  EXPECT_EQ(reduce.dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(Find(*module, "a").metadata, R"(op_name="a" source_file="f.py" source_line=3)");
  EXPECT_EQ(Find(*module, "b").FrontendAttribute("k2"), "x{y}");
  EXPECT_TRUE(Find(*module, "a").sharding()->IsTiled());
}

TEST(SyntaxRoundTripTest, DebugTablesAreKeptVerbatim) {
  const char* text = R"(HloModule m

FileNames
1 "gen.py"

FunctionNames
1 "<module>"
2 "f.<locals>.<lambda>"

FileLocations
1 {file_name_id=1 function_name_id=1 line=4 end_line=4 column=8 end_column=40}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


ENTRY %main (p: f32[]) -> f32[] {
  ROOT %p = f32[] parameter(0), metadata={op_name="p" stack_frame_id=1}
}

)";
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  EXPECT_TRUE(module->debug_tables.present);
  EXPECT_EQ(module->debug_tables.function_names,
            (std::vector<std::string>{"1 \"<module>\"", "2 \"f.<locals>.<lambda>\""}));
  EXPECT_EQ(module->debug_tables.stack_frames.size(), 1u);
}

TEST(SyntaxRoundTripTest, ShapesOfEveryKind) {
  const char* text = R"(HloModule shapes

ENTRY %e (p: (pred[], s8[1], s16[1], s32[1], s64[1], /*index=5*/u8[1], u16[1], u32[1], u64[1], f16[1], /*index=10*/bf16[1], f32[1], f64[1]), t: f32[8,128], d: bf16[<=8,4], nested: ((f32[], s32[2]), pred[])) -> (f32[8,128], bf16[<=8,4], token) {
  %p = (pred[], s8[1]{0}, s16[1]{0}, s32[1]{0}, s64[1]{0}, /*index=5*/u8[1]{0}, u16[1]{0}, u32[1]{0}, u64[1]{0}, f16[1]{0}, /*index=10*/bf16[1]{0}, f32[1]{0}, f64[1]{0}) parameter(0)
  %t = f32[8,128]{1,0:T(8,128)} parameter(1)
  %d = bf16[<=8,4]{1,0} parameter(2)
  %tok = token[] after-all()
  %nested = ((f32[], s32[2]{0}), pred[]) parameter(3)
  ROOT %r = (f32[8,128]{1,0:T(8,128)}, bf16[<=8,4]{1,0}, token[]) tuple(%t, %d, %tok)
}
)";
  std::string printed = Canonical(text);
  EXPECT_NE(printed.find("%t = f32[8,128]{1,0:T(8,128)} parameter(1)"), std::string::npos);
  EXPECT_NE(printed.find("%d = bf16[<=8,4]{1,0} parameter(2)"), std::string::npos);
  std::unique_ptr<Module> module = ParseModule(text);
  const Shape& tuple = Find(*module, "p").shape();
  ASSERT_EQ(tuple.tuple_size(), 13);
  EXPECT_EQ(tuple.tuple_shape(0).element_type(), ElementType::kPred);
  EXPECT_EQ(tuple.tuple_shape(10).element_type(), ElementType::kBF16);
  EXPECT_EQ(tuple.tuple_shape(12).element_type(), ElementType::kF64);
  const Shape& tiled = Find(*module, "t").shape();
  EXPECT_EQ(tiled.layout()->minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(tiled.layout()->extra, "T(8,128)");
  const Shape& dynamic = Find(*module, "d").shape();
  EXPECT_EQ(dynamic.dims(), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(dynamic.dynamic_dims(), (std::vector<bool>{true, false}));
  EXPECT_TRUE(Find(*module, "tok").shape().IsToken());
  EXPECT_FALSE(Find(*module, "t").shape().layout()->minor_to_major.empty());
  EXPECT_FALSE(ParseModule("HloModule m\nENTRY e {\n  ROOT p = f32[3] parameter(0)\n}\n")
                   ->entry()->root()->shape().layout().has_value());
}

TEST(SyntaxRoundTripTest, ConstantLiterals) {
  const char* text = R"(HloModule consts

ENTRY %e {
  %a = f32[] constant(0.797884583)
  %b = f32[] constant(1e-05)
  %c = f32[3]{0} constant({-inf, inf, nan})
  %d = s32[2,2]{1,0} constant({ { 1, 2 }, {3, 4} })
  %e = pred[2]{0} constant({true, false})
  %f = f64[] constant(0.1)
  %g = bf16[2]{0} constant({0.1, 3})
  %h = f16[] constant(0.333)
  %i = u64[] constant(18446744073709551615)
  %j = s8[2]{0} constant({-128, 127})
  %k = f32[2,2,1]{2,1,0} constant({ { /*i0=0*/ {1}, {2} }, { {3}, {4} } })
  %l = (f32[], s32[2]{0}) constant((1.5, {1, 2}))
  %m = f32[0]{0} constant({})
  ROOT %t = (f32[], f32[]) tuple(%a, %b)
}
)";
  EXPECT_EQ(Canonical(text), R"(HloModule consts

ENTRY %e () -> (f32[], f32[]) {
  %a = f32[] constant(0.797884583)
  %b = f32[] constant(1e-05)
  %c = f32[3]{0} constant({-inf, inf, nan})
  %d = s32[2,2]{1,0} constant({ {1, 2}, {3, 4} })
  %e = pred[2]{0} constant({true, false})
  %f = f64[] constant(0.1)
  %g = bf16[2]{0} constant({0.1, 3})
  %h = f16[] constant(0.333)
  %i = u64[] constant(18446744073709551615)
  %j = s8[2]{0} constant({-128, 127})
  %k = f32[2,2,1]{2,1,0} constant({ { {1}, {2} }, { {3}, {4} } })
  %l = (f32[], s32[2]{0}) constant((1.5, {1, 2}))
  %m = f32[0]{0} constant({})
  ROOT %t = (f32[], f32[]) tuple(%a, %b)
}

)");
  std::unique_ptr<Module> module = ParseModule(text);
  EXPECT_EQ(Find(*module, "a").literal()->data<float>()[0], 0.797884583f);
  const Literal& special = *Find(*module, "c").literal();
  EXPECT_TRUE(std::isinf(special.data<float>()[0]) && special.data<float>()[0] < 0);
  EXPECT_TRUE(std::isnan(special.data<float>()[2]));
  EXPECT_EQ(Find(*module, "d").literal()->GetAsInt64(3), 4);
  EXPECT_EQ(Find(*module, "e").literal()->data<bool>()[1], false);
  EXPECT_EQ(Find(*module, "f").literal()->data<double>()[0], 0.1);
  EXPECT_EQ(Find(*module, "i").literal()->data<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(Find(*module, "j").literal()->data<int8_t>()[0], -128);
  const Literal& tuple = *Find(*module, "l").literal();
  ASSERT_EQ(tuple.tuple_elements().size(), 2u);
  EXPECT_EQ(tuple.tuple_elements()[1].GetAsInt64(1), 2);
}

TEST(SyntaxRoundTripTest, ArrayAttributes) {
  const char* text = R"(HloModule attrs

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

ENTRY %e (x: f32[4,8], i: s32[]) -> f32[4,8] {
  %x = f32[4,8]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %s = f32[2,4]{1,0} slice(%x), slice={[0:4:2], [4:8]}
  %s2 = f32[4,4]{1,0} slice(%x), slice={[0:4], [0:4]}
  %ds = f32[2,8]{1,0} dynamic-slice(%x, %i, %i), dynamic_slice_sizes={2,8}
  %z = f32[] constant(0)
  %p = f32[5,16]{1,0} pad(%x, %z), padding=1_0x-1_2_1
  %p2 = f32[5,9]{1,0} pad(%x, %z), padding=1_0x0_1
  %io = s32[4,8]{1,0} iota(), iota_dimension=1
  %rw = f32[4,6]{1,0} reduce-window(%x, %z), window={size=1x3 stride=1x1 pad=0_0x1_1 lhs_dilate=1x1 rhs_dilate=1x2}, to_apply=%max
  %rev = f32[4,8]{1,0} reverse(%x), dimensions={0,1}
  %tr = f32[8,4]{0,1} transpose(%x), dimensions={1,0}
  %cat = f32[8,8]{1,0} concatenate(%x, %x), dimensions={0}
  %rp = f32[4,8]{1,0} reduce-precision(%x), exponent_bits=5, mantissa_bits=10
  %lo = f32[] constant(0)
  %rng = f32[4,8]{1,0} rng(%lo, %z), distribution=rng_uniform
  ROOT %r = f32[4,8]{1,0} add(%x, %x)
}
)";
  std::string printed = Canonical(text);
  EXPECT_NE(printed.find("slice={[0:4:2], [4:8:1]}"), std::string::npos);  // all strides once one is
  EXPECT_NE(printed.find("slice={[0:4], [0:4]}"), std::string::npos);
  EXPECT_NE(printed.find("padding=1_0_0x-1_2_1"), std::string::npos);  // interior on all once one has it
  EXPECT_NE(printed.find("padding=1_0x0_1\n"), std::string::npos);
  EXPECT_NE(printed.find("window={size=1x3 pad=0_0x1_1 rhs_dilate=1x2}, to_apply=%max"), std::string::npos);
  EXPECT_NE(printed.find("exponent_bits=5, mantissa_bits=10"), std::string::npos);
  EXPECT_NE(printed.find("rng(%lo, %z), distribution=rng_uniform"), std::string::npos);
  std::unique_ptr<Module> module = ParseModule(text);
  const Instruction& slice = Find(*module, "s");
  ASSERT_EQ(slice.slice().size(), 2u);
  EXPECT_EQ(slice.slice()[0], (SliceDim{0, 4, 2}));
  EXPECT_EQ(slice.slice()[1], (SliceDim{4, 8, 1}));
  EXPECT_EQ(Find(*module, "ds").dynamic_slice_sizes(), (std::vector<int64_t>{2, 8}));
  const Instruction& pad = Find(*module, "p");
  EXPECT_EQ(pad.padding()[1], (PaddingDim{-1, 2, 1}));
  EXPECT_EQ(Find(*module, "io").iota_dimension, 1);
  const Window& window = Find(*module, "rw").window();
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[1].size, 3);
  EXPECT_EQ(window[1].padding_low, 1);
  EXPECT_EQ(window[1].window_dilation, 2);
}

TEST(SyntaxRoundTripTest, ConvolutionDotGatherScatter) {
  const char* text = R"(HloModule attrs

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (x: f32[4,8], k: f32[3,3,8,16], v: f32[4,8], g: s32[5,1], up: f32[5,8], k3: f32[2,2,2,4,4], v3: f32[1,4,4,4,8]) -> f32[4,8] {
  %x = f32[4,8]{1,0} parameter(0)
  %k = f32[3,3,8,16]{3,2,1,0} parameter(1)
  %v = f32[4,8]{1,0} parameter(2)
  %g = s32[5,1]{1,0} parameter(3)
  %up = f32[5,8]{1,0} parameter(4)
  %k3 = f32[2,2,2,4,4]{4,3,2,1,0} parameter(5)
  %v3 = f32[1,4,4,4,8]{4,3,2,1,0} parameter(6)
  %img = f32[1,4,8,8]{3,2,1,0} broadcast(%x), dimensions={1,2}
  %conv = f32[1,4,8,16]{3,2,1,0} convolution(%img, %k), window={size=3x3 pad=1_1x1_1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1
  %c2d = f32[4,4]{1,0} convolution(%x, %v), dim_labels=bf_oi->bf
  %c3d = f32[1,3,3,3,4]{4,3,2,1,0} convolution(%v3, %k3), window={size=2x2x2}, dim_labels=b012f_012io->b012f, feature_group_count=2
  %d = f32[4,4]{1,0} dot(%x, %v), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %b3 = f32[2,4,8]{2,1,0} broadcast(%x), dimensions={1,2}
  %bd = f32[2,4,4]{2,1,0} dot(%b3, %b3), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  %ga = f32[5,8]{1,0} gather(%x, %g), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, indices_are_sorted=true
  %gi = s32[4,1]{1,0} slice(%g), slice={[0:4], [0:1]}
  %gb = f32[4,8]{1,0} gather(%x, %gi), offset_dims={1}, collapsed_slice_dims={}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,8}
  %sc = f32[4,8]{1,0} scatter(%x, %g, %up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=%add
  %sb = f32[4,8]{1,0} scatter(%x, %gi, %x), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1, to_apply=%add
  ROOT %r = f32[4,8]{1,0} add(%x, %x)
}
)";
  std::string printed = Canonical(text);
  EXPECT_NE(printed.find("window={size=3x3 pad=1_1x1_1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f\n"),
            std::string::npos);
  EXPECT_NE(printed.find("convolution(%x, %v), dim_labels=bf_oi->bf\n"), std::string::npos);
  EXPECT_NE(printed.find("dim_labels=b012f_012io->b012f, feature_group_count=2\n"), std::string::npos);
  std::unique_ptr<Module> module = ParseModule(text);
  const ConvDimensionNumbers& conv = Find(*module, "conv").conv_dims();
  EXPECT_EQ(conv.input_batch_dim, 0);
  EXPECT_EQ(conv.input_feature_dim, 3);
  EXPECT_EQ(conv.input_spatial_dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(conv.kernel_input_feature_dim, 2);
  EXPECT_EQ(conv.kernel_output_feature_dim, 3);
  EXPECT_EQ(conv.output_spatial_dims, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(Find(*module, "conv").window()[1].reversal);
  const ConvDimensionNumbers& two_d = Find(*module, "c2d").conv_dims();
  EXPECT_EQ(two_d.kernel_output_feature_dim, 0);
  EXPECT_EQ(two_d.kernel_input_feature_dim, 1);
  EXPECT_TRUE(two_d.input_spatial_dims.empty());
  EXPECT_EQ(Find(*module, "c3d").feature_group_count, 2);
  const DotDimensionNumbers& dot = Find(*module, "bd").dot_dims();
  EXPECT_EQ(dot.lhs_batch_dims, std::vector<int64_t>{0});
  EXPECT_EQ(dot.rhs_contracting_dims, std::vector<int64_t>{2});
  const Instruction& gather = Find(*module, "gb");
  EXPECT_EQ(gather.gather_dims().operand_batching_dims, std::vector<int64_t>{0});
  EXPECT_EQ(gather.gather_dims().index_vector_dim, 1);
  EXPECT_EQ(gather.gather_slice_sizes(), (std::vector<int64_t>{1, 8}));
  EXPECT_TRUE(Find(*module, "ga").indices_are_sorted);
  const Instruction& scatter = Find(*module, "sc");
  EXPECT_EQ(scatter.scatter_dims().scatter_dims_to_operand_dims, std::vector<int64_t>{0});
  EXPECT_EQ(scatter.scatter_dims().index_vector_dim, 1);
  EXPECT_TRUE(scatter.unique_indices);
  EXPECT_EQ(scatter.to_apply()->name(), "add");
  EXPECT_EQ(Find(*module, "sb").scatter_dims().input_batching_dims, std::vector<int64_t>{0});
}

TEST(SyntaxRoundTripTest, CompareSortTopKCustomCallAndVerbatimAttributes) {
  const char* text = R"(HloModule misc

%ge (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE, type=TOTALORDER
}

ENTRY %e (x: f32[4,8]) -> f32[4,8] {
  %x = f32[4,8]{1,0} parameter(0)
  %srt = f32[4,8]{1,0} sort(%x), dimensions={1}, is_stable=true, to_apply=%ge
  %tk = (f32[4,2]{1,0}, s32[4,2]{1,0}) topk(%x), k=2, largest=false
  %cc = f32[4,8]{1,0} custom-call(%x), custom_call_target="Sharding", custom_call_has_side_effect=true, api_version=API_VERSION_STATUS_RETURNING, sharding={replicated}, backend_config="{\"a\": 1}"
  %cc2 = f32[4,8]{1,0} custom-call(%x), custom_call_target="foo", backend_config={"x": {"y": 2}}
  ROOT %cmp = f32[4,8]{1,0} negate(%x), origin=xyz
}
)";
  EXPECT_NE(Canonical(text).find(
                "custom_call_target=\"Sharding\", custom_call_has_side_effect=true, "
                "api_version=API_VERSION_STATUS_RETURNING, sharding={replicated}, backend_config=\"{\\\"a\\\": 1}\""),
            std::string::npos);
  std::unique_ptr<Module> module = ParseModule(text);
  const Instruction& compare = Find(*module, "c");
  EXPECT_EQ(compare.comparison_direction, ComparisonDirection::kGe);
  EXPECT_EQ(compare.comparison_type, ComparisonType::kTotalOrder);
  EXPECT_TRUE(Find(*module, "srt").is_stable);
  const Instruction& topk = Find(*module, "tk");
  EXPECT_EQ(topk.k, 2);
  EXPECT_FALSE(topk.largest);
  const Instruction& custom = Find(*module, "cc");
  EXPECT_EQ(custom.custom_call_target, "Sharding");
  EXPECT_TRUE(custom.custom_call_has_side_effect);
  EXPECT_EQ(custom.backend_config, "\"{\\\"a\\\": 1}\"");
  EXPECT_EQ(custom.extra_attributes(),
            (std::vector<std::pair<std::string, std::string>>{{"api_version", "API_VERSION_STATUS_RETURNING"}}));
  EXPECT_EQ(Find(*module, "cc2").backend_config, "{\"x\": {\"y\": 2}}");
  EXPECT_EQ(Find(*module, "cmp").extra_attributes(),
            (std::vector<std::pair<std::string, std::string>>{{"origin", "xyz"}}));
}

TEST(SyntaxRoundTripTest, CollectivesAndControlFlow) {
  const char* text = R"(HloModule coll, num_partitions=8

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%cond (t: (s32[], f32[8])) -> pred[] {
  %t = (s32[], f32[8]{0}) parameter(0)
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%t#0, %n), direction=LT
}

%body (t: (s32[], f32[8])) -> (s32[], f32[8]) {
  %t = (s32[], f32[8]{0}) parameter(0)
  %one = s32[] constant(1)
  %i = s32[] add(%t#0, %one)
  %v = f32[8]{0} add(%t#1, %t#1)
  ROOT %r = (s32[], f32[8]{0}) tuple(%i, %v)
}

%br0 (x: f32[8]) -> f32[8] {
  ROOT %x = f32[8]{0} parameter(0)
}

%br1 (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%x)
}

%fused (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %e = f32[8]{0} exponential(%p)
}

%sel (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}

ENTRY %main (x: f32[8], p: pred[], idx: s32[]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}
  %ar = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%sum
  %ar2 = f32[8]{0} all-reduce(%x), channel_id=2, replica_groups={{0,1,2,3},{4,5,6,7}}, constrain_layout=true, to_apply=%sum
  %ag = f32[32]{0} all-gather(%x), channel_id=3, replica_groups=mesh['a'=2,'b'=4] {'b'}, dimensions={0}, use_global_device_ids=true
  %a2a = f32[8]{0} all-to-all(%x), channel_id=4, replica_groups=[4,2]<=[2,4]T(1,0), dimensions={0}
  %rs = f32[1]{0} reduce-scatter(%x), channel_id=5, replica_groups={}, use_global_device_ids=true, dimensions={0}, to_apply=%sum
  %cp = f32[8]{0} collective-permute(%x), channel_id=6, source_target_pairs={{0,1},{1,2},{7,0}}
  %pid = u32[] partition-id()
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]{0}) tuple(%zero, %x)
  %w = (s32[], f32[8]{0}) while(%init), condition=%cond, body=%body
  %p = pred[] parameter(1)
  %c1 = f32[8]{0} conditional(%p, %x, %x), true_computation=%br0, false_computation=%br1
  %idx = s32[] parameter(2)
  %c2 = f32[8]{0} conditional(%idx, %x, %x), branch_computations={%br0, %br1}
  %f = f32[8]{0} fusion(%x), kind=kLoop, calls=%fused
  %z = f32[] constant(0)
  %xs = f32[4]{0} slice(%x), slice={[0:4]}
  %ss = f32[8]{0} select-and-scatter(%x, %xs, %z), window={size=2 stride=2}, select=%sel, scatter=%sum
  %c = f32[8]{0} call(%x), to_apply=%br1
  %t = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, /*index=5*/f32[8]{0}, f32[8]{0}) tuple(%ar, %ar2, %c, %a2a, %cp, /*index=5*/%c1, %c2)
  ROOT %out = f32[8]{0} add(%w#1, %t#6)
  %after = f32[8]{0} negate(%t#6)
}

)";
  // Already canonical: prints back unchanged (ROOT stays on a non-last instruction).
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  const Instruction& all_reduce = Find(*module, "ar");
  EXPECT_EQ(all_reduce.channel_id, 1);
  EXPECT_TRUE(all_reduce.has_replica_groups);
  EXPECT_EQ(all_reduce.replica_groups().form(), ReplicaGroups::Form::kIota);
  EXPECT_TRUE(all_reduce.use_global_device_ids);
  EXPECT_TRUE(Find(*module, "ar2").constrain_layout);
  EXPECT_EQ(Find(*module, "ar2").replica_groups().Groups(8).size(), 2u);
  EXPECT_EQ(Find(*module, "ag").replica_groups().form(), ReplicaGroups::Form::kMesh);
  EXPECT_TRUE(Find(*module, "rs").replica_groups().empty());
  EXPECT_EQ(Find(*module, "cp").source_target_pairs().back(), (SourceTargetPair{7, 0}));
  const Instruction& loop = Find(*module, "w");
  EXPECT_EQ(loop.while_condition()->name(), "cond");
  EXPECT_EQ(loop.while_body()->name(), "body");
  EXPECT_FALSE(Find(*module, "c1").conditional_uses_branch_list);
  EXPECT_TRUE(Find(*module, "c2").conditional_uses_branch_list);
  EXPECT_EQ(Find(*module, "c2").called_computations().size(), 2u);
  EXPECT_EQ(Find(*module, "f").to_apply()->name(), "fused");
  EXPECT_EQ(Find(*module, "f").extra_attributes()[0].second, "kLoop");
  const Instruction& select_and_scatter = Find(*module, "ss");
  ASSERT_EQ(select_and_scatter.called_computations().size(), 2u);
  EXPECT_EQ(select_and_scatter.called_computations()[0]->name(), "sel");
  EXPECT_EQ(select_and_scatter.called_computations()[1]->name(), "sum");
  EXPECT_EQ(module->entry()->root()->name(), "out");
}

TEST(SyntaxRoundTripTest, TupleReferencesBecomeSharedGetTupleElements) {
  const char* text = R"(HloModule refs

ENTRY %main (p: (f32[2], (s32[], f32[2]))) -> f32[2] {
  %p = (f32[2]{0}, (s32[], f32[2]{0})) parameter(0)
  %a = f32[2]{0} add(%p#0, %p#0)
  %b = f32[2]{0} multiply(%a, %p#1#1)
  %p.gte0 = f32[2]{0} negate(%b)
  ROOT %c = f32[2]{0} subtract(%p.gte0, %p#0)
}

)";
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  const Instruction& add = Find(*module, "a");
  EXPECT_EQ(add.operand(0), add.operand(1));  // one get-tuple-element per (tuple, index)
  const Instruction* gte = add.operand(0);
  EXPECT_EQ(gte->opcode(), Opcode::kGetTupleElement);
  EXPECT_TRUE(gte->printed_as_tuple_ref);
  EXPECT_EQ(gte->name(), "p.gte0.1");  // p.gte0 is taken by a written instruction
  EXPECT_EQ(module->entry()->root()->operand(1), gte);
  const Instruction* nested = Find(*module, "b").operand(1);
  EXPECT_EQ(nested->tuple_index, 1);
  EXPECT_EQ(nested->operand(0)->tuple_index, 1);
  EXPECT_EQ(nested->shape().ToString(), "f32[2]{0}");
  EXPECT_EQ(module->entry()->instruction_count(), 8);
  // Operands stay before their users.
  EXPECT_EQ(module->entry()->instructions()[1].get(), gte);
}

TEST(SyntaxRoundTripTest, CommentsRootAndEntryDefaults) {
  const char* text = R"(HloModule defaults /* a comment */

/* before a computation */ %helper (a: f32[]) -> f32[] {
  %a = f32[] parameter(0) /* trailing */
  %n = f32[] negate(/*operand*/ %a)
}

last {
  a = f32[] parameter(0)
  b = f32[] call(/*index=0*/a), to_apply=helper
}
)";
  std::unique_ptr<Module> module = ParseModule(text);
  EXPECT_EQ(module->entry()->name(), "last");        // no ENTRY: the last computation
  EXPECT_EQ(module->entry()->root()->name(), "b");   // no ROOT: the last instruction
  EXPECT_EQ(module->FindComputation("helper")->root()->name(), "n");
  EXPECT_EQ(Canonical(text), R"(HloModule defaults

%helper (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] negate(%a)
}

ENTRY %last (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %b = f32[] call(%a), to_apply=%helper
}

)");
}

TEST(SyntaxRoundTripTest, LongOperandListsGetIndexComments) {
  std::string text = "HloModule t\n\nENTRY %e (p: f32[]) -> (f32[], f32[], f32[], f32[], f32[], f32[], f32[]) {\n"
                     "  %p = f32[] parameter(0)\n"
                     "  ROOT %t = (f32[], f32[], f32[], f32[], f32[], f32[], f32[]) tuple(%p, %p, %p, %p, %p, %p, %p)\n"
                     "}\n";
  EXPECT_NE(Canonical(text).find("tuple(%p, %p, %p, %p, %p, /*index=5*/%p, %p)"), std::string::npos);
  EXPECT_NE(Canonical(text).find("(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[]) tuple("),
            std::string::npos);
}

TEST(SyntaxRoundTripTest, NamedMeshAndTupleShardings) {
  const char* text = R"(HloModule s, num_partitions=8

ENTRY %main (p: (f32[8], f32[8])) -> f32[8] {
  %p = (f32[8]{0}, f32[8]{0}) parameter(0), sharding={{replicated}, {devices=[8]<=[8]}}
  %m = f32[8]{0} get-tuple-element(%p), index=1, sharding={mesh['d'=8], [{'d'}]}
  ROOT %c = f32[8]{0} copy(%m), sharding={manual}
}

)";
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  const Sharding& tuple = *Find(*module, "p").sharding();
  ASSERT_TRUE(tuple.IsTuple());
  EXPECT_TRUE(tuple.tuple_elements()[1].IsTiled());
  EXPECT_TRUE(Find(*module, "m").sharding()->named_view().has_value());
  EXPECT_TRUE(Find(*module, "c").sharding()->IsManual());
}

TEST(SyntaxRoundTripTest, PrintInstructionAndComputation) {
  std::unique_ptr<Module> module = ParseModule(
      "HloModule m\nENTRY e {\n  a = f32[2]{0} parameter(0)\n  ROOT b = f32[2]{0} negate(a), metadata={op_name=\"n\"}\n}\n");
  EXPECT_EQ(PrintInstruction(*module->entry()->root()), "%b = f32[2]{0} negate(%a), metadata={op_name=\"n\"}");
  EXPECT_EQ(PrintComputation(*module->entry()),
            "ENTRY %e (a: f32[2]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n"
            "  ROOT %b = f32[2]{0} negate(%a), metadata={op_name=\"n\"}\n}\n");
}

TEST(SyntaxRoundTripTest, WindowsLineEndingsAndMissingFinalNewline) {
  std::string text = "HloModule m\r\n\r\nENTRY %e (p: f32[]) -> f32[] {\r\n  ROOT %p = f32[] parameter(0)\r\n}";
  EXPECT_EQ(Canonical(text), "HloModule m\n\nENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n\n");
}

}  // namespace
}  // namespace gspmd
