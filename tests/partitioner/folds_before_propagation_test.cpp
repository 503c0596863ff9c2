// Values written the long way or computed from values held whole: the folds before sharding propagation (slice_folds, reshape_folds, constant_folds), what the partitioner computes again whole, and what the program then moves.
#include <memory>
#include <string>

#include "partitioner/constant_folds.h"
#include "partitioner/pipeline_test_harness.h"
#include "partitioner/reshape_folds.h"
#include "partitioner/slice_folds.h"

namespace gspmd::partition_test {
namespace {

// A slice that takes its elements from one concatenated operand is a slice of that operand
// (or the operand), as XLA's simplifier folds it: oracle seed 117491, the first 3 elements of
// concatenate(y, x, y) are y's, and x, split, was gathered for 288 B where XLA moves nothing.
constexpr const char* kSliceOfConcatenate = R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8,2], y: f32[4,2]) -> (f32[3,2], f32[8,2], f32[2,2], f32[4,2], f32[8,2]) {
  %x = f32[8,2]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[4,2]{1,0} parameter(1), sharding={replicated}
  %c = f32[16,2]{1,0} concatenate(%y, %x, %y), dimensions={0}
  %first = f32[3,2]{1,0} slice(%c), slice={[0:3], [0:2]}
  %middle = f32[8,2]{1,0} slice(%c), slice={[4:12], [0:2]}
  %strided = f32[2,2]{1,0} slice(%c), slice={[12:16:2], [0:2]}
  %across = f32[4,2]{1,0} slice(%c), slice={[2:6], [0:2]}
  %all = f32[8,2]{1,0} slice(%x), slice={[0:8], [0:2]}
  ROOT %t = (f32[3,2]{1,0}, f32[8,2]{1,0}, f32[2,2]{1,0}, f32[4,2]{1,0}, f32[8,2]{1,0}) tuple(%first, %middle, %strided, %across, %all)
}
)";

TEST(FoldsBeforePropagation, ASliceWithinOneConcatenatedOperandSlicesThatOperand) {
  std::unique_ptr<Module> module = ParseModule(kSliceOfConcatenate);
  EXPECT_EQ(FoldPlainSlicesBeforePropagation(*module), 4);  // not the slice across y and x
  const Instruction* root = module->entry()->root();
  const Instruction* first = root->operand(0);
  ASSERT_EQ(first->opcode(), Opcode::kSlice);
  EXPECT_EQ(first->operand(0)->name(), "y");
  EXPECT_EQ(first->slice()[0].start, 0);
  EXPECT_EQ(first->slice()[0].limit, 3);
  EXPECT_EQ(root->operand(1)->name(), "x");  // all of x: x itself
  const Instruction* strided = root->operand(2);
  ASSERT_EQ(strided->opcode(), Opcode::kSlice);
  EXPECT_EQ(strided->operand(0)->name(), "y");  // rows 12 and 14: y's rows 0 and 2
  EXPECT_EQ(strided->slice()[0].start, 0);
  EXPECT_EQ(strided->slice()[0].limit, 3);
  EXPECT_EQ(strided->slice()[0].stride, 2);
  EXPECT_EQ(root->operand(3)->operand(0)->name(), "c");
  EXPECT_EQ(root->operand(4)->name(), "x");  // all of x
}

// Oracle seed 117233: x[0:4] of a replicated x, split for one result, and a gather from it
// for the other. The slice is x: the gather reads x where it is whole, the split result is
// cut from it locally.
TEST(FoldsBeforePropagation, ASliceOfAllOfAValueIsThatValue) {
  ExpectNoCommunicationWhenPartitioned(R"(HloModule m, num_partitions=2
ENTRY %main (x: pred[4]) -> (pred[4], pred[6]) {
  %x = pred[4]{0} parameter(0), sharding={replicated}
  %all = pred[4]{0} slice(%x), slice={[0:4]}
  %i = s32[6,1]{1,0} constant({ {3}, {2}, {2}, {3}, {1}, {1} })
  %g = pred[6]{0} gather(%all, %i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT %t = (pred[4]{0}, pred[6]{0}) tuple(%all, %g), sharding={{devices=[2]<=[2]}, {devices=[2]<=[2]}}
}
)", 2);
}

TEST(FoldsBeforePropagation, ASliceOfAConcatenatedReplicatedOperandMovesNothing) {
  ExpectNoCommunicationWhenPartitioned(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8,2], y: f32[4,2]) -> f32[3,2] {
  %x = f32[8,2]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[4,2]{1,0} parameter(1), sharding={replicated}
  %c = f32[16,2]{1,0} concatenate(%y, %x, %y), dimensions={0}
  %first = f32[3,2]{1,0} slice(%c), slice={[0:3], [0:2]}
  ROOT %n = f32[3,2]{1,0} negate(%first), sharding={replicated}
}
)", 4);
}

// Oracle seed 118081: x[2], split, broadcast to [1,24,2], flattened and reshaped to [4,6,2] for
// a dot contracting x's dim. The reshapes keep x's dim whole: one broadcast straight to
// [4,6,2], through which x's split reaches the dot (which then sums partial products).
constexpr const char* kReshapedBroadcast = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[2]) -> (f32[4,6], f32[48], f32[2,3,4]) {
  %x = f32[2]{0} parameter(0), sharding={devices=[2]<=[2]}
  %x1 = f32[1,2]{1,0} reshape(%x)
  %b = f32[1,24,2]{2,1,0} broadcast(%x1), dimensions={0,2}
  %flat = f32[48]{0} reshape(%b)
  %cube = f32[4,6,2]{2,1,0} reshape(%flat)
  %d = f32[4,6]{1,0} dot(%x, %cube), lhs_contracting_dims={0}, rhs_contracting_dims={2}
  %s = f32[] constant(3)
  %splat = f32[6,4]{1,0} broadcast(%s), dimensions={}
  %t = f32[2,3,4]{2,1,0} reshape(%splat)
  ROOT %r = (f32[4,6]{1,0}, f32[48]{0}, f32[2,3,4]{2,1,0}) tuple(%d, %flat, %t), sharding={{devices=[2,1]<=[2]}, {replicated}, {replicated}}
}
)";

TEST(FoldsBeforePropagation, ABroadcastReshapedWithItsOperandsDimsWholeIsOneBroadcast) {
  std::unique_ptr<Module> module = ParseModule(kReshapedBroadcast);
  // %cube and the splat's reshape; not %flat, which merges x's dim with a broadcast one.
  EXPECT_EQ(FoldReshapedBroadcastsBeforePropagation(*module), 2);
  const Instruction* root = module->entry()->root();
  const Instruction* cube = root->operand(0)->operand(1);
  ASSERT_EQ(cube->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(cube->shape().dims(), (std::vector<int64_t>{4, 6, 2}));
  EXPECT_EQ(cube->dimensions, (std::vector<int64_t>{2}));
  EXPECT_EQ(cube->operand(0)->shape().dims(), (std::vector<int64_t>{2}));  // x1's dim of 1 reshaped away
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kReshape);
  const Instruction* splat = root->operand(2);
  ASSERT_EQ(splat->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(splat->operand(0)->name(), "s");
}

TEST(FoldsBeforePropagation, ReshapesThatMergeTheOperandsDimsStay) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
ENTRY %main (x: f32[2,3]) -> (f32[6,4], f32[3,2,4]) {
  %x = f32[2,3]{1,0} parameter(0)
  %b = f32[2,3,4]{2,1,0} broadcast(%x), dimensions={0,1}
  %merged = f32[6,4]{1,0} reshape(%b)
  %split = f32[3,2,4]{2,1,0} reshape(%b)
  ROOT %r = (f32[6,4]{1,0}, f32[3,2,4]{2,1,0}) tuple(%merged, %split)
}
)");
  EXPECT_EQ(FoldReshapedBroadcastsBeforePropagation(*module), 0);
}

TEST(FoldsBeforePropagation, AReshapedBroadcastOfASplitOperandMovesLikeTheOperand) {
  ExpectNoCommunicationWhenPartitioned(R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[2]) -> f32[4,6,2] {
  %x = f32[2]{0} parameter(0), sharding={devices=[2]<=[2]}
  %b = f32[24,2]{1,0} broadcast(%x), dimensions={1}
  %flat = f32[48]{0} reshape(%b)
  %cube = f32[4,6,2]{2,1,0} reshape(%flat)
  ROOT %n = f32[4,6,2]{2,1,0} negate(%cube), sharding={devices=[1,1,2]<=[2]}
}
)", 2);
}

// Oracle seed 141461: the maximum of a value with itself, returned whole beside the value, is
// the value: one gather serves both results (min, and, or likewise).
TEST(FoldsBeforePropagation, IdempotentOpsOfOneValueAreThatValue) {
  Partitioned p = PartitionThroughPipeline(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[12,4]) -> (f32[12,4], f32[12,4], f32[12,4]) {
  %x = f32[12,4]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %m = f32[12,4]{1,0} maximum(%x, %x)
  %n = f32[12,4]{1,0} minimum(%m, %m)
  ROOT %t = (f32[12,4]{1,0}, f32[12,4]{1,0}, f32[12,4]{1,0}) tuple(%x, %m, %n), sharding={{replicated}, {replicated}, {replicated}}
}
)", 4);
  ExpectStructure(*p.module, p.text, {.collectives = 1, .counts = {{Opcode::kAllGather, 1}}});
  ExpectSameNumbers(p);
}

// Oracle seed 141898: a dynamic-update-slice whose update covers a dim whole starts there at 0
// whatever its start computes (it is clamped), so the sum of a split input that computed it
// (an all-reduce) is not needed; nor is one for a dynamic-slice that reads a dim whole.
TEST(FoldsBeforePropagation, AStartAlongADimTheUpdateCoversWholeIsZero) {
  ExpectNoCommunicationWhenPartitioned(std::string("HloModule m, num_partitions=4\n") + kAddS32 + R"(
ENTRY %main (x: f32[6,2,12], u: f32[2,2,12], k: s32[4]) -> (f32[6,2,12], f32[6,2,3]) {
  %x = f32[6,2,12]{2,1,0} parameter(0), sharding={replicated}
  %u = f32[2,2,12]{2,1,0} parameter(1), sharding={replicated}
  %k = s32[4]{0} parameter(2), sharding={devices=[4]<=[4]}
  %zero = s32[] constant(0)
  %sum = s32[] reduce(%k, %zero), dimensions={0}, to_apply=%add
  %four = s32[] constant(4)
  %d = f32[6,2,12]{2,1,0} dynamic-update-slice(%x, %u, %four, %sum, %zero)
  %s = f32[6,2,3]{2,1,0} dynamic-slice(%x, %sum, %sum, %four), dynamic_slice_sizes={6,2,3}
  ROOT %t = (f32[6,2,12]{2,1,0}, f32[6,2,3]{2,1,0}) tuple(%d, %s), sharding={{replicated}, {replicated}}
}
)", 4);
}

// Oracle seed 121471: a pad that crops the one column of a dot's result and adds two of
// padding keeps nothing of it; it is its pad value everywhere, and the dot goes with it.
TEST(FoldsBeforePropagation, APadKeepingNoneOfItsOperandIsItsPadValue) {
  const std::string hlo = R"(HloModule m, num_partitions=8
ENTRY %main (x: f32[4,16], y: f32[4,1]) -> (f32[21,2], f32[21,1]) {
  %x = f32[4,16]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %y = f32[4,1]{1,0} parameter(1), sharding={replicated}
  %d = f32[16,1]{1,0} dot(%x, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %v = f32[] constant(1.5)
  %none = f32[21,2]{1,0} pad(%d, %v), padding=2_3x-1_2
  %some = f32[21,1]{1,0} pad(%d, %v), padding=2_3x0_0
  ROOT %t = (f32[21,2]{1,0}, f32[21,1]{1,0}) tuple(%none, %some)
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_EQ(FoldConstantExpressionsBeforePropagation(*module), 1);
  const Instruction* none = module->entry()->root()->operand(0);
  ASSERT_EQ(none->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(none->operand(0)->name(), "v");
  EXPECT_EQ(module->entry()->root()->operand(1)->opcode(), Opcode::kPad);
}

// Oracle seed 123278: a scatter's indices computed from a constant (JAX's index wrapping). Split
// by the updates' rows, the chain was all-gathered for the operand's split, 28 B more than
// XLA, whose input has it folded. Folded, it is one replicated constant, and the step moves
// what XLA's does: the updates gathered, and the result.
TEST(FoldsBeforePropagation, ScatterIndicesComputedFromAConstantAreNotMoved) {
  Partitioned p = PartitionThroughPipeline(R"(HloModule m, num_partitions=8
%keep (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %b = f32[] parameter(1)
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}
  %c = s32[8]{0} constant({4, 5, 0, 6, 7, 1, 3, 2})
  %zero = s32[] constant(0)
  %zeros = s32[8]{0} broadcast(%zero), dimensions={}
  %lt = pred[8]{0} compare(%c, %zeros), direction=LT
  %eight = s32[] constant(8)
  %eights = s32[8]{0} broadcast(%eight), dimensions={}
  %wrapped = s32[8]{0} add(%c, %eights)
  %index = s32[8]{0} select(%lt, %wrapped, %c)
  %indices = s32[8,1]{1,0} broadcast(%index), dimensions={0}
  ROOT %s = f32[8]{0} scatter(%x, %indices, %x), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%keep, sharding={replicated}
}
)", 8);
  ExpectStructure(*p.module, p.text, {.collectives = 2, .only = Opcode::kAllGather, .comm_bytes = 56});
  ExpectSameNumbers(p);
}

// A value computed from an iota and constants (not folded: iotas stay) that a constraint
// splits and the result wants whole is computed again whole on every device, not gathered
// (oracle seed 120449: a scatter's update ids, iota + 1, gathered for 12 B; XLA none).
TEST(FoldsBeforePropagation, AValueComputedFromConstantsIsComputedAgainWholeNotGathered) {
  ExpectNoCommunicationWhenPartitioned(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8]) -> (f32[8], s32[8]) {
  %x = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %iota = s32[8]{0} iota(), iota_dimension=0
  %one = s32[] constant(1)
  %ones = s32[8]{0} broadcast(%one), dimensions={}
  %ids = s32[8]{0} add(%iota, %ones), sharding={devices=[4]<=[4]}
  %f = f32[8]{0} convert(%ids)
  %a = f32[8]{0} multiply(%x, %f)
  %twice = s32[8]{0} multiply(%ids, %ids)
  ROOT %t = (f32[8]{0}, s32[8]{0}) tuple(%a, %twice), sharding={{devices=[4]<=[4]}, {replicated}}
}
)", 4);
}

// Oracle seed 121128: a flat slice of a broadcast of a replicated value, laid out split by
// propagation for a dot over the split dim. Moving the split pieces into the slice's layout
// took 240 B of permutes; computed whole from the replicated value and cut, it moves nothing,
// and only the dot's partial sums are reduced (48 B; XLA gathers the other operand, 96 B).
TEST(FoldsBeforePropagation, MovedDataOfAReplicatedValueIsComputedWholeAndCut) {
  Partitioned p = PartitionThroughPipeline(R"(HloModule m, num_partitions=4
ENTRY %main (v: s32[28], x: s32[16,2]) -> s32[2,4] {
  %v = s32[28]{0} parameter(0), sharding={replicated}
  %x = s32[16,2]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %b = s32[10,28]{1,0} broadcast(%v), dimensions={1}, sharding={devices=[4,1]<=[4]}
  %flat = s32[280]{0} reshape(%b), sharding={devices=[4]<=[4]}
  %cut = s32[256]{0} slice(%flat), slice={[0:256]}, sharding={devices=[4]<=[4]}
  %w = s32[16,2,2,4]{3,2,1,0} reshape(%cut), sharding={devices=[4,1,1,1]<=[4]}
  ROOT %d = s32[2,4]{1,0} dot(%x, %w), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}, sharding={replicated}
}
)", 4);
  ExpectStructure(*p.module, p.text, {.collectives = 1, .only = Opcode::kAllReduce, .comm_bytes = 48});
  ExpectSameNumbers(p);
}

}  // namespace
}  // namespace gspmd::partition_test
