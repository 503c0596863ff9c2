// Tests of while / conditional / call / opt-barrier partitioning: the loop or branch itself
// communicates nothing when shardings agree, operands are resharded once at entry, and the
// partitioned program computes the interpreter's numbers.
#include <memory>
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

// A loop of 5 steps: x <- tanh(x . w) * 0.9 with x row-sharded and w replicated.
const char* kDataParallelLoop = R"(HloModule m, num_partitions=4

%body (p: (s32[], f32[16,8], f32[8,8])) -> (s32[], f32[16,8], f32[8,8]) {
  %p = (s32[], f32[16,8]{1,0}, f32[8,8]{1,0}) parameter(0), sharding={{replicated}, {devices=[4,1]<=[4]}, {replicated}}
  %i = s32[] get-tuple-element(%p), index=0, sharding={replicated}
  %x = f32[16,8]{1,0} get-tuple-element(%p), index=1, sharding={devices=[4,1]<=[4]}
  %w = f32[8,8]{1,0} get-tuple-element(%p), index=2, sharding={replicated}
  %one = s32[] constant(1), sharding={replicated}
  %next = s32[] add(%i, %one), sharding={replicated}
  %d = f32[16,8]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
  %t = f32[16,8]{1,0} tanh(%d), sharding={devices=[4,1]<=[4]}
  %c = f32[] constant(0.9), sharding={replicated}
  %b = f32[16,8]{1,0} broadcast(%c), dimensions={}, sharding={devices=[4,1]<=[4]}
  %m = f32[16,8]{1,0} multiply(%t, %b), sharding={devices=[4,1]<=[4]}
  ROOT %r = (s32[], f32[16,8]{1,0}, f32[8,8]{1,0}) tuple(%next, %m, %w), sharding={{replicated}, {devices=[4,1]<=[4]}, {replicated}}
}

%cond (q: (s32[], f32[16,8], f32[8,8])) -> pred[] {
  %q = (s32[], f32[16,8]{1,0}, f32[8,8]{1,0}) parameter(0), sharding={{replicated}, {devices=[4,1]<=[4]}, {replicated}}
  %j = s32[] get-tuple-element(%q), index=0, sharding={replicated}
  %n = s32[] constant(5), sharding={replicated}
  ROOT %lt = pred[] compare(%j, %n), direction=LT, sharding={replicated}
}

ENTRY %main (x: f32[16,8], w: f32[8,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0), sharding={X_SHARDING}
  %w = f32[8,8]{1,0} parameter(1), sharding={replicated}
  %zero = s32[] constant(0), sharding={replicated}
  %init = (s32[], f32[16,8]{1,0}, f32[8,8]{1,0}) tuple(%zero, %x, %w), sharding={{replicated}, {devices=[4,1]<=[4]}, {replicated}}
  %loop = (s32[], f32[16,8]{1,0}, f32[8,8]{1,0}) while(%init), condition=%cond, body=%body, sharding={{replicated}, {devices=[4,1]<=[4]}, {replicated}}
  ROOT %out = f32[16,8]{1,0} get-tuple-element(%loop), index=1, sharding={devices=[4,1]<=[4]}
}
)";

std::string WithXSharding(const std::string& sharding) {
  std::string text = kDataParallelLoop;
  text.replace(text.find("X_SHARDING"), 10, sharding);
  return text;
}

const char* kPredicatedConditional = R"(HloModule m, num_partitions=4

%on_true (a: (f32[8,4], f32[8,4])) -> f32[8,4] {
  %a = (f32[8,4]{1,0}, f32[8,4]{1,0}) parameter(0), sharding={{devices=[4,1]<=[4]}, {devices=[4,1]<=[4]}}
  %a0 = f32[8,4]{1,0} get-tuple-element(%a), index=0, sharding={devices=[4,1]<=[4]}
  %a1 = f32[8,4]{1,0} get-tuple-element(%a), index=1, sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[8,4]{1,0} add(%a0, %a1), sharding={devices=[4,1]<=[4]}
}

%on_false (b: f32[8,4]) -> f32[8,4] {
  %b = f32[8,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %e = f32[8,4]{1,0} exponential(%b), sharding={devices=[4,1]<=[4]}
}

ENTRY %main (x: f32[8,4], y: f32[8,4], k: s32[]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[8,4]{1,0} parameter(1), sharding={devices=[1,4]<=[4]}
  %k = s32[] parameter(2), sharding={replicated}
  %limit = s32[] constant(10), sharding={replicated}
  %pred = pred[] compare(%k, %limit), direction=LT, sharding={replicated}
  %pair = (f32[8,4]{1,0}, f32[8,4]{1,0}) tuple(%x, %y), sharding={{devices=[4,1]<=[4]}, {devices=[4,1]<=[4]}}
  ROOT %c = f32[8,4]{1,0} conditional(%pred, %pair, %x), true_computation=%on_true, false_computation=%on_false, sharding={devices=[4,1]<=[4]}
}
)";

const std::vector<PartitionCase> kCases = {
    {.name = "WhileWithAgreeingShardingsCommunicatesNothing",
     .hlo = WithXSharding("devices=[4,1]<=[4]"),
     .expect = {.collectives = 0},
     .check =
         [](const Partitioned& p) {
           const Instruction* loop = TheOnly(p, Opcode::kWhile);
           if (loop == nullptr) return;
           const Shape& shape = loop->shape();
           ASSERT_TRUE(shape.IsTuple());
           EXPECT_EQ(shape.tuple_shape(1).dims(), (Dims{4, 8})) << p.text;
           EXPECT_EQ(shape.tuple_shape(2).dims(), (Dims{8, 8})) << p.text;
           // Body and condition are per-device computations (parameter shape = loop shape).
           EXPECT_EQ(loop->while_body()->parameter(0)->shape().tuple_shape(1).dims(), (Dims{4, 8}));
           EXPECT_EQ(loop->while_condition()->parameter(0)->shape().tuple_shape(1).dims(), (Dims{4, 8}));
         }},
    {.name = "WhileReshardsItsOperandOnceAtEntry",
     .hlo = WithXSharding("devices=[1,4]<=[4]"),
     // The operand is moved to rows with all-to-alls once, in the entry (one all-to-all of the
     // 4x8 piece: 3/4 of 128 bytes); the loop moves nothing.
     .expect = {.counts = {{Opcode::kAllGather, 0}}, .at_least = {{Opcode::kAllToAll, 1}}, .max_comm_bytes = 96.0},
     .check =
         [](const Partitioned& p) {
           const Instruction* loop = TheOnly(p, Opcode::kWhile);
           if (loop == nullptr) return;
           EXPECT_EQ(CollectivesIn(*loop->while_body()), 0) << p.text;
           EXPECT_EQ(CollectivesIn(*loop->while_condition()), 0) << p.text;
         }},
    // 10 rows over 4 devices: per-device carries are 3 rows, the last one padded.
    {.name = "WhileOverUnevenShardedCarry",
     .hlo = R"(HloModule m, num_partitions=4

%body (p: (s32[], f32[10,6])) -> (s32[], f32[10,6]) {
  %p = (s32[], f32[10,6]{1,0}) parameter(0), sharding={{replicated}, {devices=[4,1]<=[4]}}
  %i = s32[] get-tuple-element(%p), index=0, sharding={replicated}
  %x = f32[10,6]{1,0} get-tuple-element(%p), index=1, sharding={devices=[4,1]<=[4]}
  %one = s32[] constant(1), sharding={replicated}
  %next = s32[] add(%i, %one), sharding={replicated}
  %y = f32[10,6]{1,0} multiply(%x, %x), sharding={devices=[4,1]<=[4]}
  %z = f32[10,6]{1,0} subtract(%y, %x), sharding={devices=[4,1]<=[4]}
  ROOT %r = (s32[], f32[10,6]{1,0}) tuple(%next, %z), sharding={{replicated}, {devices=[4,1]<=[4]}}
}

%cond (q: (s32[], f32[10,6])) -> pred[] {
  %q = (s32[], f32[10,6]{1,0}) parameter(0), sharding={{replicated}, {devices=[4,1]<=[4]}}
  %j = s32[] get-tuple-element(%q), index=0, sharding={replicated}
  %n = s32[] constant(3), sharding={replicated}
  ROOT %lt = pred[] compare(%j, %n), direction=LT, sharding={replicated}
}

ENTRY %main (x: f32[10,6]) -> f32[10,6] {
  %x = f32[10,6]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %zero = s32[] constant(0), sharding={replicated}
  %init = (s32[], f32[10,6]{1,0}) tuple(%zero, %x), sharding={{replicated}, {devices=[4,1]<=[4]}}
  %loop = (s32[], f32[10,6]{1,0}) while(%init), condition=%cond, body=%body, sharding={{replicated}, {devices=[4,1]<=[4]}}
  ROOT %out = f32[10,6]{1,0} get-tuple-element(%loop), index=1, sharding={devices=[4,1]<=[4]}
}
)",
     .expect = {.collectives = 0},
     .check =
         [](const Partitioned& p) {
           const Instruction* loop = TheOnly(p, Opcode::kWhile);
           if (loop != nullptr) EXPECT_EQ(loop->shape().tuple_shape(1).dims(), (Dims{3, 6}));
         }},
    // 2x4 mesh: the carry is split 2 ways on dim 0 and replicated over the other 4 devices;
    // the body contracts a dim sharded 4 ways (partial sums resolved inside the body).
    {.name = "WhileOnTwoDimMeshWithPartialReplication",
     .hlo = R"(HloModule m, num_partitions=8

%body (p: (s32[], f32[8,16], f32[16,16])) -> (s32[], f32[8,16], f32[16,16]) {
  %p = (s32[], f32[8,16]{1,0}, f32[16,16]{1,0}) parameter(0), sharding={{replicated}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}}
  %i = s32[] get-tuple-element(%p), index=0, sharding={replicated}
  %x = f32[8,16]{1,0} get-tuple-element(%p), index=1, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %w = f32[16,16]{1,0} get-tuple-element(%p), index=2, sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %one = s32[] constant(1), sharding={replicated}
  %next = s32[] add(%i, %one), sharding={replicated}
  %xs = f32[8,16]{1,0} copy(%x), sharding={devices=[2,4]<=[8]}
  %d = f32[8,16]{1,0} dot(%xs, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %t = f32[8,16]{1,0} tanh(%d), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %r = (s32[], f32[8,16]{1,0}, f32[16,16]{1,0}) tuple(%next, %t, %w), sharding={{replicated}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}}
}

%cond (q: (s32[], f32[8,16], f32[16,16])) -> pred[] {
  %q = (s32[], f32[8,16]{1,0}, f32[16,16]{1,0}) parameter(0), sharding={{replicated}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}}
  %j = s32[] get-tuple-element(%q), index=0, sharding={replicated}
  %n = s32[] constant(4), sharding={replicated}
  ROOT %lt = pred[] compare(%j, %n), direction=LT, sharding={replicated}
}

ENTRY %main (x: f32[8,16], w: f32[16,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %w = f32[16,16]{1,0} parameter(1), sharding={replicated}
  %zero = s32[] constant(0), sharding={replicated}
  %init = (s32[], f32[8,16]{1,0}, f32[16,16]{1,0}) tuple(%zero, %x, %w), sharding={{replicated}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}}
  %loop = (s32[], f32[8,16]{1,0}, f32[16,16]{1,0}) while(%init), condition=%cond, body=%body, sharding={{replicated}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}}
  ROOT %out = f32[8,16]{1,0} get-tuple-element(%loop), index=1, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
}
)",
     .check =
         [](const Partitioned& p) {
           const Instruction* loop = TheOnly(p, Opcode::kWhile);
           if (loop == nullptr) return;
           EXPECT_EQ(loop->shape().tuple_shape(1).dims(), (Dims{4, 16}));
           EXPECT_EQ(loop->shape().tuple_shape(2).dims(), (Dims{4, 16}));
           // The body's partial sums: one all-reduce per step, in the body.
           int64_t body_all_reduces = 0;
           for (const auto& instruction : loop->while_body()->instructions())
             body_all_reduces += instruction->opcode() == Opcode::kAllReduce;
           EXPECT_EQ(body_all_reduces, 1) << p.text;
         }},
    {.name = "PredicatedConditionalTakesEitherBranch",
     .hlo = kPredicatedConditional,
     // y arrives column-sharded and is moved to rows (outside the branches, no all-gather).
     .expect = {.counts = {{Opcode::kAllGather, 0}}, .at_least = {{Opcode::kAllToAll, 1}}},
     .check =
         [](const Partitioned& p) {
           const Instruction* conditional = TheOnly(p, Opcode::kConditional);
           if (conditional == nullptr) return;
           for (const Computation* branch : conditional->called_computations())
             EXPECT_EQ(CollectivesIn(*branch), 0) << p.text;
           EXPECT_EQ(conditional->shape().dims(), (Dims{2, 4}));
         },
     .scalar_runs = {{3}, {30}}},  // k < 10 takes the true branch
    {.name = "IndexedConditionalWithDifferentBranchShardings",
     .hlo = R"(HloModule m, num_partitions=4

%b0 (a: f32[8,8]) -> f32[8,8] {
  %a = f32[8,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %n = f32[8,8]{1,0} negate(%a), sharding={devices=[4,1]<=[4]}
}

%b1 (b: f32[8,8]) -> f32[8,8] {
  %b = f32[8,8]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %t = f32[8,8]{1,0} tanh(%b), sharding={devices=[1,4]<=[4]}
  ROOT %tc = f32[8,8]{1,0} copy(%t), sharding={devices=[4,1]<=[4]}
}

%b2 (c: f32[8,8]) -> f32[8,8] {
  %c = f32[8,8]{1,0} parameter(0), sharding={replicated}
  ROOT %m = f32[8,8]{1,0} multiply(%c, %c), sharding={devices=[4,1]<=[4]}
}

ENTRY %main (x: f32[8,8], i: s32[]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  ROOT %c = f32[8,8]{1,0} conditional(%i, %x, %x, %x), branch_computations={%b0, %b1, %b2}, sharding={devices=[4,1]<=[4]}
}
)",
     .check =
         [](const Partitioned& p) {
           const Instruction* conditional = TheOnly(p, Opcode::kConditional);
           if (conditional == nullptr) return;
           ASSERT_EQ(conditional->operand_count(), 4);
           EXPECT_EQ(conditional->operand(1)->shape().dims(), (Dims{2, 8})) << p.text;
           EXPECT_EQ(conditional->operand(2)->shape().dims(), (Dims{8, 2})) << p.text;
           EXPECT_EQ(conditional->operand(3)->shape().dims(), (Dims{8, 8})) << p.text;
           EXPECT_EQ(conditional->shape().dims(), (Dims{2, 8}));
         },
     .scalar_runs = {{0}, {1}, {2}, {7}}},  // an out-of-range index runs the last branch
    {.name = "CallPartitionsItsCallee",
     .hlo = R"(HloModule m, num_partitions=8

%helper (u: f32[16,8], v: f32[16,8]) -> f32[16,8] {
  %u = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %v = f32[16,8]{1,0} parameter(1), sharding={devices=[8,1]<=[8]}
  %s = f32[16,8]{1,0} add(%u, %v), sharding={devices=[8,1]<=[8]}
  ROOT %l = f32[16,8]{1,0} log-plus-one(%s), sharding={devices=[8,1]<=[8]}
}

ENTRY %main (x: f32[16,8], y: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %y = f32[16,8]{1,0} parameter(1), sharding={replicated}
  %ax = f32[16,8]{1,0} abs(%x), sharding={devices=[8,1]<=[8]}
  %ay = f32[16,8]{1,0} abs(%y), sharding={replicated}
  ROOT %c = f32[16,8]{1,0} call(%ax, %ay), to_apply=%helper, frontend_attributes={inlineable="false"}, sharding={devices=[8,1]<=[8]}
}
)",
     .expect = {.collectives = 0},  // the replicated operand is sliced locally
     .check =
         [](const Partitioned& p) {
           const Instruction* call = TheOnly(p, Opcode::kCall);
           if (call == nullptr) return;
           EXPECT_EQ(call->shape().dims(), (Dims{2, 8}));
           EXPECT_EQ(call->to_apply()->parameter(1)->shape().dims(), (Dims{2, 8}));
           EXPECT_EQ(call->FrontendAttribute("inlineable"), "false");
         }},
    {.name = "CallResultInAnotherShardingIsReshardedAfterTheCall",
     .hlo = R"(HloModule m, num_partitions=4

%helper (u: f32[8,8]) -> f32[8,8] {
  %u = f32[8,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %n = f32[8,8]{1,0} negate(%u), sharding={devices=[4,1]<=[4]}
}

ENTRY %main (x: f32[8,8]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %c = f32[8,8]{1,0} call(%x), to_apply=%helper, sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[8,8]{1,0} copy(%c), sharding={replicated}
}
)",
     .expect = {.counts = {{Opcode::kAllGather, 1}}}},
    {.name = "OptimizationBarrierKeepsItsLayout",
     .hlo = R"(HloModule m, num_partitions=4

ENTRY %main (x: f32[8,8], y: f32[8]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[8]{0} parameter(1), sharding={replicated}
  %t = (f32[8,8]{1,0}, f32[8]{0}) tuple(%x, %y), sharding={{devices=[4,1]<=[4]}, {replicated}}
  %b = (f32[8,8]{1,0}, f32[8]{0}) opt-barrier(%t), sharding={{devices=[4,1]<=[4]}, {replicated}}
  %x1 = f32[8,8]{1,0} get-tuple-element(%b), index=0, sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[8,8]{1,0} sine(%x1), sharding={devices=[4,1]<=[4]}
}
)",
     .expect = {.collectives = 0},
     .check =
         [](const Partitioned& p) {
           const Instruction* barrier = TheOnly(p, Opcode::kOptimizationBarrier);
           if (barrier != nullptr) EXPECT_EQ(barrier->shape().tuple_shape(0).dims(), (Dims{2, 8}));
         }},
    // Found by the randomized test (seed 57): a reducer used by the entry before the loop is cloned
    // first; the loop body that also uses it must still print after it, or the printed module
    // does not parse ("undefined computation").
    {.name = "LoopBodyPrintsAfterAReducerTheEntryClonedFirst",
     .hlo = R"(HloModule m, num_partitions=2

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] maximum(%a, %b)
}

%body (p: (s32[], f32[4,6])) -> (s32[], f32[4,6]) {
  %p = (s32[], f32[4,6]) parameter(0), sharding={{replicated}, {devices=[2,1]<=[2]}}
  %i = s32[] get-tuple-element(%p), index=0, sharding={replicated}
  %x = f32[4,6] get-tuple-element(%p), index=1, sharding={devices=[2,1]<=[2]}
  %one = s32[] constant(1), sharding={replicated}
  %next = s32[] add(%i, %one), sharding={replicated}
  %ninf = f32[] constant(-inf), sharding={replicated}
  %m = f32[4] reduce(%x, %ninf), dimensions={1}, to_apply=%max, sharding={devices=[2]<=[2]}
  %mb = f32[4,6] broadcast(%m), dimensions={0}, sharding={devices=[2,1]<=[2]}
  %s = f32[4,6] subtract(%x, %mb), sharding={devices=[2,1]<=[2]}
  ROOT %t = (s32[], f32[4,6]) tuple(%next, %s), sharding={{replicated}, {devices=[2,1]<=[2]}}
}

%cond (q: (s32[], f32[4,6])) -> pred[] {
  %q = (s32[], f32[4,6]) parameter(0), sharding={{replicated}, {devices=[2,1]<=[2]}}
  %j = s32[] get-tuple-element(%q), index=0, sharding={replicated}
  %n = s32[] constant(2), sharding={replicated}
  ROOT %lt = pred[] compare(%j, %n), direction=LT, sharding={replicated}
}

ENTRY %main {
  %x = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  %ninf = f32[] constant(-inf), sharding={replicated}
  %m = f32[6] reduce(%x, %ninf), dimensions={0}, to_apply=%max, sharding={replicated}
  %zero = s32[] constant(0), sharding={replicated}
  %init = (s32[], f32[4,6]) tuple(%zero, %x), sharding={{replicated}, {devices=[2,1]<=[2]}}
  %loop = (s32[], f32[4,6]) while(%init), condition=%cond, body=%body, sharding={{replicated}, {devices=[2,1]<=[2]}}
  %y = f32[4,6] get-tuple-element(%loop), index=1, sharding={devices=[2,1]<=[2]}
  ROOT %out = (f32[6], f32[4,6]) tuple(%m, %y), sharding={{replicated}, {devices=[2,1]<=[2]}}
}
)"},
};

PARTITION_CASE_TESTS(ControlFlowPartitionTest, kCases);

TEST(ControlFlowPartitionTest, CorpusWhileLoopsNeedNoCommunication) {
  std::unique_ptr<Module> propagated = ParseModuleFile(std::string(GSPMD_TEST_DATA_DIR) +
                                                       "/corpus/gspmd/while_loops/propagated.hlo");
  PartitionResult result = PartitionModule(*propagated);
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_EQ(AnalyzeCommunication(*result.module).comm_bytes_per_device, 0.0) << PrintModule(*result.module);
}

}  // namespace
}  // namespace gspmd::partition_test
