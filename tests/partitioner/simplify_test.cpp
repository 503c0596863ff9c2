// Tests of the exact simplification of partitioned modules: what XLA's later passes remove (select of equal values, self-compares, splats) must not cost us communication.
#include <memory>
#include <string>
#include <vector>

#include "api/pipeline.h"
#include "partitioner/partition_test_harness.h"
#include "partitioner/pipeline_test_harness.h"
#include "partitioner/slice_folds.h"
#include "partitioner/simplify.h"

namespace gspmd::partition_test {
namespace {

constexpr const char* kOrPred = R"(%or (a: pred[], b: pred[]) -> pred[] {
  %a = pred[] parameter(0)
  %b = pred[] parameter(1)
  ROOT %r = pred[] or(%a, %b)
}
)";

// jnp.where(p, v, v) lowers to a call of a select; p comes from a reduce over a sharded dim
// (an all-reduce) and a compare of a value with itself (true whatever the value): the
// result is v and the all-gather of the transposed compare is a broadcast of true.
TEST(SimplifyTest, SelectOfEqualValuesAndSelfCompareNeedNoCommunication) {
  const std::string hlo = std::string("HloModule m, num_partitions=8\n") + kOrPred + R"(
%where (p: pred[6], a: pred[6], b: pred[6]) -> pred[6] {
  %p = pred[6]{0} parameter(0)
  %a = pred[6]{0} parameter(1)
  %b = pred[6]{0} parameter(2)
  ROOT %s = pred[6]{0} select(%p, %a, %b)
}

ENTRY %main (x: s32[6,16]) -> (pred[6], pred[16,6]) {
  %x = s32[6,16]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %eq = pred[6,16]{1,0} compare(%x, %x), direction=EQ, sharding={devices=[1,8]<=[8]}
  %false = pred[] constant(false), sharding={replicated}
  %any = pred[6]{0} reduce(%eq, %false), dimensions={1}, to_apply=%or, sharding={replicated}
  %w = pred[6]{0} call(%any, %any, %any), to_apply=%where, sharding={replicated}
  %t = pred[16,6]{1,0} transpose(%eq), dimensions={1,0}, sharding={devices=[8,1]<=[8]}
  %tr = pred[16,6]{1,0} copy(%t), sharding={replicated}
  ROOT %r = (pred[6]{0}, pred[16,6]{1,0}) tuple(%w, %tr), sharding={{replicated}, {replicated}}
}
)";
  Partitioned p = Partition(hlo);
  ExpectStructure(*p.module, p.text, {.collectives = 0});
  ExpectSameNumbers(p);
}

// x - x and x ^ x of integers are zeros: a row gathered from a split matrix (a masked
// all-reduce) that is only subtracted from itself moves nothing (oracle seed 112582), and nor
// does an integer dot of such zeros over a split contracting dim (its all-reduce sums zeros;
// seed 112216).
TEST(SimplifyTest, IntegerSelfSubtractAndXorAreZeros) {
  const std::string hlo = R"(HloModule m, num_partitions=8

ENTRY %main (x: s32[8,8], i: s32[]) -> (s32[1,8], s32[1,8], s32[8,8]) {
  %x = s32[8,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %i = s32[] parameter(1), sharding={replicated}
  %zero = s32[] constant(0)
  %row = s32[1,8]{1,0} dynamic-slice(%x, %i, %zero), dynamic_slice_sizes={1,8}, sharding={replicated}
  %d = s32[1,8]{1,0} subtract(%row, %row), sharding={replicated}
  %e = s32[1,8]{1,0} xor(%row, %row), sharding={replicated}
  %z = s32[8,8]{1,0} subtract(%x, %x), sharding={devices=[8,1]<=[8]}
  %dot = s32[8,8]{1,0} dot(%z, %x), lhs_contracting_dims={0}, rhs_contracting_dims={0}, sharding={replicated}
  ROOT %r = (s32[1,8]{1,0}, s32[1,8]{1,0}, s32[8,8]{1,0}) tuple(%d, %e, %dot), sharding={{replicated}, {replicated}, {replicated}}
}
)";
  Partitioned p = Partition(hlo);
  ExpectStructure(*p.module, p.text, {.collectives = 0});
  ExpectSameNumbers(p);
}

// An integer x % 1 (or % -1) is zeros: a split input gathered for jnp.remainder by 1 moves
// nothing (oracle seed 140647, 4 B against XLA's 0). A float x % 1 keeps its fraction.
TEST(SimplifyTest, IntegerRemainderByOneIsZeros) {
  const std::string hlo = R"(HloModule m, num_partitions=4

ENTRY %main (x: s32[8], f: f32[8]) -> (s32[8], s32[8], f32[8]) {
  %x = s32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %f = f32[8]{0} parameter(1), sharding={devices=[4]<=[4]}
  %one = s32[] constant(1)
  %ones = s32[8]{0} broadcast(%one), dimensions={}
  %r = s32[8]{0} remainder(%x, %ones), sharding={replicated}
  %m = s32[] constant(-1)
  %ms = s32[8]{0} broadcast(%m), dimensions={}
  %q = s32[8]{0} remainder(%x, %ms), sharding={replicated}
  %fone = f32[] constant(1)
  %fones = f32[8]{0} broadcast(%fone), dimensions={}
  %g = f32[8]{0} remainder(%f, %fones), sharding={devices=[4]<=[4]}
  ROOT %t = (s32[8]{0}, s32[8]{0}, f32[8]{0}) tuple(%r, %q, %g), sharding={{replicated}, {replicated}, {devices=[4]<=[4]}}
}
)";
  Partitioned p = Partition(hlo);
  ExpectStructure(*p.module, p.text, {.collectives = 0});
  ExpectSameNumbers(p);
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kRemainder).size(), 1u) << p.text;  // the float one stays
}

// min(x, x), max(x, x), x & x and x | x are x: the minimum of a zero splat (x ^ x) with
// itself moves nothing (oracle seed 142255: 64 B against XLA's 0), and a float maximum of a
// split value with itself, wanted whole, gathers the value once.
TEST(SimplifyTest, IdempotentOpsOfOneValueAreThatValue) {
  const std::string hlo = R"(HloModule m, num_partitions=2

ENTRY %main (x: s32[2,8,2], f: f32[8]) -> (s32[8,2,2], f32[8], pred[8]) {
  %x = s32[2,8,2]{2,1,0} parameter(0), sharding={devices=[2,1,1]<=[2]}
  %f = f32[8]{0} parameter(1), sharding={devices=[2]<=[2]}
  %t = s32[8,2,2]{2,1,0} transpose(%x), dimensions={1,0,2}
  %z = s32[8,2,2]{2,1,0} xor(%t, %t)
  %m = s32[8,2,2]{2,1,0} minimum(%z, %z), sharding={replicated}
  %g = f32[8]{0} maximum(%f, %f), sharding={replicated}
  %p = pred[8]{0} compare(%f, %f), direction=EQ
  %a = pred[8]{0} and(%p, %p), sharding={devices=[2]<=[2]}
  %o = pred[8]{0} or(%a, %a), sharding={devices=[2]<=[2]}
  ROOT %r = (s32[8,2,2]{2,1,0}, f32[8]{0}, pred[8]{0}) tuple(%m, %g, %o), sharding={{replicated}, {replicated}, {devices=[2]<=[2]}}
}
)";
  Partitioned p = Partition(hlo);
  ExpectStructure(*p.module, p.text, {.collectives = 1});  // the gather of f
  ExpectSameNumbers(p);
  EXPECT_TRUE(InstructionsWith(*p.module, Opcode::kMinimum).empty()) << p.text;
  EXPECT_TRUE(InstructionsWith(*p.module, Opcode::kMaximum).empty()) << p.text;
  EXPECT_TRUE(InstructionsWith(*p.module, Opcode::kOr).empty()) << p.text;
}

// A dynamic-update-slice whose update is the whole operand is the update: the reduce that
// made the operand (and its all-reduce) is dead.
TEST(SimplifyTest, WholeDynamicUpdateSliceDropsTheOperand) {
  const std::string hlo = std::string("HloModule m, num_partitions=4\n") + kAddF32 + R"(
ENTRY %main (x: f32[8,4], y: f32[4], i: s32[]) -> f32[4] {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[4]{0} parameter(1), sharding={replicated}
  %i = s32[] parameter(2), sharding={replicated}
  %zero = f32[] constant(0), sharding={replicated}
  %sum = f32[4]{0} reduce(%x, %zero), dimensions={0}, to_apply=%add, sharding={replicated}
  %d = f32[4]{0} dynamic-update-slice(%sum, %y, %i), sharding={replicated}
  ROOT %n = f32[4]{0} negate(%d), sharding={replicated}
}
)";
  Partitioned p = Partition(hlo);
  ExpectStructure(*p.module, p.text, {.collectives = 0});
  ExpectSameNumbers(p);
}

// Splats (broadcasts of one constant) through data movement, collectives with an idempotent
// reducer and reduces fold to one splat; a sum of a splat and a float self-compare stay.
TEST(SimplifyTest, SplatsFoldThroughCollectivesButSumsAndFloatComparesStay) {
  const std::string hlo = std::string("HloModule m, num_partitions=4\n") + kOrPred + kSum + R"(
ENTRY %main_spmd (x: s32[2,4], f: f32[4]) -> (pred[], pred[8,4], f32[4], pred[4], s32[2,4]) {
  %x = s32[2,4]{1,0} parameter(0)
  %f = f32[4]{0} parameter(1)
  %lt = pred[2,4]{1,0} compare(%x, %x), direction=LT
  %ag = pred[8,4]{1,0} all-gather(%lt), channel_id=1, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true
  %ar = pred[8,4]{1,0} all-reduce(%ag), channel_id=2, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=%or
  %true = pred[] constant(true)
  %any = pred[] reduce(%ar, %true), dimensions={0,1}, to_apply=%or
  %one = f32[] constant(1)
  %ones = f32[4]{0} broadcast(%one), dimensions={}
  %sum = f32[4]{0} all-reduce(%ones), channel_id=3, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=%sum
  %feq = pred[4]{0} compare(%f, %f), direction=EQ
  %c = s32[] constant(3)
  %b = s32[4,2]{1,0} broadcast(%c), dimensions={}
  %t = s32[2,4]{1,0} transpose(%b), dimensions={1,0}
  ROOT %r = (pred[], pred[8,4]{1,0}, f32[4]{0}, pred[4]{0}, s32[2,4]{1,0}) tuple(%any, %ar, %sum, %feq, %t)
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_GT(SimplifyPartitionedModule(*module), 0);
  for (const auto& computation : module->computations()) computation->RemoveDeadInstructions();
  const std::string text = PrintModule(*module);
  ExpectStructure(*module, text,
                  {.counts = {{Opcode::kAllGather, 0},
                              {Opcode::kAllReduce, 1},
                              {Opcode::kCompare, 1},
                              {Opcode::kTranspose, 0},
                              {Opcode::kReduce, 0}}});
  const Instruction* root = module->entry()->root();
  // any = or(false..., true) = true; the all-gathered compare is false everywhere.
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kConstant) << text;
  EXPECT_EQ(root->operand(0)->literal()->GetAsInt64(0), 1) << text;
  ASSERT_EQ(root->operand(1)->opcode(), Opcode::kBroadcast) << text;
  EXPECT_EQ(root->operand(1)->operand(0)->literal()->GetAsInt64(0), 0) << text;
  EXPECT_EQ(root->operand(2)->opcode(), Opcode::kAllReduce) << text;
  ASSERT_EQ(root->operand(4)->opcode(), Opcode::kBroadcast) << text;
  EXPECT_EQ(root->operand(4)->operand(0)->literal()->GetAsInt64(0), 3) << text;
}

// The entry root keeps its sharding when a simplification replaces it.
TEST(SimplifyTest, ReplacedRootKeepsItsSharding) {
  const std::string hlo = R"(HloModule m, num_partitions=2
ENTRY %main_spmd (p: pred[4], x: f32[4]) -> f32[4] {
  %p = pred[4]{0} parameter(0), sharding={replicated}
  %x = f32[4]{0} parameter(1), sharding={replicated}
  %n = f32[4]{0} negate(%x)
  ROOT %s = f32[4]{0} select(%p, %n, %n), sharding={replicated}
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_EQ(SimplifyPartitionedModule(*module), 1);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->opcode(), Opcode::kNegate);
  ASSERT_TRUE(root->sharding().has_value());
  EXPECT_EQ(root->sharding()->ToString(), "{replicated}");
}

// A root that becomes a parameter (jnp.where(p, x, x) of an input) is a copy of it with the
// root's sharding: the parameter keeps its own.
TEST(SimplifyTest, RootBecomingAParameterIsACopy) {
  const std::string hlo = R"(HloModule m, num_partitions=2
%where (p: pred[4], a: f32[4], b: f32[4]) -> f32[4] {
  %p = pred[4]{0} parameter(0)
  %a = f32[4]{0} parameter(1)
  %b = f32[4]{0} parameter(2)
  ROOT %s = f32[4]{0} select(%p, %a, %b)
}

ENTRY %main_spmd (p: pred[4], x: f32[4]) -> f32[4] {
  %p = pred[4]{0} parameter(0), sharding={replicated}
  %x = f32[4]{0} parameter(1), sharding={devices=[2]<=[2]}
  ROOT %w = f32[4]{0} call(%p, %x, %x), to_apply=%where, sharding={devices=[2]<=[2]}
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_EQ(SimplifyPartitionedModule(*module), 1);
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kCopy) << PrintModule(*module);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
  ASSERT_TRUE(root->sharding().has_value());
  EXPECT_EQ(root->sharding()->ToString(), "{devices=[2]<=[2]}");
}

// Sums of integer zeros (a count of a never-true compare) are zero; a sum of float ones is not
// folded, nor a float zero summed onto a nonzero init.
TEST(SimplifyTest, SumsOfZerosFold) {
  const std::string hlo = std::string("HloModule m, num_partitions=4\n") + kSum + R"(
%sum_s32 (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %s = s32[] add(%a, %b)
}

ENTRY %main_spmd (x: s32[2,4]) -> (s32[], f32[], f32[]) {
  %x = s32[2,4]{1,0} parameter(0)
  %gt = pred[2,4]{1,0} compare(%x, %x), direction=GT
  %n = s32[2,4]{1,0} convert(%gt)
  %zero = s32[] constant(0)
  %count = s32[] reduce(%n, %zero), dimensions={0,1}, to_apply=%sum_s32
  %total = s32[] all-reduce(%count), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=%sum_s32
  %fz = f32[] constant(0)
  %f1 = f32[] constant(1)
  %zeros = f32[8]{0} broadcast(%fz), dimensions={}
  %ones = f32[8]{0} broadcast(%f1), dimensions={}
  %s1 = f32[] reduce(%ones, %fz), dimensions={0}, to_apply=%sum
  %s2 = f32[] reduce(%zeros, %f1), dimensions={0}, to_apply=%sum
  ROOT %r = (s32[], f32[], f32[]) tuple(%total, %s1, %s2)
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  SimplifyPartitionedModule(*module);
  for (const auto& computation : module->computations()) computation->RemoveDeadInstructions();
  const std::string text = PrintModule(*module);
  ExpectStructure(*module, text, {.counts = {{Opcode::kAllReduce, 0}, {Opcode::kReduce, 2}, {Opcode::kCompare, 0}}});
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kConstant) << text;
  EXPECT_EQ(root->operand(0)->literal()->GetAsInt64(0), 0) << text;
}

// Calls are inlined after partitioning (as XLA inlines them before): a value two calls of one
// computation both gather is gathered once, and a root call keeps the output's sharding.
TEST(SimplifyTest, InlinedCallsShareTheirCollectives) {
  const std::string hlo = R"(HloModule m, num_partitions=4
%f (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %c = f32[8]{0} copy(%p), sharding={replicated}
  ROOT %n = f32[8]{0} negate(%c), sharding={replicated}
}

ENTRY %main (x: f32[8]) -> (f32[8], f32[8]) {
  %x = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %a = f32[8]{0} call(%x), to_apply=%f, sharding={replicated}
  %b = f32[8]{0} call(%x), to_apply=%f, sharding={replicated}
  ROOT %t = (f32[8]{0}, f32[8]{0}) tuple(%a, %b), sharding={{replicated}, {replicated}}
}
)";
  Partitioned p = Partition(hlo);
  ExpectStructure(*p.module, p.text, {.collectives = 1, .counts = {{Opcode::kCall, 0}, {Opcode::kNegate, 1}}});
  ExpectSameNumbers(p);

  std::unique_ptr<Module> root_call = ParseModule(R"(HloModule m, num_partitions=2
%g (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p)
}

ENTRY %main_spmd (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0), sharding={replicated}
  ROOT %r = f32[4]{0} call(%x), to_apply=%g, sharding={replicated}
}
)");
  EXPECT_EQ(InlinePartitionedCalls(*root_call), 1);
  const Instruction* root = root_call->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kCopy) << PrintModule(*root_call);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kNegate);
  ASSERT_TRUE(root->sharding().has_value());
  EXPECT_EQ(root->sharding()->ToString(), "{replicated}");
  EXPECT_EQ(root_call->computations().size(), 1u);
}

// Dead code is removed before propagation: a sharding annotated on an unused value must not
// make a live value sharded (and gathered back for its replicated result).
// JAX's helpers (`_take`, `remainder`, ...) are calls: inlined before propagation, as XLA
// does, so a sharded operand's sharding flows through them; a call holding an annotation, or
// one with frontend attributes (a manual region's body), stays.
TEST(SimplifyTest, PureHelperCallsAreInlinedBeforePropagation) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2
%helper (p: f32[8,4]) -> f32[8,4] {
  %p = f32[8,4]{1,0} parameter(0)
  ROOT %n = f32[8,4]{1,0} negate(%p)
}

%annotated (q: f32[8,4]) -> f32[8,4] {
  %q = f32[8,4]{1,0} parameter(0)
  ROOT %c = f32[8,4]{1,0} custom-call(%q), custom_call_target="Sharding", sharding={replicated}
}

%body (r: f32[8,4]) -> f32[8,4] {
  %r = f32[8,4]{1,0} parameter(0)
  ROOT %e = f32[8,4]{1,0} exponential(%r)
}

ENTRY %main (x: f32[8,4]) -> (f32[8,4], f32[8,4], f32[8,4]) {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %h = f32[8,4]{1,0} call(%x), to_apply=%helper
  %a = f32[8,4]{1,0} call(%h), to_apply=%annotated
  %b = f32[8,4]{1,0} call(%h), to_apply=%body, frontend_attributes={xla.sdy.manual_axes="x"}
  ROOT %t = (f32[8,4]{1,0}, f32[8,4]{1,0}, f32[8,4]{1,0}) tuple(%h, %a, %b)
}
)");
  EXPECT_EQ(InlineCallsBeforePropagation(*module), 1);
  int64_t calls = 0;
  for (const auto& instruction : module->entry()->instructions()) calls += instruction->opcode() == Opcode::kCall;
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(module->entry()->root()->operand(0)->opcode(), Opcode::kNegate);

  // Partitioned, the negate is split as x is: nothing is communicated for it.
  std::unique_ptr<Module> helper = ParseModule(R"(HloModule m, num_partitions=2
%helper (p: f32[8,4]) -> f32[8,4] {
  %p = f32[8,4]{1,0} parameter(0)
  ROOT %n = f32[8,4]{1,0} negate(%p)
}

ENTRY %main (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %h = f32[8,4]{1,0} call(%x), to_apply=%helper
  ROOT %r = f32[8,4]{1,0} abs(%h), sharding={devices=[2,1]<=[2]}
}
)");
  api::CompileOptions options;
  options.requested_devices = 2;
  api::CompiledPartition compiled = api::PartitionGlobal(*helper, "helper.hlo", options);
  const Module& partitioned = *compiled.partitioned.module;
  ExpectStructure(partitioned, PrintModule(partitioned), {.collectives = 0});
}

// A reshape round trip ([8,8] -> [64] -> [8,8], as jnp.ravel and a reshape back write it) is
// folded before propagation: the flat middle shape cannot keep the columns' sharding, and
// propagated through it cost an all-gather of the matrix and a slice (oracle seed 40005: 192 B,
// XLA 0). A reshape carrying a sharding stays.
TEST(SimplifyTest, ReshapeRoundTripsAreFoldedBeforePropagation) {
  const std::string hlo = R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8]) -> (f32[8,8], f32[64]) {
  %x = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %b = f32[8,8]{1,0} broadcast(%x), dimensions={1}
  %flat = f32[64]{0} reshape(%b)
  %back = f32[8,8]{1,0} reshape(%flat)
  %kept = f32[64]{0} reshape(%b), sharding={devices=[4]<=[4]}
  %n = f32[8,8]{1,0} negate(%back)
  ROOT %t = (f32[8,8]{1,0}, f32[64]{0}) tuple(%n, %kept), sharding={{devices=[1,4]<=[4]}, {devices=[4]<=[4]}}
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_EQ(FoldReshapesBeforePropagation(*module), 1);  // %back is %b
  const Instruction* negate = module->entry()->root()->operand(0);
  EXPECT_EQ(negate->operand(0)->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(module->entry()->root()->operand(1)->opcode(), Opcode::kReshape);  // annotated: kept

  // Partitioned, the round trip moves nothing: the columns stay split as x is.
  std::unique_ptr<Module> global = ParseModule(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8]) -> f32[8,8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %b = f32[8,8]{1,0} broadcast(%x), dimensions={1}
  %flat = f32[64]{0} reshape(%b)
  %back = f32[8,8]{1,0} reshape(%flat)
  ROOT %n = f32[8,8]{1,0} negate(%back), sharding={devices=[1,4]<=[4]}
}
)");
  api::CompileOptions options;
  options.requested_devices = 4;
  api::CompiledPartition compiled = api::PartitionGlobal(*global, "reshapes.hlo", options);
  const Module& partitioned = *compiled.partitioned.module;
  ExpectStructure(partitioned, PrintModule(partitioned), {.collectives = 0});
}

// jnp.argmin over a dim of one element is index 0 whatever the values (XLA's simplifier folds
// it): the iota along that dim is zeros, as is the init, and the reducer only chooses between
// them, so the values (and the all-reduce that summed them) are dead.
TEST(SimplifyTest, ArgminOverOneElementIsZeroAndItsValuesAreDead) {
  const std::string hlo = R"(HloModule m, num_partitions=2
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

%argmin (v: f32[], i: s32[], w: f32[], j: s32[]) -> (f32[], s32[]) {
  %v = f32[] parameter(0)
  %i = s32[] parameter(1)
  %w = f32[] parameter(2)
  %j = s32[] parameter(3)
  %lt = pred[] compare(%v, %w), direction=LT
  %sv = f32[] select(%lt, %v, %w)
  %si = s32[] select(%lt, %i, %j)
  ROOT %t = (f32[], s32[]) tuple(%sv, %si)
}

ENTRY %main (x: f32[4,8], y: f32[4,8]) -> s32[4] {
  %x = f32[4,8]{1,0} parameter(0), sharding={devices=[1,2]<=[2]}
  %y = f32[4,8]{1,0} parameter(1), sharding={devices=[1,2]<=[2]}
  %m = f32[4,8]{1,0} multiply(%x, %y)
  %zero = f32[] constant(0)
  %s = f32[4]{0} reduce(%m, %zero), dimensions={1}, to_apply=%sum
  %s2 = f32[4,1]{1,0} reshape(%s)
  %io = s32[4,1]{1,0} iota(), iota_dimension=1
  %inf = f32[] constant(inf)
  %z = s32[] constant(0)
  %r = (f32[4]{0}, s32[4]{0}) reduce(%s2, %io, %inf, %z), dimensions={1}, to_apply=%argmin
  ROOT %idx = s32[4]{0} get-tuple-element(%r), index=1, sharding={replicated}
}
)";
  ExpectNoCommunicationWhenPartitioned(hlo, 2);
}

TEST(SimplifyTest, DeadValuesDoNotSteerPropagation) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[4,2]) -> f32[4,2] {
  %x = f32[4,2]{1,0} parameter(0), sharding={replicated}
  %a = f32[4,2]{1,0} add(%x, %x)
  %dead = f32[4,2]{1,0} copy(%a), sharding={devices=[1,2]<=[2]}
  %n = f32[4,2]{1,0} negate(%dead)
  ROOT %r = f32[4,2]{1,0} abs(%a), sharding={replicated}
}
)");
  api::CompileOptions options;
  options.requested_devices = 2;
  api::CompiledPartition compiled = api::PartitionGlobal(*module, "dead.hlo", options);
  const Module& partitioned = *compiled.partitioned.module;
  ExpectStructure(partitioned, PrintModule(partitioned), {.collectives = 0});
}

// An iota is the same on every device: gathered, sliced or dynamically sliced along another
// dim it is an iota of the result's shape. Gathered along its own dim it repeats [0, k) per
// device, which no iota is, so that all-gather stays.
TEST(SimplifyTest, IotaMovedAlongAnotherDimIsAnIota) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2
ENTRY %main_spmd (i: s32[]) -> (s32[8,4,3], s32[2,4,2], s32[4,2,3], s32[4,4,3], s32[4,4,2]) {
  %i = s32[] parameter(0)
  %io = s32[4,4,3]{2,1,0} iota(), iota_dimension=2
  %ag = s32[8,4,3]{2,1,0} all-gather(%io), channel_id=1, replica_groups=[1,2]<=[2], dimensions={0}, use_global_device_ids=true
  %sl = s32[2,4,2]{2,1,0} slice(%io), slice={[1:3], [0:4], [0:2]}
  %z = s32[] constant(0)
  %ds = s32[4,2,3]{2,1,0} dynamic-slice(%io, %z, %i, %i), dynamic_slice_sizes={4,2,3}
  %own = s32[4,4,3]{2,1,0} iota(), iota_dimension=0
  %half = s32[2,4,3]{2,1,0} slice(%own), slice={[0:2], [0:4], [0:3]}
  %along = s32[4,4,3]{2,1,0} all-gather(%half), channel_id=2, replica_groups=[1,2]<=[2], dimensions={0}, use_global_device_ids=true
  %late = s32[4,4,2]{2,1,0} slice(%io), slice={[0:4], [0:4], [1:3]}
  ROOT %r = (s32[8,4,3]{2,1,0}, s32[2,4,2]{2,1,0}, s32[4,2,3]{2,1,0}, s32[4,4,3]{2,1,0}, s32[4,4,2]{2,1,0}) tuple(%ag, %sl, %ds, %along, %late)
}
)");
  // The all-gather, the two slices from 0 along the iota dims and the dynamic-slice.
  EXPECT_EQ(SimplifyPartitionedModule(*module), 4);
  for (const auto& computation : module->computations()) computation->RemoveDeadInstructions();
  const std::string text = PrintModule(*module);
  const Instruction* root = module->entry()->root();
  for (int k : {0, 1, 2}) {
    const Instruction* iota = root->operand(k);
    ASSERT_EQ(iota->opcode(), Opcode::kIota) << text;
    EXPECT_EQ(iota->iota_dimension, 2) << text;
    EXPECT_EQ(iota->shape(), root->shape().tuple_shapes()[k]) << text;
  }
  // Gathered along its own dim, an iota repeats [0, k) per device, and sliced from 1 it
  // starts at 1: neither is an iota, so both stay (the gather's operand, a slice from 0 of
  // an iota along dim 0, is one).
  ASSERT_EQ(root->operand(3)->opcode(), Opcode::kAllGather) << text;
  EXPECT_EQ(root->operand(3)->operand(0)->opcode(), Opcode::kIota) << text;
  EXPECT_EQ(root->operand(4)->opcode(), Opcode::kSlice) << text;
}

// JAX's argsort along a dim of one element: the sort returns its operands, so the result is
// the iota (zeros) whatever the rows sliced from a sharded input hold; XLA sends nothing (oracle
// seed 20115: we gathered the slice and the sharded iota, 56 B).
TEST(SimplifyTest, SortAlongOneElementIsFoldedBeforePropagation) {
  const std::string hlo = R"(HloModule m, num_partitions=4
%lt (a: s32[], b: s32[], c: s32[], d: s32[]) -> pred[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}

%lt1 (a: s32[], b: s32[]) -> pred[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}

ENTRY %main (x: s32[3,16]) -> (s32[2,1], s32[2,1]) {
  %x = s32[3,16]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %s = s32[2,1]{1,0} slice(%x), slice={[1:3], [13:14]}
  %io = s32[2,1]{1,0} iota(), iota_dimension=1
  %sorted = (s32[2,1]{1,0}, s32[2,1]{1,0}) sort(%s, %io), dimensions={1}, is_stable=true, to_apply=%lt
  %order = s32[2,1]{1,0} get-tuple-element(%sorted), index=1
  %alone = s32[2,1]{1,0} sort(%io), dimensions={1}, to_apply=%lt1
  ROOT %r = (s32[2,1]{1,0}, s32[2,1]{1,0}) tuple(%order, %alone)
}
)";
  {
    std::unique_ptr<Module> module = ParseModule(hlo);
    EXPECT_EQ(FoldTrivialSortsBeforePropagation(*module), 2);
    const Instruction* root = module->entry()->root();
    EXPECT_EQ(root->operand(0)->opcode(), Opcode::kIota);
    EXPECT_EQ(root->operand(1)->opcode(), Opcode::kIota);
  }
  ExpectNoCommunicationWhenPartitioned(hlo, 4);
  // Returned as the result itself, a sorted element is its operand too.
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
%lt (a: s32[], b: s32[]) -> pred[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}

ENTRY %main (x: s32[2,1]) -> s32[2,1] {
  %x = s32[2,1]{1,0} parameter(0)
  ROOT %alone = s32[2,1]{1,0} sort(%x), dimensions={1}, to_apply=%lt
}
)");
  EXPECT_EQ(FoldTrivialSortsBeforePropagation(*module), 1);
  EXPECT_EQ(module->entry()->root()->name(), "x");
}

// A helper whose result only a sharding annotation reads (a cumsum returned as a split
// result) is inlined like any other; one whose result enters a manual region stays a call
// (oracle seed 20135: the cumsum of a replicated vector was computed split, with its halo
// gathered, 14 B against XLA's 0).
TEST(SimplifyTest, HelperCallsReadByAnAnnotationAreInlined) {
  const std::string hlo = R"(HloModule m, num_partitions=8
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%cumsum (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[8]{0} reduce-window(%p, %zero), window={size=8 pad=7_0}, to_apply=%add
}

%twice (q: f32[8]) -> f32[8] {
  %q = f32[8]{0} parameter(0)
  ROOT %d = f32[8]{0} add(%q, %q)
}

ENTRY %main (x: f32[8]) -> (f32[8], f32[1]) {
  %x = f32[8]{0} parameter(0), sharding={replicated}
  %c = f32[8]{0} call(%x), to_apply=%cumsum
  %out = f32[8]{0} custom-call(%c), custom_call_target="Sharding", sharding={devices=[8]<=[8]}
  %t = f32[8]{0} call(%x), to_apply=%twice
  %local = f32[1]{0} custom-call(%t), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT %r = (f32[8]{0}, f32[1]{0}) tuple(%out, %local), sharding={{devices=[8]<=[8]}, {manual}}
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_EQ(InlineCallsBeforePropagation(*module), 1);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), Opcode::kReduceWindow);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), Opcode::kCall);
}

// JAX's top_k with k = 1 over rows of one element: the indices are zeros and the values the
// operand, so a gather of split rows that only feeds the indices is dead and nothing moves
// (oracle seed 40288: a masked gather and an all-reduce, 20 B, against XLA's 0).
TEST(SimplifyTest, TopKOfOneElementRowsIsFoldedBeforePropagation) {
  const std::string hlo = R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[16,1], i: s32[5,1]) -> (s32[5,1], f32[5,1]) {
  %x = f32[16,1]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[5,1]{1,0} parameter(1), sharding={replicated}
  %g = f32[5,1]{1,0} gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,1}
  %top = (f32[5,1]{1,0}, s32[5,1]{1,0}) topk(%g), k=1, largest=true
  %v = f32[5,1]{1,0} get-tuple-element(%top), index=0
  %n = f32[5,1]{1,0} negate(%v)
  %idx = s32[5,1]{1,0} get-tuple-element(%top), index=1
  ROOT %r = (s32[5,1]{1,0}, f32[5,1]{1,0}) tuple(%idx, %n)
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_EQ(FoldTrivialSortsBeforePropagation(*module), 1);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kBroadcast);
  EXPECT_EQ(root->operand(0)->operand(0)->literal()->GetAsInt64(0), 0);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), Opcode::kGather);
  // Only the indices are returned, through an op or as the result itself (oracle seed 120931:
  // 4 B; XLA 0): nothing moves.
  const std::string indices_of_top1 = R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[16,1], i: s32[5,1]) -> s32[5,1] {
  %x = f32[16,1]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[5,1]{1,0} parameter(1), sharding={replicated}
  %g = f32[5,1]{1,0} gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,1}
  %top = (f32[5,1]{1,0}, s32[5,1]{1,0}) topk(%g), k=1, largest=true
)";
  ExpectNoCommunicationWhenPartitioned(indices_of_top1 + R"(  %idx = s32[5,1]{1,0} get-tuple-element(%top), index=1
  ROOT %twice = s32[5,1]{1,0} add(%idx, %idx), sharding={replicated}
}
)", 4);
  ExpectNoCommunicationWhenPartitioned(indices_of_top1 + R"(  ROOT %idx = s32[5,1]{1,0} get-tuple-element(%top), index=1
}
)", 4);
}

// A sort operand its comparator never reads, whose sorted values nobody uses, is dropped
// before propagation, as XLA's simplifier drops it: moving it to the sort's layout cost an
// all-to-all (oracle seed 112363: a second operand built from a split input, 60 B, XLA 0). The
// element read by nothing (JAX's reader makes one per result) does not keep it.
TEST(SimplifyTest, SortOperandsNobodyReadsAreDroppedBeforePropagation) {
  const std::string hlo = R"(HloModule m, num_partitions=4
%cmp (a: f32[], b: f32[], c: f32[], d: f32[], e: s32[], f: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = f32[] parameter(2)
  %d = f32[] parameter(3)
  %e = s32[] parameter(4)
  %f = s32[] parameter(5)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}

ENTRY %main (x: f32[8,4], y: f32[8,4]) -> (f32[8,4], s32[8,4]) {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[8,4]{1,0} parameter(1), sharding={devices=[1,4]<=[4]}
  %i = s32[8,4]{1,0} iota(), iota_dimension=1
  %s = (f32[8,4]{1,0}, f32[8,4]{1,0}, s32[8,4]{1,0}) sort(%x, %y, %i), dimensions={1}, is_stable=true, to_apply=%cmp
  %v = f32[8,4]{1,0} get-tuple-element(%s), index=0
  %dead = f32[8,4]{1,0} get-tuple-element(%s), index=1
  %k = s32[8,4]{1,0} get-tuple-element(%s), index=2
  ROOT %t = (f32[8,4]{1,0}, s32[8,4]{1,0}) tuple(%v, %k), sharding={{devices=[4,1]<=[4]}, {devices=[4,1]<=[4]}}
}
)";
  std::unique_ptr<Module> module = ParseModule(hlo);
  EXPECT_EQ(FoldTrivialSortsBeforePropagation(*module), 1);
  RemoveDeadCodeBeforePropagation(*module);
  const std::string text = PrintModule(*module);
  EXPECT_NE(text.find("sort(%x, %i)"), std::string::npos) << text;
  EXPECT_NE(text.find("get-tuple-element(%s.1), index=1"), std::string::npos) << text;
  ExpectNoCommunicationWhenPartitioned(hlo, 4);
}

// JAX writes x[2:6, 1:5] with constant bounds as a dynamic-slice whose starts are constant
// expressions (a select of a compare of constants, for negative indices). Folded into a slice
// before propagation, as XLA's simplifier folds it, its split dim stays split, and each shard
// cuts its part locally, and the result the user left free stays split (oracle seed 114644:
// 384 B of all-reduce, XLA 0).
constexpr const char* kConstantStarts = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8,6]) -> f32[4,4] {
  %x = f32[8,6]{1,0} parameter(0), sharding={devices=[1,2]<=[2]}
  %two = s32[] constant(2)
  %zero = s32[] constant(0)
  %eight = s32[] constant(8)
  %negative = pred[] compare(%two, %zero), direction=LT
  %wrapped = s32[] add(%two, %eight)
  %row = s32[] select(%negative, %wrapped, %two)
  %one = s32[] constant(1)
  %ds = f32[4,4]{1,0} dynamic-slice(%x, %row, %one), dynamic_slice_sizes={4,4}
  ROOT %n = f32[4,4]{1,0} negate(%ds)
}
)";

TEST(SimplifyTest, ConstantStartsMakeADynamicSliceASliceBeforePropagation) {
  std::unique_ptr<Module> module = ParseModule(kConstantStarts);
  EXPECT_EQ(FoldConstantDynamicSlicesBeforePropagation(*module), 1);
  const Instruction* slice = module->entry()->root()->operand(0);
  ASSERT_EQ(slice->opcode(), Opcode::kSlice);
  EXPECT_EQ(slice->slice(), (std::vector<SliceDim>{{2, 6, 1}, {1, 5, 1}}));
  ExpectNoCommunicationWhenPartitioned(kConstantStarts, 2, /*to_outputs=*/"true");
}

TEST(SimplifyTest, DynamicSliceStartsAreClampedAndOnlyConstantsFold) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8,6], i: s32[]) -> (f32[4,4], f32[4,4], f32[4,4]) {
  %x = f32[8,6]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %big = s32[] constant(7)
  %minus = s32[] constant(-3)
  %clamped = f32[4,4]{1,0} dynamic-slice(%x, %big, %minus), dynamic_slice_sizes={4,4}
  %dynamic = f32[4,4]{1,0} dynamic-slice(%x, %i, %big), dynamic_slice_sizes={4,4}
  %annotated = f32[4,4]{1,0} dynamic-slice(%x, %big, %big), dynamic_slice_sizes={4,4}, sharding={replicated}
  ROOT %t = (f32[4,4]{1,0}, f32[4,4]{1,0}, f32[4,4]{1,0}) tuple(%clamped, %dynamic, %annotated)
}
)");
  EXPECT_EQ(FoldConstantDynamicSlicesBeforePropagation(*module), 1);
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->operand(0)->opcode(), Opcode::kSlice);
  EXPECT_EQ(root->operand(0)->slice(), (std::vector<SliceDim>{{4, 8, 1}, {0, 4, 1}}));
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kDynamicSlice);  // a parameter start
  EXPECT_EQ(root->operand(2)->opcode(), Opcode::kDynamicSlice);  // annotated by the user
}

TEST(SimplifyTest, ConstantScalarValueEvaluatesOnlyWhatFitsItsType) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
ENTRY %main (p: s32[]) -> (s32[], s8[], s32[], pred[], s32[]) {
  %p = s32[] parameter(0)
  %a = s32[] constant(100)
  %b = s32[] constant(-7)
  %lo = s32[] constant(0)
  %hi = s32[] constant(50)
  %c = s32[] clamp(%lo, %a, %hi)
  %d = s32[] divide(%b, %c)
  %m = s32[] multiply(%a, %a)
  %n = s8[] convert(%m)
  %f = pred[] compare(%d, %lo), direction=LT
  %q = s32[] add(%p, %a)
  ROOT %t = (s32[], s8[], s32[], pred[], s32[]) tuple(%c, %n, %d, %f, %q)
}
)");
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(ConstantScalarValue(*root->operand(0)), 50);
  EXPECT_EQ(ConstantScalarValue(*root->operand(1)), std::nullopt);  // 10000 does not fit s8
  EXPECT_EQ(ConstantScalarValue(*root->operand(2)), 0);             // -7 / 50 truncates to 0
  EXPECT_EQ(ConstantScalarValue(*root->operand(3)), 0);
  EXPECT_EQ(ConstantScalarValue(*root->operand(4)), std::nullopt);  // reads a parameter
}


// The first rows of a concatenate taken back through a flatten (JAX's ravel, a slice, a
// reshape) are its first operand: folded, the concatenate of a whole and a split array stays
// split, and nothing is gathered (oracle seed 114951: 320 B, XLA none). Rows across operands
// stay as written.
constexpr const char* kFlatSlices = R"(HloModule m, num_partitions=2
ENTRY %main (w: s32[5,4,8], s: s32[5,4,8]) -> (s32[10,4,8], s32[5,4,8]) {
  %w = s32[5,4,8]{2,1,0} parameter(0), sharding={replicated}
  %s = s32[5,4,8]{2,1,0} parameter(1), sharding={devices=[1,1,2]<=[2]}
  %c = s32[10,4,8]{2,1,0} concatenate(%w, %s), dimensions={0}
  %flat = s32[320]{0} reshape(%c)
  %first = s32[160]{0} slice(%flat), slice={[0:160]}
  %back = s32[5,4,8]{2,1,0} reshape(%first)
  %n = s32[5,4,8]{2,1,0} negate(%back)
  ROOT %t = (s32[10,4,8]{2,1,0}, s32[5,4,8]{2,1,0}) tuple(%c, %n), sharding={{devices=[1,1,2]<=[2]}, {devices=[1,1,2]<=[2]}}
}
)";

TEST(SimplifyTest, AConcatenatedOperandTakenBackThroughAFlattenIsThatOperand) {
  std::unique_ptr<Module> module = ParseModule(kFlatSlices);
  EXPECT_EQ(FoldFlatSlicesBeforePropagation(*module), 1);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(1)->operand(0)->name(), "w");  // the concatenate's first operand
  ExpectNoCommunicationWhenPartitioned(kFlatSlices, 2);
}

TEST(SimplifyTest, FlatSlicesOfOtherRowsStay) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
ENTRY %main (x: f32[4,6], w: f32[2,6]) -> (f32[2,6], f32[2,6]) {
  %x = f32[4,6]{1,0} parameter(0)
  %w = f32[2,6]{1,0} parameter(1)
  %flat = f32[24]{0} reshape(%x)
  %cut = f32[12]{0} slice(%flat), slice={[3:15]}
  %part = f32[2,6]{1,0} reshape(%cut)
  %c = f32[6,6]{1,0} concatenate(%w, %x), dimensions={0}
  %all = f32[36]{0} reshape(%c)
  %across = f32[12]{0} slice(%all), slice={[6:18]}
  %rows = f32[2,6]{1,0} reshape(%across)
  ROOT %t = (f32[2,6]{1,0}, f32[2,6]{1,0}) tuple(%part, %rows)
}
)");
  EXPECT_EQ(FoldFlatSlicesBeforePropagation(*module), 0);  // a cut row; rows across two operands
}

// Oracle seed 118244: a windowed max over a split vector, negated, compared with zeros and
// and-ed with its self-compare (false everywhere): the result is false whatever the window
// held, so neither the window's halo nor a gather of the mask is needed. Likewise x | true and
// an integer x * 0.
TEST(SimplifyTest, AndWithFalseOrWithTrueAndTimesZeroAreTheSplat) {
  ExpectNoCommunicationWhenPartitioned(R"(HloModule m, num_partitions=2
%max (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %m = s32[] maximum(%a, %b)
}

ENTRY %main (x: s32[8]) -> (pred[3], pred[3], s32[3]) {
  %x = s32[8]{0} parameter(0), sharding={devices=[2]<=[2]}
  %low = s32[] constant(-2147483648)
  %w = s32[3]{0} reduce-window(%x, %low), window={size=3 stride=3 pad=1_0}, to_apply=%max
  %n = s32[3]{0} not(%w)
  %self = pred[3]{0} compare(%n, %n), direction=NE
  %zero = s32[] constant(0)
  %zeros = s32[3]{0} broadcast(%zero), dimensions={}
  %nz = pred[3]{0} compare(%n, %zeros), direction=NE
  %and = pred[3]{0} and(%nz, %self)
  %true = pred[] constant(true)
  %trues = pred[3]{0} broadcast(%true), dimensions={}
  %or = pred[3]{0} or(%trues, %nz)
  %times = s32[3]{0} multiply(%n, %zeros)
  ROOT %t = (pred[3]{0}, pred[3]{0}, s32[3]{0}) tuple(%and, %or, %times), sharding={{replicated}, {replicated}, {replicated}}
}
)", 2);
}

// A collective-permute of a splat is that splat where every device receives one, and a splat
// of zeros whatever the pairs (a device no pair targets gets zeros): oracle seed 114611, a
// zero index moved for 4 B. A non-zero splat some device does not receive stays moved.
TEST(SimplifyTest, PermutesOfSplatsFoldWhereEveryDeviceGetsTheSplat) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=4
ENTRY %main_spmd () -> (s32[2], s32[2], s32[2]) {
  %zero = s32[] constant(0)
  %zeros = s32[2]{0} broadcast(%zero), dimensions={}
  %seven = s32[] constant(7)
  %sevens = s32[2]{0} broadcast(%seven), dimensions={}
  %a = s32[2]{0} collective-permute(%zeros), channel_id=1, source_target_pairs={{0,1},{1,0}}
  %b = s32[2]{0} collective-permute(%sevens), channel_id=2, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  %c = s32[2]{0} collective-permute(%sevens), channel_id=3, source_target_pairs={{0,1},{1,0}}
  ROOT %t = (s32[2]{0}, s32[2]{0}, s32[2]{0}) tuple(%a, %b, %c)
}
)");
  EXPECT_EQ(SimplifyPartitionedModule(*module), 2);
  for (const auto& computation : module->computations()) computation->RemoveDeadInstructions();
  const std::string text = PrintModule(*module);
  ExpectStructure(*module, text, {.counts = {{Opcode::kCollectivePermute, 1}}});
  EXPECT_NE(text.find("channel_id=3"), std::string::npos) << text;
}

}  // namespace
}  // namespace gspmd::partition_test
