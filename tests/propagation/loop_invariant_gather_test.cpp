// Loop invariants moved once before the loop: read at run-time offsets (a scan's xs), carried whole along the dims read; read whole by element-wise ops of one layout, carried in it.
// A scan's xs is gathered once before the loop instead of summing a masked slice on every trip
// (oracle seeds 40165, 20293); where the trips read little of the value, or the body uses it
// otherwise, the split stays.
#include <string>

#include <gtest/gtest.h>

#include "driver_test_util.h"

namespace gspmd {
namespace {

using propagation_test::ExpectCompleteAndAnnotationsKept;
using propagation_test::ExpectPartitionsAndComputesTheSame;
using propagation_test::Propagate;
using propagation_test::Propagated;

// A loop of `trips` trips over xs = f32[16,4] split 4 ways along its rows, reading row i (and
// `extra` in the body, which may use xs otherwise), summing the rows into an accumulator.
std::string ScanModule(int64_t trips, const std::string& extra = "", const std::string& out = "{replicated}") {
  return R"(HloModule m, num_partitions=4
%cond (p: (f32[16,4], s32[], f32[1,4])) -> pred[] {
  %p = (f32[16,4]{1,0}, s32[], f32[1,4]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=1
  %n = s32[] constant()" + std::to_string(trips) + R"()
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (q: (f32[16,4], s32[], f32[1,4])) -> (f32[16,4], s32[], f32[1,4]) {
  %q = (f32[16,4]{1,0}, s32[], f32[1,4]{1,0}) parameter(0)
  %xs = f32[16,4]{1,0} get-tuple-element(%q), index=0
  %j = s32[] get-tuple-element(%q), index=1
  %acc = f32[1,4]{1,0} get-tuple-element(%q), index=2
  %zero = s32[] constant(0)
  %row = f32[1,4]{1,0} dynamic-slice(%xs, %j, %zero), dynamic_slice_sizes={1,4}
)" + extra + R"(  %sum = f32[1,4]{1,0} add(%acc, %row)
  %one = s32[] constant(1)
  %next = s32[] add(%j, %one)
  ROOT %t = (f32[16,4]{1,0}, s32[], f32[1,4]{1,0}) tuple(%xs, %next, %sum)
}
ENTRY %main (x: f32[16,4]) -> f32[1,4] {
  %x = f32[16,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %start = s32[] constant(0)
  %init = f32[1,4]{1,0} constant({{0, 0, 0, 0}})
  %tuple = (f32[16,4]{1,0}, s32[], f32[1,4]{1,0}) tuple(%x, %start, %init)
  %loop = (f32[16,4]{1,0}, s32[], f32[1,4]{1,0}) while(%tuple), condition=%cond, body=%body
  ROOT %out = f32[1,4]{1,0} get-tuple-element(%loop), index=2, sharding=)" + out + R"(
}
)";
}

TEST(LoopInvariantGatherTest, AScanOverTheSplitRowsGathersThemOnce) {
  Propagated p = Propagate(ScanModule(16));
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("xs"), "{replicated}");
  EXPECT_EQ(p.Of("loop"), "{{replicated}, {replicated}, {replicated}}");
  EXPECT_EQ(p.Origin("xs"),
            "from %x (user) via gathered once before the loop: a loop invariant the body reads at run-time offsets");
  // One all-gather of the 256 B (192 B to each device), where a masked sum of each row moved
  // 2 x 3/4 x 16 B on each of 16 trips (384 B).
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 192);
}

// The accumulator returned split along the columns: every row read is laid out so, and xs
// takes that layout once before the loop, one all-to-all (48 B to each device), where
// gathering it moved 192 B (oracle seed 113070: 768 B against XLA's 192 B all-to-all).
TEST(LoopInvariantGatherTest, AScanWhoseReadsAreSplitOtherwiseMovesTheSplitThere) {
  Propagated p = Propagate(ScanModule(16, "", "{devices=[1,4]<=[4]}"));
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("xs"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Of("row"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 48);
}

TEST(LoopInvariantGatherTest, TwoTripsReadingTwoRowsKeepTheSplit) {
  Propagated p = Propagate(ScanModule(2));
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("xs"), "{devices=[4,1]<=[4]}");
  // Two trips' slices move less than the 192 B gather.
  EXPECT_LT(ExpectPartitionsAndComputesTheSame(p), 192);
}

TEST(LoopInvariantGatherTest, AnInvariantTheBodyAlsoUsesWholeKeepsItsSplit) {
  Propagated p = Propagate(ScanModule(16, "  %scaled = f32[16,4]{1,0} multiply(%xs, %xs)\n"
                                          "  %dead = f32[16,4]{1,0} negate(%scaled)\n"));
  EXPECT_EQ(p.Of("xs"), "{devices=[4,1]<=[4]}");
}

}  // namespace
}  // namespace gspmd

namespace gspmd {
namespace {

// Oracle seed 121294: an invariant y = f32[12,4] split along its columns, added on each of 4
// trips to a carry split along its rows. It takes the carry's layout once before the loop:
// x moves by one all-to-all (36 B to each device), where moving y on every trip added 36 B
// per trip.
TEST(LoopInvariantLayoutTest, AnInvariantReadByElementWiseOpsTakesTheirLayoutOnce) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
%cond (p: (f32[12,4], s32[], f32[12,4])) -> pred[] {
  %p = (f32[12,4]{1,0}, s32[], f32[12,4]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=1
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (q: (f32[12,4], s32[], f32[12,4])) -> (f32[12,4], s32[], f32[12,4]) {
  %q = (f32[12,4]{1,0}, s32[], f32[12,4]{1,0}) parameter(0)
  %y = f32[12,4]{1,0} get-tuple-element(%q), index=0
  %j = s32[] get-tuple-element(%q), index=1
  %c = f32[12,4]{1,0} get-tuple-element(%q), index=2
  %half = f32[] constant(0.5)
  %halves = f32[12,4]{1,0} broadcast(%half), dimensions={}
  %scaled = f32[12,4]{1,0} multiply(%c, %halves)
  %sum = f32[12,4]{1,0} add(%scaled, %y)
  %one = s32[] constant(1)
  %next = s32[] add(%j, %one)
  ROOT %t = (f32[12,4]{1,0}, s32[], f32[12,4]{1,0}) tuple(%y, %next, %sum)
}
ENTRY %main (x: f32[12,4], c0: f32[12,4]) -> f32[12,4] {
  %x = f32[12,4]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %c0 = f32[12,4]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %start = s32[] constant(0)
  %tuple = (f32[12,4]{1,0}, s32[], f32[12,4]{1,0}) tuple(%x, %start, %c0)
  %loop = (f32[12,4]{1,0}, s32[], f32[12,4]{1,0}) while(%tuple), condition=%cond, body=%body
  ROOT %out = f32[12,4]{1,0} get-tuple-element(%loop), index=2, sharding={devices=[4,1]<=[4]}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("y"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Origin("y"),
            "from %x (user) via moved once before the loop: a loop invariant its element-wise readers want in one layout");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 36);
}

}  // namespace
}  // namespace gspmd
