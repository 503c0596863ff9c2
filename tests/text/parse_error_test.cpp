// One test per class of malformed HLO text, checking the exact "FILE:LINE:COL: error: ..."
// message (UserError, never a crash).
#include <gtest/gtest.h>

#include "hlo_text_test_util.h"

namespace gspmd {
namespace {

using testing::ParseError;

TEST(ParseErrorTest, TruncatedComputation) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
)hlo"),
            "t.hlo:5:1: error: expected '}' to close computation main (opened at t.hlo:3:13), but reached the end of the file");
}

TEST(ParseErrorTest, TruncatedOperandList) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} add()hlo"),
            "t.hlo:4:22: error: expected an operand name, but reached the end of the file");
}

TEST(ParseErrorTest, TruncatedAttributeValue) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0), sharding={devices=[2]<=[2])hlo"),
            "t.hlo:4:58: error: expected '}' to close the '{' opened at t.hlo:4:41, but reached the end of the file");
}

TEST(ParseErrorTest, UnknownOpcode) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = f32[2]{0} frobnicate(%a)
}
)hlo"),
            "t.hlo:5:23: error: unknown opcode 'frobnicate'");
}

TEST(ParseErrorTest, UnknownElementType) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f33[2]{0} parameter(0)
}
)hlo"),
            "t.hlo:4:8: error: unknown element type 'f33': expected one of pred, s4, s8, s16, s32, s64, u4, u8, u16, u32, u64, f16, bf16, f32, f64, c64, c128, f8e4m3fn, f8e5m2, token");
}

TEST(ParseErrorTest, NegativeDimension) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2,-3]{1,0} parameter(0)
}
)hlo"),
            "t.hlo:4:14: error: negative dimension size: expected a size >= 0");
}

TEST(ParseErrorTest, NonNumericDimension) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2,x]{1,0} parameter(0)
}
)hlo"),
            "t.hlo:4:14: error: expected a dimension size, found 'x'");
}

TEST(ParseErrorTest, LayoutNotAPermutation) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2,3]{0,0} parameter(0)
}
)hlo"),
            "t.hlo:4:16: error: bad layout: expected a permutation of the 2 dimension numbers of the shape");
}

TEST(ParseErrorTest, ShardingSyntaxErrorMapsToColumn) {
  // The location is exact; the wording after the prefix comes from the sharding parser.
  std::string error = ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0), sharding={devices=[2]<=[2] bogus}
}
)hlo");
  EXPECT_TRUE(error.starts_with("t.hlo:4:59: error: bad sharding: ")) << error;
}

// A fully unreduced leaf where a named sharding wants axes (found by fuzz_hlo_parser): a
// located error, not an exception that escapes the parser.
TEST(ParseErrorTest, UnreducedLeafInANamedShardingIsALocatedError) {
  std::string error = ParseError(R"hlo(HloModule m

ENTRY %main {
  %w = f32[32,128]{1,0} parameter(0), sharding={mesh['data'=2,'model'=4], [{unreduced_and}, {'model'}]}
}
)hlo");
  EXPECT_TRUE(error.starts_with("t.hlo:4:")) << error;
  EXPECT_NE(error.find("error: bad sharding: "), std::string::npos) << error;
  // Inside a named sharding's dims the braces hold axis names: the word is named as what it is
  // there, not replaced by the parser's placeholder for an unreduced leaf.
  EXPECT_NE(error.find("'unreduced_and' is not one"), std::string::npos) << error;
  EXPECT_EQ(error.find("unknown"), std::string::npos) << error;
}

TEST(ParseErrorTest, ShardingUnknownKeyword) {
  // The location is exact; the wording after the prefix comes from the sharding parser.
  std::string error = ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0), sharding={devicez=[2]0,1}
}
)hlo");
  EXPECT_TRUE(error.starts_with("t.hlo:4:42: error: bad sharding: ")) << error;
}

TEST(ParseErrorTest, ShardingDeviceBeyondNumPartitions) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m, num_partitions=4

ENTRY %main {
  %a = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}
}
)hlo"),
            "t.hlo:4:41: error: %a: sharding uses device 7, expected device ids from 0 to 3 (num_partitions=4)");
}

TEST(ParseErrorTest, MaximalDeviceBeyondNumPartitions) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m, num_partitions=4

ENTRY %main {
  %a = f32[8]{0} parameter(0), sharding={maximal device=4}
}
)hlo"),
            "t.hlo:4:41: error: %a: sharding uses device 4, expected device ids from 0 to 3 (num_partitions=4)");
}

TEST(ParseErrorTest, TileRankDoesNotFitShape) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[8,2]{1,0} parameter(0), sharding={devices=[8]<=[8]}
}
)hlo"),
            "t.hlo:4:45: error: %a: sharding tiles 1 dimension, expected 2 (the rank of f32[8,2])");
}

TEST(ParseErrorTest, TupleShardingLeafCount) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = (f32[8]{0}, f32[8]{0}) parameter(0), sharding={{replicated}}
}
)hlo"),
            "t.hlo:4:54: error: %a: tuple sharding has 1 element(s), expected 2 (one per leaf of (f32[8], f32[8]))");
}

TEST(ParseErrorTest, AddWithOneOperand) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = f32[2]{0} add(%a)
}
)hlo"),
            "t.hlo:5:23: error: %b: add expects 2 operands, got 1");
}

TEST(ParseErrorTest, DotWithThreeOperands) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2,2]{1,0} parameter(0)
  ROOT %b = f32[2,2]{1,0} dot(%a, %a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)hlo"),
            "t.hlo:5:27: error: %b: dot has 3 operands, expected 2 (lhs and rhs)");
}

TEST(ParseErrorTest, UndefinedOperand) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = f32[2]{0} add(%a, %c)
}
)hlo"),
            "t.hlo:5:31: error: undefined instruction 'c': expected an instruction defined earlier in computation main");
}

TEST(ParseErrorTest, UndefinedComputation) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %b = f32[] reduce(%a, %z), dimensions={0}, to_apply=%nope
}
)hlo"),
            "t.hlo:6:60: error: undefined computation 'nope': expected the name of a computation defined earlier in the module");
}

TEST(ParseErrorTest, DuplicateInstructionName) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %a = f32[2]{0} negate(%a)
}
)hlo"),
            "t.hlo:5:3: error: duplicate instruction name 'a' in computation main: expected a new name");
}

TEST(ParseErrorTest, DuplicateComputationName) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

%c {
  ROOT %a = f32[] parameter(0)
}

%c {
  ROOT %a = f32[] parameter(0)
}
)hlo"),
            "t.hlo:7:1: error: duplicate computation name 'c': expected each computation to have a unique name");
}

TEST(ParseErrorTest, DuplicateParameterNumber) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(0)
}
)hlo"),
            "t.hlo:5:28: error: duplicate parameter(0) in computation main: expected each parameter number once");
}

TEST(ParseErrorTest, MissingParameterNumber) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(1)
}
)hlo"),
            "t.hlo:3:1: error: computation main has no parameter(0): expected parameter numbers 0..1");
}

TEST(ParseErrorTest, TwoRoots) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  ROOT %a = f32[2]{0} parameter(0)
  ROOT %b = f32[2]{0} negate(%a)
}
)hlo"),
            "t.hlo:5:8: error: second ROOT in computation main: a is already the root");
}

TEST(ParseErrorTest, TwoEntryComputations) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %a {
  ROOT %p = f32[] parameter(0)
}

ENTRY %b {
  ROOT %p = f32[] parameter(0)
}
)hlo"),
            "t.hlo:7:1: error: second ENTRY computation 'b': expected only one, 'a' is already the entry");
}

TEST(ParseErrorTest, ElementwiseDimensionMismatch) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %b = f32[3]{0} parameter(1)
  ROOT %c = f32[2]{0} add(%a, %b)
}
)hlo"),
            "t.hlo:6:23: error: %c: operand 1 (%b) of add is f32[3], expected the dimensions of operand 0, f32[2]");
}

TEST(ParseErrorTest, ElementwiseTypeMismatch) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %b = s32[2]{0} parameter(1)
  ROOT %c = f32[2]{0} add(%a, %b)
}
)hlo"),
            "t.hlo:6:23: error: %c: operand 1 (%b) of add is s32[2], expected element type f32 like operand 0");
}

TEST(ParseErrorTest, GetTupleElementIndexOutOfRange) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = (f32[2]{0}) parameter(0)
  ROOT %b = f32[2]{0} get-tuple-element(%a), index=1
}
)hlo"),
            "t.hlo:5:23: error: %b: get-tuple-element index=1 is out of range for (f32[2]), expected 0 to 0");
}

TEST(ParseErrorTest, TupleReferenceToNonTuple) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = f32[2]{0} negate(%a#0)
}
)hlo"),
            "t.hlo:5:30: error: 'a#0' takes an element of a non-tuple value of shape f32[2]: expected a tuple");
}

TEST(ParseErrorTest, TupleReferenceIndexOutOfRange) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = (f32[2]{0}) parameter(0)
  ROOT %b = f32[2]{0} negate(%a#3)
}
)hlo"),
            "t.hlo:5:30: error: tuple index 3 out of range: a has 1 element");
}

TEST(ParseErrorTest, MissingRequiredAttribute) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = pred[2]{0} compare(%a, %a)
}
)hlo"),
            "t.hlo:5:24: error: compare expects attribute direction=");
}

TEST(ParseErrorTest, BadComparisonDirection) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = pred[2]{0} compare(%a, %a), direction=LTE
}
)hlo"),
            "t.hlo:5:51: error: expected a comparison direction (EQ, NE, LT, LE, GT, GE), found 'LTE'");
}

TEST(ParseErrorTest, UnknownWindowField) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %b = f32[2]{0} reduce-window(%a, %z), window={size=2 strides=1}, to_apply=%main
}
)hlo"),
            "t.hlo:6:61: error: unknown window field 'strides': expected size, stride, pad, lhs_dilate, rhs_dilate or rhs_reversal");
}

TEST(ParseErrorTest, MalformedPadding) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %b = f32[4]{0} pad(%a, %z), padding=1x1
}
)hlo"),
            "t.hlo:6:45: error: expected '_' between low and high padding (low_high[_interior]), found 'x1'");
}

TEST(ParseErrorTest, ConstantElementCount) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  ROOT %a = f32[3]{0} constant({1, 2})
}
)hlo"),
            "t.hlo:4:32: error: constant has 2 entries in dimension 0, expected 3 for shape f32[3]");
}

TEST(ParseErrorTest, BadConstantElement) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  ROOT %a = s32[2]{0} constant({1, 2.5})
}
)hlo"),
            "t.hlo:4:36: error: bad constant element '2.5': expected a s32 value");
}

TEST(ParseErrorTest, NeitherHeaderNorComputation) {
  // Without "HloModule" XLA reads bare computations (tests/data/hlo_syntax/headerless.hlo);
  // anything else is an error.
  EXPECT_EQ(ParseError("= f32[] parameter(0)\n"),
            "t.hlo:1:1: error: expected 'HloModule' at the start of the module, or a computation, found '='");
}

TEST(ParseErrorTest, SignatureResultDisagreesWithRoot) {
  // Only the result is checked, as XLA does; the parameters are the body's
  // (SyntaxRoundTripTest.SignatureParametersAreTheBodys).
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main (a: f32[2]) -> f32[3] {
  ROOT %a = f32[2]{0} parameter(0)
}
)hlo"),
            "t.hlo:3:13: error: signature of main returns f32[3], but the ROOT a is f32[2]");
}

TEST(ParseErrorTest, MissingCommaBetweenAttributes) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = f32[2]{0} negate(%a) sharding={replicated}
}
)hlo"),
            "t.hlo:5:34: error: expected ',' and another attribute, or the end of the instruction, found 'sharding'");
}

TEST(ParseErrorTest, BadReplicaGroups) {
  // The location is exact; the wording after the prefix comes from the sharding parser.
  std::string error = ParseError(R"hlo(HloModule m

%s {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %r = f32[] add(%x, %y)
}

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  ROOT %b = f32[2]{0} all-reduce(%a), replica_groups={{0,1},{2,x}}, to_apply=%s
}
)hlo");
  EXPECT_TRUE(error.starts_with("t.hlo:11:64: error: bad replica_groups: ")) << error;
}

TEST(ParseErrorTest, EmptyComputation) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
}
)hlo"),
            "t.hlo:3:1: error: computation main is empty: expected at least one instruction");
}

TEST(ParseErrorTest, NoComputation) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m, num_partitions=2
)hlo"),
            "t.hlo:2:1: error: expected a computation (such as 'ENTRY %main { ... }'), but reached the end of the file");
}

TEST(ParseErrorTest, BadNumPartitions) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m, num_partitions=two

ENTRY %main {
  ROOT %a = f32[] parameter(0)
}
)hlo"),
            "t.hlo:1:29: error: bad num_partitions=two: expected an integer from 1 to 4194304");
}

TEST(ParseErrorTest, MissingCalledComputation) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %b = f32[] reduce(%a, %z), dimensions={0}
}
)hlo"),
            "t.hlo:6:19: error: %b: reduce expects a to_apply= computation");
}

TEST(ParseErrorTest, BadDimLabels) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  %a = f32[2,2]{1,0} parameter(0)
  ROOT %b = f32[2,2]{1,0} convolution(%a, %a), dim_labels=bx_io->bf
}
)hlo"),
            "t.hlo:5:59: error: bad dim_labels 'bx_io->bf': expected the input label to name b, f and spatial dims 0..n-1 once each");
}

TEST(ParseErrorTest, UnterminatedString) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  ROOT %a = f32[] parameter(0), metadata={op_name="abc}
}
)hlo"),
            "t.hlo:4:51: error: unterminated string: expected a closing '\"'");
}

TEST(ParseErrorTest, DuplicateAttribute) {
  EXPECT_EQ(ParseError(R"hlo(HloModule m

ENTRY %main {
  ROOT %a = f32[] parameter(0), sharding={replicated}, sharding={replicated}
}
)hlo"),
            "t.hlo:4:56: error: duplicate attribute sharding");
}

TEST(ParseErrorTest, UnreadableFile) {
  try {
    ParseModuleFile("/nonexistent/dir/x.hlo");
    FAIL() << "expected a UserError";
  } catch (const UserError& error) {
    EXPECT_STREQ(error.what(), "/nonexistent/dir/x.hlo: error: cannot read the file (expected a readable HLO text file)");
  }
}

TEST(ParseErrorTest, ValidTextHasNoError) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"), "");
}

}  // namespace
}  // namespace gspmd
