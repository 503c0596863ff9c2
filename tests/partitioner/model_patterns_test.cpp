// Whole-model patterns the corpus lacks, written as XLA would propagate them: a conv-net
// training step (conv, max-pool and their gradients with batch and spatial sharding), a dot on
// a 3-D mesh, and a pipeline loop that shifts a stage-sharded state each step.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

// NHWC conv net piece on a 2x4 mesh: batch over 2 devices, image rows over 4.
const char* kConvNetStep = R"(HloModule convnet, num_partitions=8

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

%add (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %s = f32[] add(%c, %d)
}

%ge (e: f32[], f: f32[]) -> pred[] {
  %e = f32[] parameter(0)
  %f = f32[] parameter(1)
  ROOT %g = pred[] compare(%e, %f), direction=GE
}

ENTRY %main (x: f32[8,16,16,4], k: f32[3,3,4,8], gy: f32[8,8,8,8]) -> (f32[3,3,4,8], f32[8,16,16,4]) {
  %x = f32[8,16,16,4]{3,2,1,0} parameter(0), sharding={devices=[2,4,1,1]<=[8]}
  %k = f32[3,3,4,8]{3,2,1,0} parameter(1), sharding={replicated}
  %gy = f32[8,8,8,8]{3,2,1,0} parameter(2), sharding={devices=[2,4,1,1]<=[8]}
  %conv = f32[8,16,16,8]{3,2,1,0} convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[2,4,1,1]<=[8]}
  %zero = f32[] constant(0), sharding={replicated}
  %zeros = f32[8,16,16,8]{3,2,1,0} broadcast(%zero), dimensions={}, sharding={devices=[2,4,1,1]<=[8]}
  %relu = f32[8,16,16,8]{3,2,1,0} maximum(%conv, %zeros), sharding={devices=[2,4,1,1]<=[8]}
  %ninf = f32[] constant(-inf), sharding={replicated}
  %pool = f32[8,8,8,8]{3,2,1,0} reduce-window(%relu, %ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=%max, sharding={devices=[2,4,1,1]<=[8]}
  %gpool = f32[8,8,8,8]{3,2,1,0} multiply(%gy, %pool), sharding={devices=[2,4,1,1]<=[8]}
  %grelu = f32[8,16,16,8]{3,2,1,0} select-and-scatter(%relu, %gpool, %zero), window={size=1x2x2x1 stride=1x2x2x1}, select=%ge, scatter=%add, sharding={devices=[2,4,1,1]<=[8]}
  %positive = pred[8,16,16,8]{3,2,1,0} compare(%conv, %zeros), direction=GT, sharding={devices=[2,4,1,1]<=[8]}
  %gconv = f32[8,16,16,8]{3,2,1,0} select(%positive, %grelu, %zeros), sharding={devices=[2,4,1,1]<=[8]}
  %gk = f32[3,3,4,8]{3,2,1,0} convolution(%x, %gconv), window={size=16x16 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, sharding={replicated}
  %krev = f32[3,3,4,8]{3,2,1,0} reverse(%k), dimensions={0,1}, sharding={replicated}
  %gx = f32[8,16,16,4]{3,2,1,0} convolution(%gconv, %krev), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f, sharding={devices=[2,4,1,1]<=[8]}
  ROOT %out = (f32[3,3,4,8]{3,2,1,0}, f32[8,16,16,4]{3,2,1,0}) tuple(%gk, %gx), sharding={{replicated}, {devices=[2,4,1,1]<=[8]}}
}
)";

// x[b,s,d] . w[d,f] on a 2x2x2 mesh: b over a0, d (contracting) over a1, f over a2.
const char* kDot3DMesh = R"(HloModule dot3d, num_partitions=8

ENTRY %main (x: f32[8,4,32], w: f32[32,16]) -> f32[8,4,16] {
  %x = f32[8,4,32]{2,1,0} parameter(0), sharding={devices=[2,1,2,2]<=[8] last_tile_dim_replicate}
  %w = f32[32,16]{1,0} parameter(1), sharding={devices=[2,2,2]<=[2,2,2]T(1,2,0) last_tile_dim_replicate}
  ROOT %y = f32[8,4,16]{2,1,0} dot(%x, %w), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}
}
)";

// A 4-stage pipeline: the state [stage, micro, d] is sharded by stage; every step each stage
// applies its own weights, then the state shifts one stage along (a roll of the stage dim).
const char* kPipelineLoop = R"(HloModule pipeline, num_partitions=4

%body (p: (s32[], f32[4,8,16], f32[4,16,16])) -> (s32[], f32[4,8,16], f32[4,16,16]) {
  %p = (s32[], f32[4,8,16]{2,1,0}, f32[4,16,16]{2,1,0}) parameter(0), sharding={{replicated}, {devices=[4,1,1]<=[4]}, {devices=[4,1,1]<=[4]}}
  %i = s32[] get-tuple-element(%p), index=0, sharding={replicated}
  %state = f32[4,8,16]{2,1,0} get-tuple-element(%p), index=1, sharding={devices=[4,1,1]<=[4]}
  %w = f32[4,16,16]{2,1,0} get-tuple-element(%p), index=2, sharding={devices=[4,1,1]<=[4]}
  %y = f32[4,8,16]{2,1,0} dot(%state, %w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sharding={devices=[4,1,1]<=[4]}
  %t = f32[4,8,16]{2,1,0} tanh(%y), sharding={devices=[4,1,1]<=[4]}
  %last = f32[1,8,16]{2,1,0} slice(%t), slice={[3:4], [0:8], [0:16]}, sharding={devices=[4,1,1]<=[4]}
  %first = f32[3,8,16]{2,1,0} slice(%t), slice={[0:3], [0:8], [0:16]}, sharding={devices=[4,1,1]<=[4]}
  %rolled = f32[4,8,16]{2,1,0} concatenate(%last, %first), dimensions={0}, sharding={devices=[4,1,1]<=[4]}
  %one = s32[] constant(1), sharding={replicated}
  %next = s32[] add(%i, %one), sharding={replicated}
  ROOT %r = (s32[], f32[4,8,16]{2,1,0}, f32[4,16,16]{2,1,0}) tuple(%next, %rolled, %w), sharding={{replicated}, {devices=[4,1,1]<=[4]}, {devices=[4,1,1]<=[4]}}
}

%cond (q: (s32[], f32[4,8,16], f32[4,16,16])) -> pred[] {
  %q = (s32[], f32[4,8,16]{2,1,0}, f32[4,16,16]{2,1,0}) parameter(0), sharding={{replicated}, {devices=[4,1,1]<=[4]}, {devices=[4,1,1]<=[4]}}
  %j = s32[] get-tuple-element(%q), index=0, sharding={replicated}
  %n = s32[] constant(6), sharding={replicated}
  ROOT %lt = pred[] compare(%j, %n), direction=LT, sharding={replicated}
}

ENTRY %main (x: f32[4,8,16], w: f32[4,16,16]) -> f32[4,8,16] {
  %x = f32[4,8,16]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %w = f32[4,16,16]{2,1,0} parameter(1), sharding={devices=[4,1,1]<=[4]}
  %zero = s32[] constant(0), sharding={replicated}
  %init = (s32[], f32[4,8,16]{2,1,0}, f32[4,16,16]{2,1,0}) tuple(%zero, %x, %w), sharding={{replicated}, {devices=[4,1,1]<=[4]}, {devices=[4,1,1]<=[4]}}
  %loop = (s32[], f32[4,8,16]{2,1,0}, f32[4,16,16]{2,1,0}) while(%init), condition=%cond, body=%body, sharding={{replicated}, {devices=[4,1,1]<=[4]}, {devices=[4,1,1]<=[4]}}
  ROOT %out = f32[4,8,16]{2,1,0} get-tuple-element(%loop), index=1, sharding={devices=[4,1,1]<=[4]}
}
)";

const std::vector<PartitionCase> kCases = {
    // The filter gradient sums over batch and rows: one all-reduce of the small filter, not a
    // gather of the activations; row halos move with collective-permutes.
    {.name = "ConvNetStepWithBatchAndSpatialSharding",
     .hlo = kConvNetStep,
     .expect = {.counts = {{Opcode::kAllGather, 0}},
                .at_least = {{Opcode::kCollectivePermute, 1}},
                .max_comm_bytes = 3 * 3 * 4 * 8 * 4 * 2.0 + 16 * 1024}},
    // Local result [4,4,8] f32 = 512 bytes, all-reduced over pairs: 2*(1/2)*512.
    {.name = "DotOn3DMeshReducesOverTheContractingAxisOnly",
     .hlo = kDot3DMesh,
     .expect = {.counts = {{Opcode::kAllGather, 0}, {Opcode::kAllReduce, 1}}, .comm_bytes = 512.0}},
    // Each step sends one stage's [1,8,16] f32 block to the next stage: 512 bytes, 6 steps.
    {.name = "PipelineShiftIsOneCollectivePermutePerStep",
     .hlo = kPipelineLoop,
     .expect = {.counts = {{Opcode::kAllGather, 0}, {Opcode::kAllReduce, 0}}, .comm_bytes = 6 * 512.0}},
};

PARTITION_CASE_TESTS(ModelPatternsTest, kCases);

}  // namespace
}  // namespace gspmd::partition_test
