// The verifier on invalid programs: one HLO-text case per class of bad input (the crashes,
// silent acceptances and overflows a user and a mutation fuzzer found), each a located
// "FILE:LINE:COL: error: %name: ..." that says what was found and what was expected.
#include <gtest/gtest.h>

#include <string>

#include "text/parser.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

struct BadCase {
  const char* name;
  std::string text;
  std::string expected;  // the whole message, or a prefix ending in "..." (then matched as a prefix)
};

std::string ErrorOf(const std::string& text) {
  try {
    ParseModule(text, "t.hlo");
  } catch (const UserError& error) {
    return error.what();
  }
  return "(parsed)";
}

std::string Entry(const std::string& body, const std::string& header = "HloModule m") {
  return header + "\n\nENTRY %main {\n" + body + "}\n";
}

const char* kAdd = R"(%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

)";

std::vector<BadCase> Cases() {
  return {
      {"ConcatenateResultOneRowTooMany",
       Entry("  %x = f32[8,4]{1,0} parameter(0)\n  ROOT %c = f32[17,4]{1,0} concatenate(%x, %x), dimensions={0}\n"),
       "t.hlo:5:28: error: %c: result f32[17,4] does not match f32[16,4], the shape its operands and attributes give"},
      {"DotWrongResultShape",
       Entry("  %x = f32[8,4]{1,0} parameter(0)\n  %w = f32[4,2]{1,0} parameter(1)\n"
             "  ROOT %d = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
       "t.hlo:6:27: error: %d: result f32[8,4] does not match f32[8,2], the shape its operands and attributes give"},
      {"DotContractingSizesDiffer",
       Entry("  %x = f32[8,4]{1,0} parameter(0)\n  %w = f32[5,2]{1,0} parameter(1)\n"
             "  ROOT %d = f32[8,2]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
       "t.hlo:6:27: error: %d: dot contracting dimensions have sizes 4 (lhs dimension 1 of f32[8,4]) and 5 (rhs "
       "dimension 0 of f32[5,2]), expected equal sizes"},
      {"SlicePastTheEnd",
       Entry("  %x = f32[8]{0} parameter(0)\n  ROOT %s = f32[4]{0} slice(%x), slice={[6:10]}\n"),
       "t.hlo:5:23: error: %s: slice [6:10:1] of dimension 0 does not fit f32[8]: expected 0 <= start <= limit <= 8 "
       "and stride > 0"},
      {"ReduceDimensionOutOfRange",
       std::string("HloModule m\n\n") + kAdd +
           "ENTRY %main {\n  %x = f32[8,4]{1,0} parameter(0)\n  %z = f32[] constant(0)\n"
           "  ROOT %r = f32[8]{0} reduce(%x, %z), dimensions={5}, to_apply=%add\n}\n",
       "t.hlo:12:23: error: %r: reduce dimensions: 5 is out of range for the 2 dimensions of f32[8,4] (expected 0 to 1)"},
      {"ReduceDimensionRepeated",
       std::string("HloModule m\n\n") + kAdd +
           "ENTRY %main {\n  %x = f32[8,4]{1,0} parameter(0)\n  %z = f32[] constant(0)\n"
           "  ROOT %r = f32[] reduce(%x, %z), dimensions={1,1}, to_apply=%add\n}\n",
       "t.hlo:12:19: error: %r: reduce dimensions: dimension 1 is listed twice"},
      {"BroadcastDimensionOutOfRange",
       Entry("  %x = f32[4]{0} parameter(0)\n  ROOT %b = f32[4,4]{1,0} broadcast(%x), dimensions={7}\n"),
       "t.hlo:5:27: error: %b: broadcast dimensions: 7 is out of range for the 2 dimensions of f32[4,4] (expected 0 "
       "to 1)"},
      {"BroadcastDimensionRepeated",
       Entry("  %x = f32[4,4]{1,0} parameter(0)\n  ROOT %b = f32[4,4]{1,0} broadcast(%x), dimensions={1,1}\n"),
       "t.hlo:5:27: error: %b: broadcast dimensions: dimension 1 is listed twice"},
      {"TransposeDimensionOutOfRange",
       Entry("  %x = f32[4,2]{1,0} parameter(0)\n  ROOT %t = f32[2,4]{1,0} transpose(%x), dimensions={1,9}\n"),
       "t.hlo:5:27: error: %t: transpose dimensions: 9 is out of range for the 2 dimensions of f32[4,2] (expected 0 "
       "to 1)"},
      {"WhileConditionReturnsATuple",
       std::string("HloModule m\n\n%cond (s: (s32[])) -> (pred[]) {\n  %s = (s32[]) parameter(0)\n"
                   "  %p = pred[] constant(false)\n  ROOT %t = (pred[]) tuple(%p)\n}\n\n"
                   "%body (s.1: (s32[])) -> (s32[]) {\n  ROOT %s.1 = (s32[]) parameter(0)\n}\n\n"
                   "ENTRY %main {\n  %z = s32[] constant(0)\n  %init = (s32[]) tuple(%z)\n"
                   "  ROOT %w = (s32[]) while(%init), condition=%cond, body=%body\n}\n"),
       "t.hlo:16:21: error: %w: condition %cond of while returns (pred[]), expected pred[]"},
      {"WhileBodyTakesAnotherShape",
       std::string("HloModule m\n\n%cond (s: s32[]) -> pred[] {\n  %s = s32[] parameter(0)\n"
                   "  ROOT %p = pred[] constant(false)\n}\n\n"
                   "%body (s.1: f32[2]) -> f32[2] {\n  ROOT %s.1 = f32[2]{0} parameter(0)\n}\n\n"
                   "ENTRY %main {\n  %z = s32[] constant(0)\n"
                   "  ROOT %w = s32[] while(%z), condition=%cond, body=%body\n}\n"),
       "t.hlo:14:19: error: %w: body %body of while: parameter 0 is f32[2], expected s32[] (the shape passed to it)"},
      {"ReducerTakesAnotherRank",
       std::string("HloModule m\n\n%add2 (a: f32[2], b: f32[2]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n"
                   "  %b = f32[2]{0} parameter(1)\n  ROOT %s = f32[2]{0} add(%a, %b)\n}\n\n"
                   "ENTRY %main {\n  %x = f32[8]{0} parameter(0)\n  %z = f32[] constant(0)\n"
                   "  ROOT %r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%add2\n}\n"),
       "t.hlo:12:19: error: %r: to_apply %add2 of reduce: parameter 0 is f32[2], expected a f32 scalar"},
      {"SwappedDynamicSliceOperands",
       Entry("  %x = f32[8]{0} parameter(0)\n  %i = s32[] parameter(1)\n"
             "  ROOT %d = f32[2]{0} dynamic-slice(%i, %x), dynamic_slice_sizes={2}\n"),
       "t.hlo:6:23: error: %d: dynamic-slice has 1 start indices, expected one per dimension of s32[] (0)"},
      {"ConvolutionWindowDoesNotFitKernel",
       Entry("  %x = f32[1,8,8,3]{3,2,1,0} parameter(0)\n  %k = f32[3,3,3,4]{3,2,1,0} parameter(1)\n"
             "  ROOT %c = f32[1,7,7,4]{3,2,1,0} convolution(%x, %k), window={size=2x2}, dim_labels=b01f_01io->b01f\n"),
       "t.hlo:6:35: error: %c: convolution window size 2 of spatial dimension 0 does not match the kernel's 3 "
       "(dimension 0 of f32[3,3,3,4])"},
      {"ReshapeChangesTheElementCount",
       Entry("  %x = f32[8]{0} parameter(0)\n  %s = f32[6]{0} slice(%x), slice={[0:6]}\n"
             "  ROOT %r = f32[2,4]{1,0} reshape(%s)\n"),
       "t.hlo:6:27: error: %r: reshape from f32[6] to f32[2,4] changes the element count from 6 to 8, expected the "
       "same count"},
      {"ElementCountOverflows",
       Entry("  ROOT %p = f32[4294967296,4294967296]{1,0} parameter(0)\n"),
       "t.hlo:4:45: error: %p: result f32[4294967296,4294967296] has more bytes than a 64-bit size can count"},
      {"ByteSizeOverflows",
       Entry("  ROOT %p = f32[4611686018427387904]{0} parameter(0)\n"),
       "t.hlo:4:41: error: %p: result f32[4611686018427387904] has more bytes than a 64-bit size can count"},
      {"LargestDimension",
       Entry("  %p = f32[9223372036854775807]{0} parameter(0)\n  ROOT %n = f32[9223372036854775807]{0} negate(%p)\n"),
       "t.hlo:4:36: error: %p: result f32[9223372036854775807] has more bytes than a 64-bit size can count"},
      {"CollectivePermuteDuplicateTarget",
       Entry("  %x = f32[8]{0} parameter(0)\n"
             "  ROOT %c = f32[8]{0} collective-permute(%x), channel_id=1, source_target_pairs={{0,1},{2,1}}\n",
             "HloModule m, num_partitions=4"),
       "t.hlo:5:23: error: %c: collective-permute target 1 appears in two pairs, expected each target once"},
      {"CollectivePermuteNegativeId",
       Entry("  %x = f32[8]{0} parameter(0)\n"
             "  ROOT %c = f32[8]{0} collective-permute(%x), channel_id=1, source_target_pairs={{0,-1}}\n",
             "HloModule m, num_partitions=4"),
       "t.hlo:5:23: error: %c: collective-permute pair {0,-1} names device -1, expected ids from 0 to 3"},
      {"ReplicaGroupBeyondDevices",
       std::string("HloModule m, num_partitions=2\n\n") + kAdd +
           "ENTRY %main {\n  %x = f32[8]{0} parameter(0)\n"
           "  ROOT %r = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups={{0,5}}, use_global_device_ids=true, "
           "to_apply=%add\n}\n",
       "t.hlo:11:23: error: %r: all-reduce replica_groups={{0,5}} names device 5, expected ids from 0 to 1"},
      {"UnknownAttribute",
       Entry("  %x = f32[8]{0} parameter(0)\n  ROOT %n = f32[8]{0} negate(%x), not_an_attribute=17\n"),
       "t.hlo:5:35: error: unknown attribute 'not_an_attribute' on negate: expected an attribute XLA defines (such as "
       "sharding=, metadata=, dimensions=)"},
      {"EntryComputationLayoutContradictsTheEntry",
       Entry("  ROOT %x = f32[8]{0} parameter(0)\n", "HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}"),
       "t.hlo:1:39: error: entry_computation_layout says parameter 0 is f32[4], but parameter(0) %x of main is "
       "f32[8]"},
      {"ShardingRankBeyondShape",
       Entry("  ROOT %x = f32[8]{0} parameter(0), sharding={devices=[2,2]<=[4]}\n", "HloModule m, num_partitions=4"),
       "t.hlo:4:46: error: %x: sharding tiles 2 dimensions, expected 1 (the rank of f32[8])"},
      {"NestedTupleShardingLeafCount",
       Entry("  ROOT %x = ((f32[8]{0}, f32[8]{0}), f32[8]{0}) parameter(0), sharding={{replicated}, {replicated}}\n"),
       "t.hlo:4:72: error: %x: tuple sharding has 2 element(s), expected 3 (one per leaf of ((f32[8], f32[8]), "
       "f32[8]))"},
      {"MeshAxisOfTwoToTheThirtyTwo",
       Entry("  ROOT %x = f32[8]{0} parameter(0), sharding={mesh['a'=4294967296], [{'a'}]}\n"),
       "t.hlo:4:56: error: bad sharding: expected a mesh of at most 4194304 devices"},
      {"ReplicaGroupMeshTooLarge",
       std::string("HloModule m\n\n") + kAdd +
           "ENTRY %main {\n  %x = f32[8]{0} parameter(0)\n"
           "  ROOT %r = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups=mesh['a'=9223372036854775807] {'a'}, "
           "use_global_device_ids=true, to_apply=%add\n}\n",
       "t.hlo:11:..."},
      {"InstructionWithoutShapeThatCannotBeInferred",
       Entry("  %x = f32[8]{0} parameter(0)\n  ROOT %r = reshape(%x)\n"),
       "t.hlo:5:13: error: %r: the result shape of reshape cannot be inferred: expected it written before the opcode"},
      {"WrittenOperandShapeDisagrees",
       Entry("  %x = f32[2,2]{1,0} parameter(0)\n  ROOT %a = f32[2,2]{1,0} add(f32[2,2] %x, f32[2,5] %x)\n"),
       "t.hlo:5:44: error: %a: operand 1 (%x) is written as f32[2,5], but %x is f32[2,2]"},
      {"ConstantOutOfRange",
       Entry("  ROOT %c = f16[] constant(-65520)\n"),
       "t.hlo:4:28: error: bad constant element '-65520': -65520 is out of range for f16"},
      {"S4ConstantOutOfRange",
       Entry("  ROOT %c = s4[] constant(8)\n"),
       "t.hlo:4:27: error: bad constant element '8': out of range for s4 (-8 to 7)"},
      {"RngBitGeneratorWithoutAlgorithm",
       Entry("  %s = u64[2]{0} parameter(0)\n  ROOT %r = (u64[2]{0}, u32[4]{0}) rng-bit-generator(%s)\n"),
       "t.hlo:5:36: error: %r: rng-bit-generator algorithm=(none), expected rng_default, rng_three_fry or "
       "rng_philox"},
      {"ConditionalWithVectorIndex",
       std::string("HloModule m\n\nb0 {\n  p = f32[4]{0} parameter(0)\n  ROOT c = f32[4]{0} ceil(p)\n}\n\n"
                   "ENTRY e {\n  x = f32[4]{0} parameter(0)\n  i = s32[2]{0} parameter(1)\n"
                   "  ROOT c = f32[4]{0} conditional(i, x), branch_computations={b0}\n}\n"),
       "t.hlo:11:22: error: %c: operand 0 (%i) of conditional is s32[2], expected a pred[] or s32[] branch index"},
  };
}

TEST(VerifierRulesTest, EveryInvalidClassIsALocatedError) {
  for (const BadCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::string error = ErrorOf(c.text);
    std::string expected = c.expected;
    if (expected.ends_with("...")) {
      expected.resize(expected.size() - 3);
      EXPECT_EQ(error.substr(0, expected.size()), expected) << error;
      continue;
    }
    EXPECT_EQ(error, expected);
  }
}

TEST(VerifierRulesTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep_tuple_shape = "HloModule m\n\nENTRY %main {\n  ROOT %p = " + std::string(100000, '(') + "f32[]" +
                                 std::string(100000, ')') + " parameter(0)\n}\n";
  EXPECT_NE(ErrorOf(deep_tuple_shape).find("nested too deeply"), std::string::npos) << ErrorOf(deep_tuple_shape);
  std::string deep_sharding = "HloModule m\n\nENTRY %main {\n  ROOT %p = f32[] parameter(0), sharding=" +
                              std::string(100000, '{') + "replicated" + std::string(100000, '}') + "\n}\n";
  EXPECT_NE(ErrorOf(deep_sharding).find("error:"), std::string::npos);
  std::string deep_operands = "HloModule m\n\nENTRY %main {\n  ROOT %n = ";
  for (int i = 0; i < 100000; ++i) deep_operands += "negate(";
  deep_operands += "f32[] parameter(0)";
  deep_operands += std::string(100000, ')') + "\n}\n";
  EXPECT_NE(ErrorOf(deep_operands).find("nested too deeply"), std::string::npos);
  std::string deep_literal = "HloModule m\n\nENTRY %main {\n  ROOT %c = f32[1] custom-call(), custom_call_target=\"x\", "
                             "literal=" + std::string(100000, '(') + "\n}\n";
  EXPECT_NE(ErrorOf(deep_literal).find("error:"), std::string::npos);
  // A chain of computations each calling the previous one.
  std::string calls = "HloModule m\n\n%c0 (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n\n";
  for (int i = 1; i < 400; ++i)
    calls += StrCat("%c", i, " (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %r = f32[] call(%x), to_apply=%c",
                    i - 1, "\n}\n\n");
  calls += "ENTRY %main {\n  %x = f32[] parameter(0)\n  ROOT %r = f32[] call(%x), to_apply=%c399\n}\n";
  EXPECT_NE(ErrorOf(calls).find("levels deep here, expected at most 256"), std::string::npos) << ErrorOf(calls);
}

}  // namespace
}  // namespace gspmd
