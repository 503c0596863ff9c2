// CollectiveFactory: the one place the partitioner creates collectives, so their form (channel
// ids, replica group text, reducer computations) is decided once.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "ir/hlo_builder.h"
#include "ir/module.h"
#include "partitioner/device_axes.h"

namespace gspmd {

// Creates all-gather, all-reduce, reduce-scatter, all-to-all and collective-permute with XLA's
// conventions: a fresh channel_id each, use_global_device_ids=true where XLA prints it, and
// replica groups in iota form ("[2,4]<=[8]", "[4,2]<=[2,4]T(1,0)") whenever they are groups
// over device axes, so the text does not grow with the device count.
// What a device holds where it has no piece of a value assembled by SumOfPieces: -0.0 for
// floats (x + -0.0 == x for every x, a -0.0 included; +0.0 would turn -0.0 into +0.0), 0
// (false) otherwise.
double ExactSumIdentity(ElementType type);

class CollectiveFactory {
 public:
  CollectiveFactory(Module* module, NameUniquer* names, int64_t num_devices)
      : module_(module), names_(names), num_devices_(num_devices) {}

  int64_t num_devices() const { return num_devices_; }
  // Channel ids handed out from here on start at `first` (above any channel_id the input
  // module already uses, e.g. user collectives in manual regions).
  void set_next_channel_id(int64_t first) { next_channel_id_ = first; }

  // Groups of devices that differ only in `axes` (first axis most significant).
  ReplicaGroups GroupsOverAxes(const std::vector<DeviceAxis>& axes) const;
  // Explicit groups; printed in iota form when they happen to be one.
  ReplicaGroups GroupsFromList(const std::vector<std::vector<int64_t>>& groups) const;

  Instruction* AllGather(HloBuilder& b, Instruction* operand, int64_t dim, const ReplicaGroups& groups,
                         int64_t group_size);
  Instruction* AllReduce(HloBuilder& b, Instruction* operand, const ReplicaGroups& groups,
                         Opcode reduction);
  // Assembles pieces by an all-reduce: each device holds its part of the value and
  // ExactSumIdentity elsewhere, summed (or'd, for predicates) over the groups, bit for bit.
  Instruction* SumOfPieces(HloBuilder& b, Instruction* operand, const ReplicaGroups& groups);
  Instruction* ReduceScatter(HloBuilder& b, Instruction* operand, int64_t dim,
                             const ReplicaGroups& groups, int64_t group_size, Opcode reduction);
  // XLA's array all-to-all: splits `dim` into group_size chunks, chunk j goes to member j, and
  // what arrives is concatenated along `dim` in member order.
  Instruction* AllToAll(HloBuilder& b, Instruction* operand, int64_t dim, const ReplicaGroups& groups);
  Instruction* CollectivePermute(HloBuilder& b, Instruction* operand,
                                 std::vector<SourceTargetPair> pairs);

  // The scalar computation applying `reduction` (add, maximum, ...) to two values of `type`,
  // created once per module.
  Computation* Reducer(Opcode reduction, ElementType type);

 private:
  void Stamp(Instruction* collective, bool global_device_ids);

  Module* module_;
  NameUniquer* names_;
  int64_t num_devices_;
  int64_t next_channel_id_ = 1;
  std::map<std::pair<Opcode, ElementType>, Computation*> reducers_;
};

}  // namespace gspmd
