// The GShard mixture-of-experts feed-forward layer (Lepikhin et al. 2020, Algorithm 1):
// top-2 gating with random routing of the second expert, expert capacity per group,
// dispatch and combine einsums, the auxiliary load-balancing loss and dropped-token counts.
#pragma once

#include <cstdint>

#include "builder/mesh_split.h"
#include "builder/program_builder.h"

namespace gspmd {

class TrainStepBuilder;

struct MoeWeights {
  Instruction* gate;  // wg [M, E]
  Instruction* wi;    // [E, M, H]
  Instruction* wo;    // [E, H, M]
};

struct MoeSettings {
  int64_t capacity = 1;         // slots per expert and group
  bool random_routing = true;   // keep the second expert with probability 2 * its gate
  uint32_t salt = 0;            // seeds this layer's random routing
  PartitionSpec tokens;         // [G, S, M] (and the [G, S, E] gates)
  PartitionSpec dispatched;     // [E, G, C, M]
};

struct MoeResult {
  Instruction* y;          // [G, S, M]; zero for tokens every chosen expert dropped
  Instruction* aux_loss;   // f32[]: mean over groups and experts of density * density_proxy * E^2
  Instruction* routed;     // f32[]: token-to-expert assignments wanted (top-1 + kept top-2)
  Instruction* dropped;    // f32[]: of those, assignments past an expert's capacity
};

// x [G, S, M] grouped tokens. Per group:
//   gates = softmax(x wg); e1 = argmax gates; e2 = argmax of the rest;
//   g1, g2 = gates of e1, e2 renormalized to sum to 1;
//   e2 is kept when uniform(salt, step, g, s) < 2 g2 (random routing);
//   each expert takes the first `capacity` tokens routed to it in token order, top-1
//   choices before top-2 ones; the rest are dropped (their share of y is zero);
//   y = sum over kept choices of gate * expert(x), with expert(x) = relu(x wi[e]) wo[e].
// The uniform numbers are a hash of (salt, step, group, token): the same on any mesh.
MoeResult MoeLayer(ComputationBuilder& b, TrainStepBuilder& t, Instruction* x, const MoeWeights& w,
                   Instruction* step, const MoeSettings& settings);

// The uniform [0, 1) numbers MoeLayer draws for the second expert, f32[G, S]; exposed for
// tests that check the routing on their own.
float RoutingUniform(uint32_t salt, int32_t step, int64_t group, int64_t token, int64_t group_size);

}  // namespace gspmd
