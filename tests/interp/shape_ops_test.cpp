// Tests of the interpreter's shape kernels (broadcast, transpose, slices, pad, ...) via HLO.
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/literal.h"
#include "runtime/interp/evaluator.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd {
namespace {

Literal Ints(ElementType type, std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Literal::FromInts(Shape(type, std::move(dims)), values);
}

// 0, 1, 2, ... in the given shape.
Literal Counting(ElementType type, std::vector<int64_t> dims) {
  Shape shape(type, std::move(dims));
  std::vector<int64_t> values(static_cast<size_t>(shape.element_count()));
  std::iota(values.begin(), values.end(), 0);
  return Literal::FromInts(shape, values);
}

Literal RunHlo(const std::string& text, std::vector<Literal> arguments) {
  std::unique_ptr<Module> module = ParseModule(text);
  return EvaluateModule(*module, arguments);
}

std::vector<int64_t> Int64s(const Literal& literal) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsInt64(i));
  return out;
}

std::string OneOp(const std::string& param_type, const std::string& out_type, const std::string& op) {
  return "HloModule m\nENTRY e {\n  p = " + param_type + " parameter(0)\n  ROOT r = " + out_type + " " + op +
         "\n}\n";
}

TEST(ShapeOpsTest, Broadcast) {
  Literal v = Ints(ElementType::kS32, {3}, {1, 2, 3});
  EXPECT_EQ(Int64s(RunHlo(OneOp("s32[3]", "s32[2,3]", "broadcast(p), dimensions={1}"), {v})),
            (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(Int64s(RunHlo(OneOp("s32[3]", "s32[3,2]", "broadcast(p), dimensions={0}"), {v})),
            (std::vector<int64_t>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(Int64s(RunHlo(OneOp("s32[]", "s32[2,2]", "broadcast(p), dimensions={}"), {Ints(ElementType::kS32, {}, {7})})),
            (std::vector<int64_t>{7, 7, 7, 7}));
  Literal m = Counting(ElementType::kS32, {2, 3});
  Literal r = RunHlo(OneOp("s32[2,3]", "s32[2,4,3]", "broadcast(p), dimensions={0,2}"), {m});
  std::vector<int64_t> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(i * 3 + k);
  EXPECT_EQ(Int64s(r), expected);
}

TEST(ShapeOpsTest, ReshapeAndBitcastAndCopy) {
  Literal m = Counting(ElementType::kF32, {2, 3});
  Literal r = RunHlo(OneOp("f32[2,3]", "f32[3,2]", "reshape(p)"), {m});
  EXPECT_EQ(r.shape().dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Int64s(r), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Int64s(RunHlo(OneOp("f32[2,3]", "f32[6]", "bitcast(p)"), {m})), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Int64s(RunHlo(OneOp("f32[2,3]", "f32[2,3]", "copy(p)"), {m})), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(ShapeOpsTest, TransposeSmall) {
  Literal m = Counting(ElementType::kS32, {2, 3, 4});
  Literal r = RunHlo(OneOp("s32[2,3,4]", "s32[4,2,3]", "transpose(p), dimensions={2,0,1}"), {m});
  std::vector<int64_t> expected;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) expected.push_back(b * 12 + c * 4 + a);
  EXPECT_EQ(Int64s(r), expected);
}

TEST(ShapeOpsTest, TransposeLargeUsesTiles) {
  const int rows = 97, cols = 131;
  Literal m = Counting(ElementType::kS32, {rows, cols});
  Literal r = RunHlo(OneOp("s32[97,131]", "s32[131,97]", "transpose(p), dimensions={1,0}"), {m});
  const int32_t* out = r.data<int32_t>();
  bool all_match = true;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) all_match = all_match && out[j * rows + i] == i * cols + j;
  EXPECT_TRUE(all_match);
  // 16-bit elements and a batch dimension.
  Literal b = Counting(ElementType::kBF16, {3, 40, 50});
  Literal t = RunHlo(OneOp("bf16[3,40,50]", "bf16[3,50,40]", "transpose(p), dimensions={0,2,1}"), {b});
  bool bf16_match = true;
  for (int n = 0; n < 3; ++n)
    for (int j = 0; j < 50; ++j)
      for (int i = 0; i < 40; ++i)
        bf16_match = bf16_match && t.GetAsDouble(n * 2000 + j * 40 + i) == b.GetAsDouble(n * 2000 + i * 50 + j);
  EXPECT_TRUE(bf16_match);
}

TEST(ShapeOpsTest, SliceWithStrides) {
  Literal m = Counting(ElementType::kS32, {4, 5});
  EXPECT_EQ(Int64s(RunHlo(OneOp("s32[4,5]", "s32[2,2]", "slice(p), slice={[1:4:2], [0:5:3]}"), {m})),
            (std::vector<int64_t>{5, 8, 15, 18}));
  EXPECT_EQ(Int64s(RunHlo(OneOp("s32[4,5]", "s32[1,3]", "slice(p), slice={[3:4], [2:5]}"), {m})),
            (std::vector<int64_t>{17, 18, 19}));
}

TEST(ShapeOpsTest, DynamicSliceClampsStartIndices) {
  std::string text = R"(HloModule m
ENTRY e {
  p = s32[8] parameter(0)
  i = s32[] parameter(1)
  ROOT r = s32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}
})";
  Literal v = Counting(ElementType::kS32, {8});
  EXPECT_EQ(Int64s(RunHlo(text, {v, Ints(ElementType::kS32, {}, {2})})), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(Int64s(RunHlo(text, {v, Ints(ElementType::kS32, {}, {6})})), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(Int64s(RunHlo(text, {v, Ints(ElementType::kS32, {}, {-3})})), (std::vector<int64_t>{0, 1, 2, 3}));
  std::string two_d = R"(HloModule m
ENTRY e {
  p = s32[3,4] parameter(0)
  i = u32[] parameter(1)
  j = u32[] parameter(2)
  ROOT r = s32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}
})";
  Literal m = Counting(ElementType::kS32, {3, 4});
  EXPECT_EQ(Int64s(RunHlo(two_d, {m, Ints(ElementType::kU32, {}, {1}), Ints(ElementType::kU32, {}, {4000000000})})),
            (std::vector<int64_t>{6, 7, 10, 11}));
}

// Each dynamic-slice clamps its own start: a slice of 4 of 5 from 2 starts at 1, and a slice
// of 3 from 0 of that is rows 1-3. XLA:CPU's jit (jax 0.10.2) folds the two into one slice
// from 2 and returns rows 2-4; its op-by-op run and numpy agree with this (oracle seed 20037,
// tests/data/oracle/nested_dynamic_slice_xla_jit).
TEST(ShapeOpsTest, NestedDynamicSlicesClampEachWhereXlaCpuJitDiffers) {
  std::string text = R"(HloModule m
ENTRY e {
  p = s32[5] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  a = s32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}
  ROOT b = s32[3] dynamic-slice(a, j), dynamic_slice_sizes={3}
})";
  Literal v = Counting(ElementType::kS32, {5});
  EXPECT_EQ(Int64s(RunHlo(text, {v, Ints(ElementType::kS32, {}, {2}), Ints(ElementType::kS32, {}, {0})})),
            (std::vector<int64_t>{1, 2, 3}));
}

// A dynamic-update-slice whose update is a slice of its own operand reads the operand as it
// was: rows 2-4 of x become rows 0-2 of x. XLA:CPU's jit (jax 0.10.2) updates in place while
// reading the overlapping rows and returns row 4 = new row 2 = x[0]; its op-by-op run and
// numpy agree with this (oracle seed 125500, tests/data/oracle/dus_of_own_slice_xla_jit).
TEST(ShapeOpsTest, DynamicUpdateSliceOfItsOwnSliceReadsTheOriginalWhereXlaCpuJitDiffers) {
  std::string text = R"(HloModule m
ENTRY e {
  p = s32[5,1] parameter(0)
  u = s32[3,1] slice(p), slice={[0:3], [0:1]}
  i = s32[] constant(2)
  j = s32[] constant(1)
  ROOT r = s32[5,1] dynamic-update-slice(p, u, i, j)
})";
  EXPECT_EQ(Int64s(RunHlo(text, {Counting(ElementType::kS32, {5, 1})})), (std::vector<int64_t>{0, 1, 0, 1, 2}));
}

TEST(ShapeOpsTest, DynamicUpdateSliceClampsStartIndices) {
  std::string text = R"(HloModule m
ENTRY e {
  p = s32[3,4] parameter(0)
  u = s32[2,2] parameter(1)
  i = s64[] parameter(2)
  j = s64[] parameter(3)
  ROOT r = s32[3,4] dynamic-update-slice(p, u, i, j)
})";
  Literal m = Ints(ElementType::kS32, {3, 4}, std::vector<int64_t>(12, 0));
  Literal u = Ints(ElementType::kS32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(Int64s(RunHlo(text, {m, u, Ints(ElementType::kS64, {}, {5}), Ints(ElementType::kS64, {}, {1})})),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0}));
  EXPECT_EQ(Int64s(RunHlo(text, {m, u, Ints(ElementType::kS64, {}, {-1}), Ints(ElementType::kS64, {}, {9})})),
            (std::vector<int64_t>{0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0}));
}

TEST(ShapeOpsTest, PadWithInteriorAndNegativeEdges) {
  std::string text = R"(HloModule m
ENTRY e {
  p = s32[3] parameter(0)
  z = s32[] constant(-1)
  ROOT r = s32[7] pad(p, z), padding=1_1_1
})";
  EXPECT_EQ(Int64s(RunHlo(text, {Ints(ElementType::kS32, {3}, {1, 2, 3})})),
            (std::vector<int64_t>{-1, 1, -1, 2, -1, 3, -1}));
  std::string crop = R"(HloModule m
ENTRY e {
  p = s32[2,4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3,3] pad(p, z), padding=0_1x-2_1
})";
  Literal m = Counting(ElementType::kS32, {2, 4});
  // dim 1: drop two elements on the left, one zero on the right.
  EXPECT_EQ(Int64s(RunHlo(crop, {m})), (std::vector<int64_t>{2, 3, 0, 6, 7, 0, 0, 0, 0}));
  std::string interior_crop = R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(9)
  ROOT r = s32[5] pad(p, z), padding=-1_-1_1
})";
  // Padded: 0 9 1 9 2 9 3 -> crop one on each side.
  EXPECT_EQ(Int64s(RunHlo(interior_crop, {Counting(ElementType::kS32, {4})})), (std::vector<int64_t>{9, 1, 9, 2, 9}));
  std::string all_cropped = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  z = f32[] constant(5)
  ROOT r = f32[1] pad(p, z), padding=-3_2
})";
  EXPECT_EQ(Int64s(RunHlo(all_cropped, {Counting(ElementType::kF32, {2})})), (std::vector<int64_t>{5}));
}

TEST(ShapeOpsTest, ConcatenateAndReverse) {
  std::string text = R"(HloModule m
ENTRY e {
  a = s32[2,2] parameter(0)
  b = s32[2,1] parameter(1)
  ROOT r = s32[2,3] concatenate(a, b), dimensions={1}
})";
  EXPECT_EQ(Int64s(RunHlo(text, {Counting(ElementType::kS32, {2, 2}), Ints(ElementType::kS32, {2, 1}, {8, 9})})),
            (std::vector<int64_t>{0, 1, 8, 2, 3, 9}));
  Literal m = Counting(ElementType::kS32, {2, 3});
  EXPECT_EQ(Int64s(RunHlo(OneOp("s32[2,3]", "s32[2,3]", "reverse(p), dimensions={1}"), {m})),
            (std::vector<int64_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(Int64s(RunHlo(OneOp("s32[2,3]", "s32[2,3]", "reverse(p), dimensions={0,1}"), {m})),
            (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
}

TEST(ShapeOpsTest, IotaOfSeveralTypes) {
  std::string s32 = "HloModule m\nENTRY e {\n  ROOT r = s32[2,3] iota(), iota_dimension=1\n}\n";
  EXPECT_EQ(Int64s(RunHlo(s32, {})), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  std::string f32 = "HloModule m\nENTRY e {\n  ROOT r = f32[3,2] iota(), iota_dimension=0\n}\n";
  EXPECT_EQ(Int64s(RunHlo(f32, {})), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  std::string bf16 = "HloModule m\nENTRY e {\n  ROOT r = bf16[300] iota(), iota_dimension=0\n}\n";
  Literal b = RunHlo(bf16, {});
  EXPECT_EQ(b.GetAsDouble(257), 256);  // 257 is not representable in bf16: ties to even
  EXPECT_EQ(b.GetAsDouble(259), 260);
  std::string u8 = "HloModule m\nENTRY e {\n  ROOT r = u8[4] iota(), iota_dimension=0\n}\n";
  EXPECT_EQ(Int64s(RunHlo(u8, {})), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(ShapeOpsTest, BadAttributesAreUserErrors) {
  EXPECT_THROW(RunHlo(OneOp("s32[4]", "s32[2]", "slice(p), slice={[3:5]}"), {Counting(ElementType::kS32, {4})}),
               UserError);
}

}  // namespace
}  // namespace gspmd
