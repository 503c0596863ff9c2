// Regression tests in HLO text for issue 15's partitioner and interpreter classes: a while loop
// whose state holds a nested tuple (once a crash in ShardShapeOf), its propagated form printed
// and read back (tuple shardings as a flat list of leaves), reduce-window whose init is not its
// reducer's identity (halos and padding must use the identity, init applied once), scatter with
// a mixed-precision combiner, and partitioning a scatter for 1536 devices in memory that does
// not grow with devices x elements.
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partitioner/partition_test_harness.h"
#include "propagation/propagation.h"
#include "runtime/interp/evaluator.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::partition_test {
namespace {

// Propagates the annotations of `hlo`, prints and re-reads the propagated module (the round
// trip `gspmd partition --propagate-only` users rely on), then partitions it.
Partitioned PropagateAndPartition(const std::string& hlo) {
  std::unique_ptr<Module> module = ParseModule(hlo, "test.hlo");
  PropagationOptions options;
  options.num_partitions = module->num_partitions();
  PropagateShardings(*module, options);
  const std::string propagated = PrintModule(*module);
  std::unique_ptr<Module> reread = ParseModule(propagated, "propagated.hlo");
  EXPECT_EQ(PrintModule(*reread), propagated);
  return PartitionParsed(std::move(reread));
}

constexpr const char* kNestedWhile = R"(HloModule nested_while, num_partitions=4

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

%cond (s: (s32[], (f32[8,4], f32[4]))) -> pred[] {
  %s = (s32[], (f32[8,4], f32[4])) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s: (s32[], (f32[8,4], f32[4]))) -> (s32[], (f32[8,4], f32[4])) {
  %s = (s32[], (f32[8,4], f32[4])) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %inner = (f32[8,4], f32[4]) get-tuple-element(%s), index=1
  %a = f32[8,4] get-tuple-element(%inner), index=0
  %b = f32[4] get-tuple-element(%inner), index=1
  %wide = f32[8,4] broadcast(%b), dimensions={1}
  %sum = f32[8,4] add(%a, %wide)
  %zero = f32[] constant(0)
  %rows = f32[4] reduce(%sum, %zero), dimensions={0}, to_apply=%add
  %inner2 = (f32[8,4], f32[4]) tuple(%sum, %rows)
  ROOT %state = (s32[], (f32[8,4], f32[4])) tuple(%next, %inner2)
}

ENTRY %main (a: f32[8,4], b: f32[4]) -> (f32[8,4], f32[4]) {
  %a = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  %b = f32[4] parameter(1), sharding={replicated}
  %zero = s32[] constant(0)
  %inner = (f32[8,4], f32[4]) tuple(%a, %b)
  %init = (s32[], (f32[8,4], f32[4])) tuple(%zero, %inner)
  %loop = (s32[], (f32[8,4], f32[4])) while(%init), condition=%cond, body=%body
  %out = (f32[8,4], f32[4]) get-tuple-element(%loop), index=1
  %x = f32[8,4] get-tuple-element(%out), index=0
  %y = f32[4] get-tuple-element(%out), index=1
  ROOT %r = (f32[8,4], f32[4]) tuple(%x, %y)
}
)";

TEST(RobustnessPartitionTest, WhileWithNestedTupleStatePartitionsAndComputesTheInterpretersNumbers) {
  Partitioned p = PropagateAndPartition(kNestedWhile);
  EXPECT_EQ(CountOf(p, Opcode::kWhile), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(RobustnessPartitionTest, PropagatedNestedTupleShardingsPrintAsFlatLeaves) {
  std::unique_ptr<Module> module = ParseModule(kNestedWhile, "test.hlo");
  PropagationOptions options;
  options.num_partitions = 4;
  PropagateShardings(*module, options);
  const std::string text = PrintModule(*module);
  // The loop's sharding lists its three leaves (s32[], f32[8,4], f32[4]) without nesting.
  const size_t loop = text.find("%loop = ");
  ASSERT_NE(loop, std::string::npos) << text;
  const std::string line = text.substr(loop, text.find('\n', loop) - loop);
  const size_t sharding = line.find("sharding={");
  ASSERT_NE(sharding, std::string::npos) << line;
  EXPECT_EQ(line.find("{{", sharding + 10), std::string::npos) << line;  // past "sharding={"
  EXPECT_NO_THROW(ParseModule(text, "propagated.hlo")) << text;
}

// reduce-window over `n` elements split 4 ways (uneven when 4 does not divide n), with an init
// that is not the reducer's identity: the partitioned program must pad halos with the identity
// and apply init once per window, as the interpreter does.
std::string NonIdentityInitWindow(int64_t n, const std::string& reducer, double init, const std::string& pad) {
  const std::string f32n = "f32[" + std::to_string(n) + "]";
  return "HloModule window_init, num_partitions=4\n\n" + std::string(kAddF32) + kMaxF32 + "ENTRY %main (x: " + f32n +
         ") -> " + f32n + " {\n  %x = " + f32n + " parameter(0), sharding={devices=[4]<=[4]}\n  %init = f32[] constant(" +
         std::to_string(init) + "), sharding={replicated}\n  ROOT %w = " + f32n +
         " reduce-window(%x, %init), window={size=3 pad=" + pad + "}, to_apply=%" + reducer +
         ", sharding={devices=[4]<=[4]}\n}\n";
}

TEST(RobustnessPartitionTest, ReduceWindowWithAnInitThatIsNotTheIdentityMatchesTheInterpreter) {
  for (int64_t n : {16, 10, 7})
    for (const char* reducer : {"add", "max"})
      for (double init : {0.5, -2.0}) {
        SCOPED_TRACE(std::to_string(n) + " " + reducer + " init " + std::to_string(init));
        Partitioned p = Partition(NonIdentityInitWindow(n, reducer, init, "1_1"));
        ExpectSameNumbers(p);
      }
}

// Reducers whose identity the partitioner cannot know: an add it does not recognize (through a
// copy) and a variadic one (sum and max side by side), each with inits that are not identities
// and windows that reach past the ends of an unevenly split array.
TEST(RobustnessPartitionTest, ReduceWindowWithAnUnknownIdentityMatchesTheInterpreter) {
  const std::string reducers = R"(%add_via_copy (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = f32[] copy(%b)
  ROOT %s = f32[] add(%a, %c)
}

%sum_and_max (a0: f32[], a1: f32[], b0: f32[], b1: f32[]) -> (f32[], f32[]) {
  %a0 = f32[] parameter(0)
  %a1 = f32[] parameter(1)
  %b0 = f32[] parameter(2)
  %b1 = f32[] parameter(3)
  %s = f32[] add(%a0, %b0)
  %m = f32[] maximum(%a1, %b1)
  ROOT %t = (f32[], f32[]) tuple(%s, %m)
}

)";
  for (int64_t n : {16, 10, 7})
    for (const char* pad : {"1_1", "2_0", "0_2"}) {
      SCOPED_TRACE(std::to_string(n) + " pad " + pad);
      const std::string f32n = "f32[" + std::to_string(n) + "]";
      const std::string single = "HloModule unknown_identity, num_partitions=4\n\n" + reducers + "ENTRY %main (x: " +
                                 f32n + ") -> " + f32n + " {\n  %x = " + f32n +
                                 " parameter(0), sharding={devices=[4]<=[4]}\n  %init = f32[] constant(0.5), sharding={replicated}\n  ROOT %w = " +
                                 f32n + " reduce-window(%x, %init), window={size=3 pad=" + pad +
                                 "}, to_apply=%add_via_copy, sharding={devices=[4]<=[4]}\n}\n";
      ExpectSameNumbers(Partition(single));
      const std::string pair = "(" + f32n + ", " + f32n + ")";
      const std::string variadic =
          "HloModule variadic_window, num_partitions=4\n\n" + reducers + "ENTRY %main (x: " + f32n + ") -> " + pair +
          " {\n  %x = " + f32n + " parameter(0), sharding={devices=[4]<=[4]}\n  %one = f32[] constant(1), sharding={replicated}\n"
          "  %low = f32[] constant(-3), sharding={replicated}\n  ROOT %w = " + pair + " reduce-window(%x, %x, %one, %low), window={size=3 pad=" +
          pad + "}, to_apply=%sum_and_max, sharding={{devices=[4]<=[4]}, {devices=[4]<=[4]}}\n}\n";
      ExpectSameNumbers(Partition(variadic));
      // With an init the reducer gives back (0 for the add), halos are exchanged, not gathered.
      std::string idempotent = single;
      idempotent.replace(idempotent.find("constant(0.5)"), 13, "constant(0)");
      Partitioned exchanged = Partition(idempotent);
      ExpectSameNumbers(exchanged);
      EXPECT_TRUE(InstructionsWith(*exchanged.module, Opcode::kAllGather).empty()) << exchanged.text;
    }
}

TEST(RobustnessPartitionTest, CumulativeReduceWindowWithPaddingBeforeMatchesTheInterpreter) {
  // A cumulative sum along the rows (JAX's cumsum: pad=n-1_0, size n) over an uneven split.
  for (int64_t n : {7, 10}) {
    SCOPED_TRACE(n);
    const std::string f32n = "f32[" + std::to_string(n) + "]";
    const std::string hlo = "HloModule cumsum, num_partitions=8\n\n" + std::string(kAddF32) + "ENTRY %main (x: " +
                            f32n + ") -> " + f32n + " {\n  %x = " + f32n +
                            " parameter(0), sharding={devices=[8]<=[8]}\n  %zero = f32[] constant(0), "
                            "sharding={replicated}\n  ROOT %c = " + f32n + " reduce-window(%x, %zero), window={size=" +
                            std::to_string(n) + " pad=" + std::to_string(n - 1) +
                            "_0}, to_apply=%add, sharding={devices=[8]<=[8]}\n}\n";
    ExpectSameNumbers(Partition(hlo));
  }
}

// Issue 14's uneven case, as XLA's propagated.hlo gives it: a 7-row value split 8 ways by a
// constraint after a replicated input, a max over its rows and a cumulative sum along them
// (pad=6_0), both results replicated. XLA's partitioning costs 315 bytes per device for
// f32[7,9] (an all-reduce of the max, an all-gather before the cumsum); so must ours.
TEST(RobustnessPartitionTest, UnevenMaxAndCumsumOfAConstrainedValueCostNoMoreThanXla) {
  const std::string hlo = R"(HloModule uneven7, num_partitions=8

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[7,9]) -> (f32[9], f32[7,9]) {
  %x = f32[7,9] parameter(0), sharding={replicated}
  %c = f32[7,9] custom-call(%x), custom_call_target="Sharding", sharding={devices=[8,1]<=[8]}
  %ninf = f32[] constant(-inf), sharding={replicated}
  %m = f32[9] reduce(%c, %ninf), dimensions={0}, to_apply=%max, sharding={replicated}
  %zero = f32[] constant(0), sharding={replicated}
  %cs = f32[7,9] reduce-window(%c, %zero), window={size=7x1 pad=6_0x0_0}, to_apply=%add, sharding={devices=[8,1]<=[8]}
  ROOT %t = (f32[9], f32[7,9]) tuple(%m, %cs), sharding={{replicated}, {replicated}}
}
)";
  Partitioned p = Partition(hlo);
  ExpectSameNumbers(p);
  EXPECT_LE(CommBytes(p), 315.0) << p.text;
}

TEST(RobustnessPartitionTest, ScatterWithAMixedPrecisionCombinerAccumulatesInItsOwnType) {
  // The combiner widens bf16 to f32, adds and narrows back: each update is rounded to bf16
  // after every addition, which a plain bf16 add gives too; the interpreter must run the
  // computation as written rather than take its own fast path in another precision.
  const std::string hlo = R"(HloModule scatter_mixed

%add_in_f32 (a: bf16[], b: bf16[]) -> bf16[] {
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(1)
  %wa = f32[] convert(%a)
  %wb = f32[] convert(%b)
  %s = f32[] add(%wa, %wb)
  ROOT %n = bf16[] convert(%s)
}

ENTRY %main (operand: bf16[4], indices: s32[3,1], updates: bf16[3]) -> bf16[4] {
  %operand = bf16[4] parameter(0)
  %indices = s32[3,1] parameter(1)
  %updates = bf16[3] parameter(2)
  ROOT %s = bf16[4] scatter(%operand, %indices, %updates), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add_in_f32
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo, "scatter.hlo");
  std::vector<Literal> inputs;
  const std::vector<double> operand = {256, 0.5, 0, 1};
  const std::vector<int64_t> indices = {0, 0, 3};
  const std::vector<double> updates = {1, 1, 0.25};
  inputs.push_back(Literal::FromDoubles(Shape(ElementType::kBF16, {4}), operand));
  inputs.push_back(Literal::FromInts(Shape(ElementType::kS32, {3, 1}), indices));
  inputs.push_back(Literal::FromDoubles(Shape(ElementType::kBF16, {3}), updates));
  Literal result = EvaluateModule(*module, inputs);
  // 256 + 1 rounds back to 256 in bf16 (8 bits of mantissa), twice; in f32 it would be 258.
  EXPECT_EQ(result.GetAsDouble(0), 256.0);
  EXPECT_EQ(result.GetAsDouble(1), 0.5);
  EXPECT_EQ(result.GetAsDouble(2), 0.0);
  EXPECT_EQ(result.GetAsDouble(3), 1.25);
}

int64_t PeakRssMegabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

TEST(RobustnessPartitionTest, ScatterFor1536DevicesPartitionsInMemoryProportionalToTheProgram) {
  // The operand is split 3 ways and replicated 512 ways; the updates are split over all 1536
  // devices, a tile dim (3) that does not divide the updates' groups. Before the fix, the
  // partitioner built per-device index tables of devices x elements (past 24 GB).
  const std::string hlo = R"(HloModule scatter_1536, num_partitions=1536

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (operand: f32[3072,256], indices: s32[6144,1], updates: f32[6144,256]) -> f32[3072,256] {
  %operand = f32[3072,256] parameter(0), sharding={devices=[3,1,512]<=[1536] last_tile_dim_replicate}
  %indices = s32[6144,1] parameter(1), sharding={devices=[1536,1]<=[1536]}
  %updates = f32[6144,256] parameter(2), sharding={devices=[1536,1]<=[1536]}
  ROOT %s = f32[3072,256] scatter(%operand, %indices, %updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={devices=[3,1,512]<=[1536] last_tile_dim_replicate}
}
)";
  const int64_t before = PeakRssMegabytes();
  std::unique_ptr<Module> module = ParseModule(hlo, "scatter_1536.hlo");
  PartitionResult result = PartitionModule(*module);
  const std::string text = PrintModule(*result.module);
  const int64_t growth = PeakRssMegabytes() - before;
  // The global arrays hold 6 MiB; devices x elements would be ~9 GiB for the updates alone.
  EXPECT_LT(growth, 1024) << "peak RSS grew by " << growth << " MB";
  EXPECT_LT(text.size(), size_t{1} << 20);
}

}  // namespace
}  // namespace gspmd::partition_test
