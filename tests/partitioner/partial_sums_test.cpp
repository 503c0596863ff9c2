// Tests of partial sums in the partitioner: a dot whose contracting dim is split over the
// 4-device axis of a 4x2 mesh leaves a sum pending over that axis; each op linear in it passes
// the pending sum through (one all-reduce where the sum meets another pending one), and the
// same op after a non-linear one (tanh) cannot (two all-reduces). Then the places a sum is
// reduced: the smaller tensor, once for several consumers, a reduce-scatter for a split
// consumer, results and annotations; and the loop, call and tuple plumbing.
#include <string>
#include <vector>

#include "partitioner/partial_sums.h"
#include "partitioner/partition_test_harness.h"
#include "runtime/interp/kernels.h"
#include "sharding/sharding_text.h"
#include "text/parser.h"

namespace gspmd::partition_test {
namespace {

// The 4-device axis of the 4x2 mesh (devices 0,2,4,6 and 1,3,5,7) splits the contracting dims.
constexpr const char* kLhsSplit2 = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}";
constexpr const char* kRhsSplit = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}";

std::string Join(const Dims& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? "," : "") + std::to_string(dims[i]);
  return text;
}

std::string Layout(size_t rank) {
  std::string text = "{";
  for (size_t i = 0; i < rank; ++i) text += (i > 0 ? "," : "") + std::to_string(rank - 1 - i);
  return text + "}";
}

std::string F32(const Dims& dims) { return "f32[" + Join(dims) + "]" + Layout(dims.size()); }

// Parameters `lhs` and `rhs` and the dot `name` of shape `out`, contracting 64 elements split
// over the 4-device axis, replicated: a sum pending over that axis.
std::string PendingDot(const std::string& name, const Dims& out, int64_t first_parameter) {
  Dims lhs(out.begin(), out.end() - 1);
  lhs.push_back(64);
  std::string lhs_sharding = "{devices=[";
  for (size_t i = 0; i + 1 < lhs.size(); ++i) lhs_sharding += "1,";
  lhs_sharding += "4,2]<=[8] last_tile_dim_replicate}";
  const Dims rhs{64, out.back()};
  return "  %" + name + "_lhs = " + F32(lhs) + " parameter(" + std::to_string(first_parameter) +
         "), sharding=" + lhs_sharding + "\n  %" + name + "_rhs = " + F32(rhs) + " parameter(" +
         std::to_string(first_parameter + 1) + "), sharding=" + kRhsSplit + "\n  %" + name + " = " + F32(out) +
         " dot(%" + name + "_lhs, %" + name + "_rhs), lhs_contracting_dims={" + std::to_string(lhs.size() - 1) +
         "}, rhs_contracting_dims={0}, sharding={replicated}\n";
}

bool Sums(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kAllReduce || instruction.opcode() == Opcode::kReduceScatter;
}

// The places a sum is reduced: the first collective of each chain that sums (all-reduces and
// reduce-scatters). One reduction may be a chain, e.g. a reduce-scatter of a slice over part
// of the pending axes and an all-reduce over the rest, when that moves fewer bytes.
std::vector<const Instruction*> Reductions(const Module& module) {
  std::vector<const Instruction*> found;
  for (Opcode opcode : {Opcode::kAllReduce, Opcode::kReduceScatter})
    for (const Instruction* sum : InstructionsWith(module, opcode))
      if (!Sums(*sum->operand(0))) found.push_back(sum);
  return found;
}

template <int64_t kCount>
void ExpectReductions(const Partitioned& p) {
  EXPECT_EQ(static_cast<int64_t>(Reductions(*p.module).size()), kCount) << p.text;
}

// One reduction, a reduce-scatter (the consumer takes its part of the sum), and no all-reduce
// of the whole value.
void ExpectOneReduceScatter(const Partitioned& p) {
  std::vector<const Instruction*> found = Reductions(*p.module);
  ASSERT_EQ(found.size(), 1u) << p.text;
  EXPECT_EQ(found[0]->opcode(), Opcode::kReduceScatter) << p.text;
}

// Every reduction sums at most `kElements` elements per device.
template <int64_t kElements>
void ExpectOneReductionOfAtMost(const Partitioned& p) {
  std::vector<const Instruction*> found = Reductions(*p.module);
  ASSERT_EQ(found.size(), 1u) << p.text;
  EXPECT_LE(found[0]->operand(0)->shape().element_count(), kElements) << p.text;
}

const std::string kHeader = std::string("HloModule m, num_partitions=8\n\n") + kAddF32 + kMaxF32;

// One linear op: `rule` computes %r (of shape `result`) from %in (f32[8,32]), with extra
// parameters from number 4 on. %r meets a second pending sum of its shape and feeds a
// non-linear op.
struct Rule {
  std::string name;
  std::string lines;  // uses %in, defines %r
  Dims result;
};

std::string RuleProgram(const Rule& rule, bool after_tanh) {
  std::string hlo = kHeader + "ENTRY e {\n" + PendingDot("a", {8, 32}, 0) + PendingDot("big", rule.result, 2);
  std::string in = "%a";
  if (after_tanh) {
    hlo += "  %t = f32[8,32]{1,0} tanh(%a), sharding={replicated}\n";
    in = "%t";
  }
  std::string lines = rule.lines;
  for (size_t at = lines.find("%in"); at != std::string::npos; at = lines.find("%in", at)) lines.replace(at, 3, in);
  hlo += lines;
  hlo += "  %c = " + F32(rule.result) + " add(%r, %big), sharding={replicated}\n";
  hlo += "  ROOT %e = " + F32(rule.result) + " exponential(%c), sharding={replicated}\n}\n";
  return hlo;
}

const std::vector<Rule> kRules = {
    {"Copy", "  %r = f32[8,32]{1,0} copy(%in), sharding={replicated}\n", {8, 32}},
    {"Negate", "  %r = f32[8,32]{1,0} negate(%in), sharding={replicated}\n", {8, 32}},
    {"Subtract",
     "  %s = f32[8,32]{1,0} parameter(4), sharding={replicated}\n"
     "  %u = f32[8,32]{1,0} dot(%a_lhs, %a_rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n"
     "  %r = f32[8,32]{1,0} subtract(%in, %u), sharding={replicated}\n",
     {8, 32}},
    {"MultiplyByAReplicatedValue",
     "  %s = f32[8,32]{1,0} parameter(4), sharding={replicated}\n"
     "  %r = f32[8,32]{1,0} multiply(%s, %in), sharding={replicated}\n",
     {8, 32}},
    {"DivideByAReplicatedValue",
     "  %s0 = f32[8,32]{1,0} parameter(4), sharding={replicated}\n"
     "  %s = f32[8,32]{1,0} exponential(%s0), sharding={replicated}\n"
     "  %r = f32[8,32]{1,0} divide(%in, %s), sharding={replicated}\n",
     {8, 32}},
    {"Reshape", "  %r = f32[256]{0} reshape(%in), sharding={replicated}\n", {256}},
    {"Transpose", "  %r = f32[32,8]{1,0} transpose(%in), dimensions={1,0}, sharding={replicated}\n", {32, 8}},
    {"Broadcast", "  %r = f32[8,3,32]{2,1,0} broadcast(%in), dimensions={0,2}, sharding={replicated}\n", {8, 3, 32}},
    {"Slice", "  %r = f32[8,16]{1,0} slice(%in), slice={[0:8], [8:24]}, sharding={replicated}\n", {8, 16}},
    {"Reverse", "  %r = f32[8,32]{1,0} reverse(%in), dimensions={1}, sharding={replicated}\n", {8, 32}},
    {"DynamicSlice",
     "  %i = s32[] parameter(4), sharding={replicated}\n"
     "  %z = s32[] constant(0), sharding={replicated}\n"
     "  %r = f32[8,16]{1,0} dynamic-slice(%in, %z, %i), dynamic_slice_sizes={8,16}, sharding={replicated}\n",
     {8, 16}},
    {"PadWithZero",
     "  %zero = f32[] constant(0), sharding={replicated}\n"
     "  %r = f32[10,34]{1,0} pad(%in, %zero), padding=1_1x2_0, sharding={replicated}\n",
     {10, 34}},
    {"ConcatenateWithAReplicatedValue",
     "  %s = f32[8,8]{1,0} parameter(4), sharding={replicated}\n"
     "  %r = f32[8,40]{1,0} concatenate(%in, %s), dimensions={1}, sharding={replicated}\n",
     {8, 40}},
    {"SelectWithAReplicatedPredicateAndZero",
     "  %p = pred[8,32]{1,0} parameter(4), sharding={replicated}\n"
     "  %zero = f32[] constant(0), sharding={replicated}\n"
     "  %zeros = f32[8,32]{1,0} broadcast(%zero), dimensions={}, sharding={replicated}\n"
     "  %r = f32[8,32]{1,0} select(%p, %in, %zeros), sharding={replicated}\n",
     {8, 32}},
    {"DotWithAReplicatedOperand",
     "  %m = f32[32,4]{1,0} parameter(4), sharding={replicated}\n"
     "  %r = f32[8,4]{1,0} dot(%in, %m), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n",
     {8, 4}},
    {"SumOverAnUnsplitDim",
     "  %zero = f32[] constant(0), sharding={replicated}\n"
     "  %r = f32[8]{0} reduce(%in, %zero), dimensions={1}, to_apply=%add, sharding={replicated}\n",
     {8}},
    {"TupleAndGetTupleElement",
     "  %s = f32[8,8]{1,0} parameter(4), sharding={replicated}\n"
     "  %tuple = (f32[8,32]{1,0}, f32[8,8]{1,0}) tuple(%in, %s), sharding={{replicated}, {replicated}}\n"
     "  %r = f32[8,32]{1,0} get-tuple-element(%tuple), index=0, sharding={replicated}\n",
     {8, 32}},
};

std::vector<PartitionCase> RuleCases() {
  std::vector<PartitionCase> cases;
  for (const Rule& rule : kRules) {
    // Both sums pending up to %c: one all-reduce, of %c.
    cases.push_back({.name = rule.name + "PassesThePendingSumOn", .hlo = RuleProgram(rule, false),
                     .check = ExpectReductions<1>});
    // tanh needs %a whole: %a is reduced before it, %big at %c.
    cases.push_back({.name = rule.name + "AfterANonLinearOpNeedsTwoReductions", .hlo = RuleProgram(rule, true),
                     .check = ExpectReductions<2>});
  }
  return cases;
}

PARTITION_CASE_TESTS(PartialSumRuleTest, RuleCases());

std::string Program(const std::string& body) { return kHeader + "ENTRY e {\n" + body + "}\n"; }

const std::vector<PartitionCase> kPlaces = {
    // The sum is reduced after the reduce over dim 1, on 8 elements instead of 256.
    {.name = "ReducedAtTheSmallerTensor",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + R"(  %zero = f32[] constant(0), sharding={replicated}
  %s = f32[8]{0} reduce(%a, %zero), dimensions={1}, to_apply=%add, sharding={replicated}
  ROOT %e = f32[8]{0} exponential(%s), sharding={replicated}
)"),
     .check = ExpectOneReductionOfAtMost<8>},
    // Two non-linear consumers: one reduction, shared.
    {.name = "ReducedOnceForSeveralConsumers",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + R"(  %e = f32[8,32]{1,0} exponential(%a), sharding={replicated}
  %t = f32[8,32]{1,0} tanh(%a), sharding={replicated}
  ROOT %r = f32[8,32]{1,0} add(%e, %t), sharding={replicated}
)"),
     .check = ExpectReductions<1>},
    // A broadcast to a larger tensor: reduced before it.
    {.name = "ReducedBeforeABroadcastToALargerTensor",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + R"(  %b = f32[8,4,32]{2,1,0} broadcast(%a), dimensions={0,2}, sharding={replicated}
  ROOT %e = f32[8,4,32]{2,1,0} exponential(%b), sharding={replicated}
)"),
     .check = ExpectOneReductionOfAtMost<256>},
    // The product of two pending sums is not linear in them: both are reduced first.
    {.name = "ProductOfTwoPendingSumsReducesBoth",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + PendingDot("b", {8, 32}, 2) +
                    "  ROOT %r = f32[8,32]{1,0} multiply(%a, %b), sharding={replicated}\n"),
     .check = ExpectReductions<2>},
    // A dot of a pending sum with a broadcast of itself is no partial of their product: the
    // sum is reduced once, before the broadcast, and the dot runs on whole values (oracle
    // seed 114392: planned partial through the broadcast, both operands were reduced).
    {.name = "ADotOfAPendingSumWithItsOwnBroadcastReducesItOnceFirst",
     .hlo = Program(PendingDot("a", {16}, 0) + R"(  %b = f32[12,16]{1,0} broadcast(%a), dimensions={1}, sharding={replicated}
  %flat = f32[192]{0} reshape(%b), sharding={replicated}
  %r = f32[16,3,4]{2,1,0} reshape(%flat), sharding={replicated}
  ROOT %d = f32[3,4]{1,0} dot(%a, %r), lhs_contracting_dims={0}, rhs_contracting_dims={0}, sharding={replicated}
)"),
     .check = ExpectOneReductionOfAtMost<16>},
    {.name = "CompareNeedsTheWholeValue",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + PendingDot("b", {8, 32}, 2) +
                    "  ROOT %r = pred[8,32]{1,0} compare(%a, %b), direction=LT, sharding={replicated}\n"),
     .check = ExpectReductions<2>},
    // The result is whole: the sum of two pending sums is reduced once, as the result.
    {.name = "TheResultIsReducedOnce",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + PendingDot("b", {8, 32}, 2) +
                    "  ROOT %r = f32[8,32]{1,0} add(%a, %b), sharding={replicated}\n"),
     .check = ExpectReductions<1>},
    // A user's sharding annotation holds the whole value.
    {.name = "AUserAnnotationNeedsTheWholeValue",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + PendingDot("b", {8, 32}, 2) +
                    R"(  %s = f32[8,32]{1,0} custom-call(%a), custom_call_target="Sharding", sharding={replicated}
  ROOT %r = f32[8,32]{1,0} add(%s, %b), sharding={replicated}
)"),
     .check = ExpectReductions<2>},
    // A consumer split over the pending axis takes its part of the sum: reduce-scatter.
    {.name = "AConsumerSplitOverThePendingAxisGetsAReduceScatter",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + std::string("  ROOT %e = f32[8,32]{1,0} exponential(%a), sharding=") +
                    kLhsSplit2 + "\n"),
     .check = ExpectOneReduceScatter},
    // Two pending sums meeting in an add split over the pending axis: the add runs on the
    // pieces and its sum is reduce-scattered once.
    {.name = "AnAddSplitOverThePendingAxisIsReduceScatteredOnce",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + PendingDot("b", {8, 32}, 2) +
                    std::string("  %c = f32[8,32]{1,0} add(%a, %b), sharding=") + kLhsSplit2 +
                    "\n  ROOT %e = f32[8,32]{1,0} exponential(%c), sharding=" + kLhsSplit2 + "\n"),
     .check = ExpectOneReduceScatter},
    // Pending maxima: a max over a split dim, combined by maximum, reduced once with max.
    {.name = "PendingMaximaCombineByMaximum",
     .hlo = Program(std::string("  %x = f32[8,16]{1,0} parameter(0), sharding=") + kLhsSplit2 + R"(
  %y = f32[8,16]{1,0} parameter(1), sharding=)" + kLhsSplit2 + R"(
  %ninf = f32[] constant(-inf), sharding={replicated}
  %mx = f32[8]{0} reduce(%x, %ninf), dimensions={1}, to_apply=%max, sharding={replicated}
  %my = f32[8]{0} reduce(%y, %ninf), dimensions={1}, to_apply=%max, sharding={replicated}
  %m = f32[8]{0} maximum(%mx, %my), sharding={replicated}
  ROOT %e = f32[8]{0} exponential(%m), sharding={replicated}
)"),
     .check =
         [](const Partitioned& p) {
           std::vector<const Instruction*> found = Reductions(*p.module);
           ASSERT_EQ(found.size(), 1u) << p.text;
           EXPECT_EQ(RecognizeReducer(*found[0]->to_apply()), BinaryReducer::kMaximum) << p.text;
         }},
    // Pending maxima do not pass an add.
    {.name = "PendingMaximaDoNotPassAnAdd",
     .hlo = Program(std::string("  %x = f32[8,16]{1,0} parameter(0), sharding=") + kLhsSplit2 + R"(
  %y = f32[8,16]{1,0} parameter(1), sharding=)" + kLhsSplit2 + R"(
  %ninf = f32[] constant(-inf), sharding={replicated}
  %mx = f32[8]{0} reduce(%x, %ninf), dimensions={1}, to_apply=%max, sharding={replicated}
  %my = f32[8]{0} reduce(%y, %ninf), dimensions={1}, to_apply=%max, sharding={replicated}
  ROOT %m = f32[8]{0} add(%mx, %my), sharding={replicated}
)"),
     .check = ExpectReductions<2>},
    // Contracting 10 elements over 4 devices: the padding of the last shard is zeroed before
    // the dot, so the pieces hold no padding to sum; the pending sums meet at the add.
    {.name = "UnevenContractingDimsSumNoPadding",
     .hlo = Program(std::string("  %x = f32[6,10]{1,0} parameter(0), sharding=") + kLhsSplit2 + R"(
  %w = f32[10,5]{1,0} parameter(1), sharding=)" + kRhsSplit + R"(
  %v = f32[10,5]{1,0} parameter(2), sharding=)" + kRhsSplit + R"(
  %a = f32[6,5]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
  %b = f32[6,5]{1,0} dot(%x, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
  %c = f32[6,5]{1,0} add(%a, %b), sharding={replicated}
  %r = f32[5,6]{1,0} transpose(%c), dimensions={1,0}, sharding={replicated}
  ROOT %e = f32[5,6]{1,0} exponential(%r), sharding={replicated}
)"),
     .check = ExpectReductions<1>},
    // A convolution over a split input-feature dim leaves its sum pending like a dot.
    {.name = "ConvolutionOverSplitFeatures",
     .hlo = Program(R"(  %x = f32[2,8,8]{2,1,0} parameter(0), sharding={devices=[1,1,4,2]<=[8] last_tile_dim_replicate}
  %k = f32[3,8,4]{2,1,0} parameter(1), sharding={devices=[1,4,1,2]<=[8] last_tile_dim_replicate}
  %j = f32[3,8,4]{2,1,0} parameter(2), sharding={devices=[1,4,1,2]<=[8] last_tile_dim_replicate}
  %a = f32[2,8,4]{2,1,0} convolution(%x, %k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, sharding={replicated}
  %b = f32[2,8,4]{2,1,0} convolution(%x, %j), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, sharding={replicated}
  %c = f32[2,8,4]{2,1,0} add(%a, %b), sharding={replicated}
  ROOT %e = f32[2,8,4]{2,1,0} exponential(%c), sharding={replicated}
)"),
     .check = ExpectReductions<1>},
    // A narrowing convert: the sum is reduced before it, in f32, as one device adds. Reducing
    // the bf16 partials would halve the bytes but add rounded values (oracle seed 126194).
    {.name = "NarrowingConvertReducesTheWideValueFirst",
     .hlo = Program(PendingDot("a", {8, 32}, 0) + R"(  %h = bf16[8,32]{1,0} convert(%a), sharding={replicated}
  ROOT %e = bf16[8,32]{1,0} exponential(%h), sharding={replicated}
)"),
     .check =
         [](const Partitioned& p) {
           std::vector<const Instruction*> found = Reductions(*p.module);
           ASSERT_EQ(found.size(), 1u) << p.text;
           EXPECT_EQ(found[0]->shape().element_type(), ElementType::kF32) << p.text;
         }},
};

PARTITION_CASE_TESTS(PartialSumPlaceTest, kPlaces);

// A loop accumulating a pending sum per iteration keeps it pending in the loop value and
// reduces it once, after the loop.
TEST(PartialSumPlumbingTest, WhileLoopAccumulatorIsReducedOnceAfterTheLoop) {
  const std::string hlo = kHeader + std::string(R"(
%cond (cp: (s32[], f32[8,32], f32[8,16], f32[16,32])) -> pred[] {
  %cp = (s32[]{}, f32[8,32]{1,0}, f32[8,16]{1,0}, f32[16,32]{1,0}) parameter(0), sharding={{replicated}, {replicated}, )") +
                          kLhsSplit2 + ", " + kRhsSplit + R"(}
  %ci = s32[] get-tuple-element(%cp), index=0, sharding={replicated}
  %three = s32[] constant(3), sharding={replicated}
  ROOT %lt = pred[] compare(%ci, %three), direction=LT, sharding={replicated}
}

%body (bp: (s32[], f32[8,32], f32[8,16], f32[16,32])) -> (s32[], f32[8,32], f32[8,16], f32[16,32]) {
  %bp = (s32[]{}, f32[8,32]{1,0}, f32[8,16]{1,0}, f32[16,32]{1,0}) parameter(0), sharding={{replicated}, {replicated}, )" +
                          kLhsSplit2 + ", " + kRhsSplit + R"(}
  %i = s32[] get-tuple-element(%bp), index=0, sharding={replicated}
  %acc = f32[8,32]{1,0} get-tuple-element(%bp), index=1, sharding={replicated}
  %x = f32[8,16]{1,0} get-tuple-element(%bp), index=2, sharding=)" + kLhsSplit2 + R"(
  %w = f32[16,32]{1,0} get-tuple-element(%bp), index=3, sharding=)" + kRhsSplit + R"(
  %d = f32[8,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
  %next = f32[8,32]{1,0} add(%acc, %d), sharding={replicated}
  %one = s32[] constant(1), sharding={replicated}
  %i1 = s32[] add(%i, %one), sharding={replicated}
  ROOT %bt = (s32[]{}, f32[8,32]{1,0}, f32[8,16]{1,0}, f32[16,32]{1,0}) tuple(%i1, %next, %x, %w), sharding={{replicated}, {replicated}, )" +
                          kLhsSplit2 + ", " + kRhsSplit + R"(}
}

ENTRY e {
  %x0 = f32[8,16]{1,0} parameter(0), sharding=)" + kLhsSplit2 + R"(
  %w0 = f32[16,32]{1,0} parameter(1), sharding=)" + kRhsSplit + R"(
  %a0 = f32[8,32]{1,0} parameter(2), sharding={replicated}
  %zero = s32[] constant(0), sharding={replicated}
  %init = (s32[]{}, f32[8,32]{1,0}, f32[8,16]{1,0}, f32[16,32]{1,0}) tuple(%zero, %a0, %x0, %w0), sharding={{replicated}, {replicated}, )" +
                          kLhsSplit2 + ", " + kRhsSplit + R"(}
  %loop = (s32[]{}, f32[8,32]{1,0}, f32[8,16]{1,0}, f32[16,32]{1,0}) while(%init), condition=%cond, body=%body, sharding={{replicated}, {replicated}, )" +
                          kLhsSplit2 + ", " + kRhsSplit + R"(}
  %sum = f32[8,32]{1,0} get-tuple-element(%loop), index=1, sharding={replicated}
  ROOT %e = f32[8,32]{1,0} exponential(%sum), sharding={replicated}
})";
  Partitioned p = Partition(hlo);
  ExpectReductions<1>(p);
  for (const auto& computation : p.module->computations())
    if (computation.get() != p.module->entry()) EXPECT_EQ(CollectivesIn(*computation), 0) << p.text;
  ExpectSameNumbers(p);
}

// A called computation adds two pending sums it is given and returns the pending total.
TEST(PartialSumPlumbingTest, CallPassesPendingSumsInAndOut) {
  const std::string hlo = kHeader + R"(
%f (p: f32[8,32], q: f32[8,32]) -> f32[8,32] {
  %p = f32[8,32]{1,0} parameter(0), sharding={replicated}
  %q = f32[8,32]{1,0} parameter(1), sharding={replicated}
  ROOT %s = f32[8,32]{1,0} add(%p, %q), sharding={replicated}
}

ENTRY e {
)" + PendingDot("a", {8, 32}, 0) + PendingDot("b", {8, 32}, 2) +
                          R"(  %c = f32[8,32]{1,0} call(%a, %b), to_apply=%f, sharding={replicated}
  ROOT %e = f32[8,32]{1,0} exponential(%c), sharding={replicated}
})";
  Partitioned p = Partition(hlo);
  ExpectReductions<1>(p);
  ExpectSameNumbers(p);
}

// With partial sums off, every pending sum is reduced at its dot (the old behaviour).
TEST(PartialSumPlumbingTest, OffReducesAtEveryProducer) {
  std::unique_ptr<Module> module = ParseModule(RuleProgram(kRules[0], false));
  PartitionResult result = PartitionModule(*module, PartitionOptions{.partial_sums = false});
  EXPECT_EQ(Reductions(*result.module).size(), 2u);
}

// MoveAxesBetweenSubgroups remembers its answers by the sharding's contents: asking again, or
// for another reduction or another device count, must give what a first question gives.
TEST(PartialSumsSharding, MovingAxesAnswersByContentIncludingTheReduction) {
  const Sharding sharding = ParseSharding("{devices=[1,4,2]<=[8] last_tile_dim_replicate}");
  const std::vector<DeviceAxis> minor{{1, 2}};
  auto move = [&](Sharding::Reduction reduction) {
    return MoveAxesBetweenSubgroups(sharding, 2, 8, minor, Sharding::SubgroupType::kReplicated,
                                    Sharding::SubgroupType::kUnreduced, reduction);
  };
  const std::optional<Sharding> summed = move(Sharding::Reduction::kSum);
  const std::optional<Sharding> maxed = move(Sharding::Reduction::kMax);
  ASSERT_TRUE(summed && maxed);
  EXPECT_TRUE(summed->HasUnreduced());
  EXPECT_EQ(summed->partial_reduction(), Sharding::Reduction::kSum);
  EXPECT_EQ(maxed->partial_reduction(), Sharding::Reduction::kMax);
  EXPECT_EQ(move(Sharding::Reduction::kSum)->ToString(), summed->ToString());
  // Back from unreduced: the source's own reduction is part of what is asked.
  const std::optional<Sharding> back = MoveAxesBetweenSubgroups(
      *maxed, 2, 8, minor, Sharding::SubgroupType::kUnreduced, Sharding::SubgroupType::kReplicated,
      Sharding::Reduction::kSum);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->HasUnreduced());
  EXPECT_EQ(back->ToString(), sharding.ToString());
  // An axis that is not replicated there cannot move, cached or not.
  const std::vector<DeviceAxis> major{{2, 4}};
  for (int i = 0; i < 2; ++i)
    EXPECT_FALSE(MoveAxesBetweenSubgroups(sharding, 2, 8, major, Sharding::SubgroupType::kReplicated,
                                          Sharding::SubgroupType::kUnreduced, Sharding::Reduction::kSum));
}

}  // namespace
}  // namespace gspmd::partition_test
