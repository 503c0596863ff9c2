// The interpreter's collective kernels: XLA semantics of all-reduce, all-gather,
// reduce-scatter, all-to-all, collective-permute and collective-broadcast over a Communicator.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "ir/computation.h"
#include "runtime/comm/communicator.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/comm/reduction.h"
#include "runtime/interp/evaluator.h"
#include "runtime/interp/kernels.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Which ids replica groups / source-target pairs speak of (XLA's collective op group mode).
enum class GroupMode {
  kCrossReplica,    // no channel_id: replica ids, within each partition
  kCrossPartition,  // channel_id: partition ids, within each replica
  kFlattenedIds,    // channel_id + use_global_device_ids: global device ids
};

// The device's place in the collective: its communicator id and its group (communicator ids,
// in group order).
struct Participation {
  Communicator* communicator = nullptr;
  int64_t device = 0;
  std::vector<int64_t> group;
  int64_t index = 0;  // of device in group
  int64_t size() const { return static_cast<int64_t>(group.size()); }
};

// Translates between the mode's ids and communicator device ids
// (device = replica * num_partitions + partition).
struct IdSpace {
  GroupMode mode = GroupMode::kCrossReplica;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  int64_t replica = 0;
  int64_t partition = 0;

  int64_t size() const {
    if (mode == GroupMode::kCrossReplica) return num_replicas;
    if (mode == GroupMode::kCrossPartition) return num_partitions;
    return num_replicas * num_partitions;
  }
  int64_t MyId() const {
    if (mode == GroupMode::kCrossReplica) return replica;
    if (mode == GroupMode::kCrossPartition) return partition;
    return replica * num_partitions + partition;
  }
  // The device of id `id` in this device's replica (partition) for the cross modes.
  int64_t DeviceOf(int64_t id) const { return DeviceOf(id, replica, partition); }
  int64_t DeviceOf(int64_t id, int64_t in_replica, int64_t in_partition) const {
    if (mode == GroupMode::kCrossReplica) return id * num_partitions + in_partition;
    if (mode == GroupMode::kCrossPartition) return in_replica * num_partitions + id;
    return id;
  }
};

const char* IdKind(GroupMode mode) {
  if (mode == GroupMode::kCrossReplica) return "replica";
  if (mode == GroupMode::kCrossPartition) return "partition";
  return "device";
}

IdSpace MakeIdSpace(const Instruction& instruction, const DeviceContext& context,
                    const Communicator& communicator) {
  IdSpace space;
  if (!instruction.channel_id.has_value()) space.mode = GroupMode::kCrossReplica;
  else if (instruction.use_global_device_ids) space.mode = GroupMode::kFlattenedIds;
  else space.mode = GroupMode::kCrossPartition;
  const int64_t total = communicator.num_devices();
  space.num_partitions = std::max<int64_t>(1, context.num_partitions);
  if (total % space.num_partitions != 0)
    GSPMD_USER_ERROR("%", instruction.name(), ": ", total, " devices cannot hold ",
                     space.num_partitions, " partitions");
  space.num_replicas = total / space.num_partitions;
  space.replica = context.replica_id;
  space.partition = context.partition_id;
  GSPMD_CHECK(space.replica >= 0 && space.replica < space.num_replicas && space.partition >= 0 &&
                  space.partition < space.num_partitions,
              "device context out of range: replica ", space.replica, " partition ",
              space.partition);
  return space;
}

std::string GroupsText(const Instruction& instruction) {
  if (!instruction.has_replica_groups) return "{}";
  return instruction.replica_groups().ToString();
}

Participation Participate(const Instruction& instruction, const DeviceContext& context,
                          Communicator& communicator) {
  const IdSpace space = MakeIdSpace(instruction, context, communicator);
  const int64_t my_id = space.MyId();
  std::vector<std::vector<int64_t>> groups = instruction.replica_groups().Groups(space.size());
  const std::vector<int64_t>* mine = nullptr;
  std::vector<bool> seen(static_cast<size_t>(space.size()), false);
  for (const std::vector<int64_t>& group : groups) {
    for (int64_t id : group) {
      if (id < 0 || id >= space.size())
        GSPMD_USER_ERROR("%", instruction.name(), ": replica_groups=", GroupsText(instruction),
                         " names ", IdKind(space.mode), " ", id, " but there are ", space.size(),
                         " ", IdKind(space.mode), "s");
      if (seen[static_cast<size_t>(id)])
        GSPMD_USER_ERROR("%", instruction.name(), ": replica_groups=", GroupsText(instruction),
                         " lists ", IdKind(space.mode), " ", id, " more than once");
      seen[static_cast<size_t>(id)] = true;
      if (id == my_id) mine = &group;
    }
  }
  if (mine == nullptr)
    GSPMD_USER_ERROR("%", instruction.name(), ": ", IdKind(space.mode), " ", my_id,
                     " is in no group of replica_groups=", GroupsText(instruction),
                     " (every device runs every collective, so every one needs a group)");
  Participation participation;
  participation.communicator = &communicator;
  participation.device = space.replica * space.num_partitions + space.partition;
  for (int64_t id : *mine) {
    if (id == my_id) participation.index = participation.size();
    participation.group.push_back(space.DeviceOf(id));
  }
  return participation;
}

// The array leaves of the operands (a tuple operand contributes its elements).
void CollectLeaves(const Literal& value, std::vector<const Literal*>& leaves) {
  if (!value.shape().IsTuple()) {
    leaves.push_back(&value);
    return;
  }
  for (const Literal& element : value.tuple_elements()) CollectLeaves(element, leaves);
}

std::vector<const Literal*> OperandLeaves(Operands operands) {
  std::vector<const Literal*> leaves;
  for (const Literal* operand : operands) CollectLeaves(*operand, leaves);
  return leaves;
}

std::vector<Shape> ResultLeafShapes(const Instruction& instruction) {
  std::vector<Shape> shapes;
  auto visit = [&](auto&& self, const Shape& shape) -> void {
    if (!shape.IsTuple()) {
      shapes.push_back(shape);
      return;
    }
    for (const Shape& element : shape.tuple_shapes()) self(self, element);
  };
  visit(visit, instruction.shape());
  return shapes;
}

Literal AssembleResult(const Instruction& instruction, std::vector<Literal> leaves) {
  if (!instruction.shape().IsTuple()) {
    GSPMD_CHECK(leaves.size() == 1, "one leaf expected");
    return std::move(leaves[0]);
  }
  return Literal::Tuple(std::move(leaves));
}

void CheckLeafCount(const Instruction& instruction, size_t operand_leaves, size_t result_leaves) {
  if (operand_leaves != result_leaves)
    GSPMD_USER_ERROR("%", instruction.name(), ": ", operand_leaves,
                     " operand arrays but the result shape ", instruction.shape().ToString(),
                     " has ", result_leaves);
}

std::span<const uint8_t> Bytes(const Literal& literal) {
  return {literal.raw(), static_cast<size_t>(literal.byte_size())};
}
std::span<uint8_t> Bytes(Literal& literal) {
  return {literal.raw(), static_cast<size_t>(literal.byte_size())};
}

// A buffer the data passes through on its way (packed chunks, gathered copies to reduce).
std::vector<uint8_t> Scratch(int64_t bytes) {
  return AllocateZeroed(static_cast<uint64_t>(bytes), "the collective's scratch buffer");
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= dims[i];
  return product;
}

int64_t SplitDimension(const Instruction& instruction, const Shape& shape) {
  if (instruction.dimensions.size() != 1)
    GSPMD_USER_ERROR("%", instruction.name(), ": expected dimensions={d} with one dimension");
  int64_t d = instruction.dimensions[0];
  if (d < 0 || d >= shape.rank())
    GSPMD_USER_ERROR("%", instruction.name(), ": dimension ", d, " is out of range for ",
                     shape.ToString(false));
  return d;
}

// A value viewed as [outer][row] around dimension d: outer = product of dims before d, row =
// bytes of one index of the outer dims.
struct RowView {
  int64_t outer = 1;
  int64_t row_bytes = 0;
};
RowView RowsAround(const Shape& shape, int64_t d) {
  const std::vector<int64_t>& dims = shape.dims();
  return {Product(dims, 0, static_cast<size_t>(d)),
          Product(dims, static_cast<size_t>(d), dims.size()) * ElementByteSize(shape.element_type())};
}

// Reorders [outer][n][piece] into [n][outer][piece] (pack) or back (unpack).
void SplitRows(const uint8_t* src, uint8_t* dst, int64_t outer, int64_t n, int64_t piece) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(dst + (j * outer + o) * piece, src + (o * n + j) * piece, static_cast<size_t>(piece));
}
void MergeRows(const uint8_t* src, uint8_t* dst, int64_t outer, int64_t n, int64_t piece) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * n + j) * piece, src + (j * outer + o) * piece, static_cast<size_t>(piece));
}

// Folds `n` equally sized buffers laid out back to back in `gathered` element by element
// through the to_apply computation (the slow path for reducers that are not a plain op).
void GenericReduce(const Instruction& instruction, Evaluator& evaluator, ElementType type,
                   const uint8_t* gathered, int64_t n, int64_t count, uint8_t* out) {
  const Computation& reducer = *instruction.to_apply();
  const size_t element_size = static_cast<size_t>(ElementByteSize(type));
  const size_t stride = element_size * static_cast<size_t>(count);
  Literal accumulator(Shape(type, {}));
  Literal next(Shape(type, {}));
  for (int64_t e = 0; e < count; ++e) {
    const size_t offset = static_cast<size_t>(e) * element_size;
    std::memcpy(accumulator.raw(), gathered + offset, element_size);
    for (int64_t m = 1; m < n; ++m) {
      std::memcpy(next.raw(), gathered + static_cast<size_t>(m) * stride + offset, element_size);
      const Literal* arguments[] = {&accumulator, &next};
      Literal result = evaluator.Call(reducer, arguments);
      if (result.shape().IsTuple() || result.element_type() != type || result.element_count() != 1)
        GSPMD_USER_ERROR("%", instruction.name(), ": to_apply=%", reducer.name(), " returns ",
                         result.shape().ToString(false), ", expected ", ElementTypeName(type), "[]");
      accumulator = std::move(result);
    }
    std::memcpy(out + offset, accumulator.raw(), element_size);
  }
}

BinaryReducer ReducerOf(const Instruction& instruction) {
  if (instruction.called_computations().size() != 1)
    GSPMD_USER_ERROR("%", instruction.name(), ": expected to_apply=<reducer computation>");
  return RecognizeReducer(*instruction.to_apply());
}

// ---- all-reduce ----

Literal AllReduce(const Instruction& instruction, Operands operands, const Participation& group,
                  Evaluator& evaluator) {
  const BinaryReducer reducer = ReducerOf(instruction);
  std::vector<const Literal*> inputs = OperandLeaves(operands);
  std::vector<Shape> shapes = ResultLeafShapes(instruction);
  CheckLeafCount(instruction, inputs.size(), shapes.size());
  std::vector<Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Literal& input = *inputs[i];
    if (!input.shape().Compatible(shapes[i]))
      GSPMD_USER_ERROR("%", instruction.name(), ": operand ", i, " is ", input.shape().ToString(false),
                       " but the result is ", shapes[i].ToString(false));
    Literal result(shapes[i]);
    const ElementType type = input.element_type();
    if (IsNativeReduction(reducer, type)) {
      group.communicator->AllReduce(group.device, group.group, type, reducer, Bytes(input),
                                    Bytes(result));
    } else {
      std::vector<uint8_t> gathered = Scratch(input.byte_size() * group.size());
      group.communicator->AllGather(group.device, group.group, Bytes(input), gathered);
      GenericReduce(instruction, evaluator, type, gathered.data(), group.size(),
                    input.element_count(), result.raw());
    }
    results.push_back(std::move(result));
  }
  return AssembleResult(instruction, std::move(results));
}

// ---- all-gather ----

Literal AllGather(const Instruction& instruction, Operands operands, const Participation& group) {
  std::vector<const Literal*> inputs = OperandLeaves(operands);
  std::vector<Shape> shapes = ResultLeafShapes(instruction);
  CheckLeafCount(instruction, inputs.size(), shapes.size());
  const int64_t n = group.size();
  std::vector<Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Literal& input = *inputs[i];
    const int64_t d = SplitDimension(instruction, input.shape());
    Shape expected = input.shape();
    expected.set_dim(d, input.shape().dim(d) * n);
    if (!expected.Compatible(shapes[i]))
      GSPMD_USER_ERROR("%", instruction.name(), ": gathering ", input.shape().ToString(false),
                       " over a group of ", n, " along dimension ", d, " gives ",
                       expected.ToString(false), ", but the result shape is ",
                       shapes[i].ToString(false));
    Literal result(shapes[i]);
    const RowView rows = RowsAround(input.shape(), d);
    if (rows.outer == 1) {
      group.communicator->AllGather(group.device, group.group, Bytes(input), Bytes(result));
    } else {
      std::vector<uint8_t> gathered = Scratch(result.byte_size());
      group.communicator->AllGather(group.device, group.group, Bytes(input), gathered);
      // gathered is [member][outer][row]; the result is [outer][member][row].
      MergeRows(gathered.data(), result.raw(), rows.outer, n, rows.row_bytes);
    }
    results.push_back(std::move(result));
  }
  return AssembleResult(instruction, std::move(results));
}

// ---- reduce-scatter ----

Literal ReduceScatter(const Instruction& instruction, Operands operands,
                      const Participation& group, Evaluator& evaluator) {
  const BinaryReducer reducer = ReducerOf(instruction);
  std::vector<const Literal*> inputs = OperandLeaves(operands);
  std::vector<Shape> shapes = ResultLeafShapes(instruction);
  CheckLeafCount(instruction, inputs.size(), shapes.size());
  const int64_t n = group.size();
  std::vector<Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Literal& input = *inputs[i];
    const int64_t d = SplitDimension(instruction, input.shape());
    if (input.shape().dim(d) % n != 0)
      GSPMD_USER_ERROR("%", instruction.name(), ": dimension ", d, " of ",
                       input.shape().ToString(false), " does not split into ", n,
                       " equal chunks (the group size)");
    Shape expected = input.shape();
    expected.set_dim(d, input.shape().dim(d) / n);
    if (!expected.Compatible(shapes[i]))
      GSPMD_USER_ERROR("%", instruction.name(), ": scattering ", input.shape().ToString(false),
                       " over a group of ", n, " along dimension ", d, " gives ",
                       expected.ToString(false), ", but the result shape is ",
                       shapes[i].ToString(false));
    Literal result(shapes[i]);
    const ElementType type = input.element_type();
    const RowView rows = RowsAround(input.shape(), d);
    // Chunk j must be contiguous: pack [outer][n][piece] into [n][outer][piece].
    std::vector<uint8_t> packed;
    std::span<const uint8_t> send = Bytes(input);
    if (rows.outer != 1) {
      packed = Scratch(input.byte_size());
      SplitRows(input.raw(), packed.data(), rows.outer, n, rows.row_bytes / n);
      send = packed;
    }
    if (IsNativeReduction(reducer, type)) {
      group.communicator->ReduceScatter(group.device, group.group, type, reducer, send,
                                        Bytes(result));
    } else {
      // Every member sends chunk j to member j, then folds what it got in group order.
      const size_t chunk = static_cast<size_t>(result.byte_size());
      std::vector<uint8_t> received = Scratch(static_cast<int64_t>(chunk) * n);
      std::vector<std::span<const uint8_t>> send_list;
      std::vector<std::span<uint8_t>> recv_list;
      for (int64_t j = 0; j < n; ++j) {
        send_list.push_back(send.subspan(static_cast<size_t>(j) * chunk, chunk));
        recv_list.push_back(std::span<uint8_t>(received).subspan(static_cast<size_t>(j) * chunk, chunk));
      }
      group.communicator->AllToAll(group.device, group.group, send_list, recv_list);
      GenericReduce(instruction, evaluator, type, received.data(), n, result.element_count(),
                    result.raw());
    }
    results.push_back(std::move(result));
  }
  return AssembleResult(instruction, std::move(results));
}

// ---- all-to-all ----

Literal AllToAllArrays(const Instruction& instruction, const std::vector<const Literal*>& inputs,
                       const std::vector<Shape>& shapes, const Participation& group) {
  const int64_t n = group.size();
  std::vector<Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Literal& input = *inputs[i];
    const int64_t d = SplitDimension(instruction, input.shape());
    if (input.shape().dim(d) % n != 0)
      GSPMD_USER_ERROR("%", instruction.name(), ": dimension ", d, " of ",
                       input.shape().ToString(false), " does not split into ", n,
                       " equal chunks (the group size)");
    if (!input.shape().Compatible(shapes[i]))
      GSPMD_USER_ERROR("%", instruction.name(), ": operand ", input.shape().ToString(false),
                       " and result ", shapes[i].ToString(false), " must have the same shape");
    Literal result(shapes[i]);
    const RowView rows = RowsAround(input.shape(), d);
    const int64_t piece = rows.row_bytes / n;
    const size_t chunk = static_cast<size_t>(rows.outer * piece);
    std::vector<uint8_t> packed_send, packed_recv;
    std::span<const uint8_t> send = Bytes(input);
    std::span<uint8_t> recv = Bytes(result);
    if (rows.outer != 1) {
      packed_send = Scratch(static_cast<int64_t>(chunk) * n);
      packed_recv = Scratch(static_cast<int64_t>(chunk) * n);
      SplitRows(input.raw(), packed_send.data(), rows.outer, n, piece);
      send = packed_send;
      recv = packed_recv;
    }
    std::vector<std::span<const uint8_t>> send_list;
    std::vector<std::span<uint8_t>> recv_list;
    for (int64_t j = 0; j < n; ++j) {
      send_list.push_back(send.subspan(static_cast<size_t>(j) * chunk, chunk));
      recv_list.push_back(recv.subspan(static_cast<size_t>(j) * chunk, chunk));
    }
    group.communicator->AllToAll(group.device, group.group, send_list, recv_list);
    if (rows.outer != 1) MergeRows(packed_recv.data(), result.raw(), rows.outer, n, piece);
    results.push_back(std::move(result));
  }
  return AssembleResult(instruction, std::move(results));
}

// Tuple form: operand j goes to member j; result element j comes from member j.
Literal AllToAllTuple(const Instruction& instruction, const std::vector<const Literal*>& inputs,
                      const std::vector<Shape>& shapes, const Participation& group) {
  const int64_t n = group.size();
  if (static_cast<int64_t>(inputs.size()) != n)
    GSPMD_USER_ERROR("%", instruction.name(), ": an all-to-all without dimensions needs one operand "
                     "per group member (", n, "), got ", inputs.size());
  std::vector<Literal> results;
  std::vector<std::span<const uint8_t>> send_list;
  std::vector<std::span<uint8_t>> recv_list;
  for (size_t j = 0; j < inputs.size(); ++j) {
    results.emplace_back(shapes[j]);
    send_list.push_back(Bytes(*inputs[j]));
  }
  for (Literal& result : results) recv_list.push_back(Bytes(result));
  group.communicator->AllToAll(group.device, group.group, send_list, recv_list);
  return AssembleResult(instruction, std::move(results));
}

Literal AllToAll(const Instruction& instruction, Operands operands, const Participation& group) {
  std::vector<const Literal*> inputs = OperandLeaves(operands);
  std::vector<Shape> shapes = ResultLeafShapes(instruction);
  CheckLeafCount(instruction, inputs.size(), shapes.size());
  if (instruction.dimensions.empty()) return AllToAllTuple(instruction, inputs, shapes, group);
  return AllToAllArrays(instruction, inputs, shapes, group);
}

// ---- collective-permute ----

// A collective-permute(-start) on this device: its communicator id, and the pairs in
// communicator ids.
struct PermuteRoute {
  int64_t device = 0;
  std::vector<SourceTargetPair> pairs;
};

PermuteRoute RoutePermute(const Instruction& instruction, const DeviceContext& context,
                          const Communicator& communicator) {
  const IdSpace space = MakeIdSpace(instruction, context, communicator);
  // The pairs name ids of one replica (partition); every replica (partition) runs them, so the
  // communicator gets the union over all of them, in device ids.
  const int64_t copies = space.mode == GroupMode::kCrossReplica    ? space.num_partitions
                         : space.mode == GroupMode::kCrossPartition ? space.num_replicas
                                                                    : 1;
  std::vector<bool> targeted(static_cast<size_t>(space.size()), false);
  for (const SourceTargetPair& pair : instruction.source_target_pairs()) {
    for (int64_t id : {pair.source, pair.target}) {
      if (id < 0 || id >= space.size())
        GSPMD_USER_ERROR("%", instruction.name(), ": source_target_pairs name ", IdKind(space.mode),
                         " ", id, " but there are ", space.size(), " ", IdKind(space.mode), "s");
    }
    if (targeted[static_cast<size_t>(pair.target)])
      GSPMD_USER_ERROR("%", instruction.name(), ": ", IdKind(space.mode), " ", pair.target,
                       " is the target of more than one source_target_pair");
    targeted[static_cast<size_t>(pair.target)] = true;
  }
  std::vector<SourceTargetPair> pairs;
  for (int64_t copy = 0; copy < copies; ++copy) {
    const int64_t replica = space.mode == GroupMode::kCrossPartition ? copy : 0;
    const int64_t partition = space.mode == GroupMode::kCrossReplica ? copy : 0;
    for (const SourceTargetPair& pair : instruction.source_target_pairs())
      pairs.push_back({space.DeviceOf(pair.source, replica, partition),
                       space.DeviceOf(pair.target, replica, partition)});
  }
  return {space.replica * space.num_partitions + space.partition, std::move(pairs)};
}

Literal CollectivePermute(const Instruction& instruction, Operands operands,
                          const DeviceContext& context, Communicator& communicator) {
  const auto [device, pairs] = RoutePermute(instruction, context, communicator);
  std::vector<const Literal*> inputs = OperandLeaves(operands);
  std::vector<Shape> shapes = ResultLeafShapes(instruction);
  CheckLeafCount(instruction, inputs.size(), shapes.size());
  std::vector<Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->shape().Compatible(shapes[i]))
      GSPMD_USER_ERROR("%", instruction.name(), ": operand ", inputs[i]->shape().ToString(false),
                       " and result ", shapes[i].ToString(false), " must have the same shape");
    Literal result(shapes[i]);  // zeros unless some pair targets this device
    communicator.CollectivePermute(device, pairs, Bytes(*inputs[i]), Bytes(result));
    results.push_back(std::move(result));
  }
  return AssembleResult(instruction, std::move(results));
}

// ---- collective-broadcast ----

Literal CollectiveBroadcast(const Instruction& instruction, Operands operands,
                            const Participation& group) {
  std::vector<const Literal*> inputs = OperandLeaves(operands);
  std::vector<Shape> shapes = ResultLeafShapes(instruction);
  CheckLeafCount(instruction, inputs.size(), shapes.size());
  std::vector<Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->shape().Compatible(shapes[i]))
      GSPMD_USER_ERROR("%", instruction.name(), ": operand ", inputs[i]->shape().ToString(false),
                       " and result ", shapes[i].ToString(false), " must have the same shape");
    Literal result = *inputs[i];
    group.communicator->Broadcast(group.device, group.group, 0, Bytes(result));
    results.push_back(std::move(result));
  }
  return AssembleResult(instruction, std::move(results));
}

}  // namespace

int64_t StartAsyncPermute(const Instruction& start, Literal operand, const DeviceContext& context,
                          Communicator& communicator) {
  if (start.operand_count() != 1 || !operand.shape().IsArray())
    GSPMD_USER_ERROR("%", start.name(), ": the runtime runs collective-permute-start of one array operand, not the "
                     "combined form with slices or a tuple");
  const Shape& shape = start.shape();
  if (!shape.IsTuple() || shape.tuple_size() < 2 || !operand.shape().Compatible(shape.tuple_shape(1)))
    GSPMD_USER_ERROR("%", start.name(), ": operand ", operand.shape().ToString(false),
                     " does not match element 1 of the result ", shape.ToString(false));
  const PermuteRoute route = RoutePermute(start, context, communicator);
  return communicator.StartCollectivePermute(route.device, route.pairs, std::move(operand));
}

Literal FinishAsyncPermute(int64_t handle, const DeviceContext& context, Communicator& communicator) {
  const int64_t device = context.replica_id * std::max<int64_t>(1, context.num_partitions) + context.partition_id;
  return communicator.FinishCollectivePermute(device, handle, nullptr);
}

Literal EvaluateCollective(const Instruction& instruction, Operands operands,
                           const DeviceContext& context, Evaluator& evaluator) {
  // Without a communicator the program runs on one device: a private single-device
  // communicator gives the same semantics (groups must then be {0}).
  std::unique_ptr<LocalCommunicator> single_device;
  Communicator* communicator = context.communicator;
  if (communicator == nullptr) {
    if (context.num_partitions > 1)
      GSPMD_USER_ERROR("%", instruction.name(), ": a collective over ", context.num_partitions,
                       " partitions needs a communicator (run the program with the SPMD runtime)");
    single_device = std::make_unique<LocalCommunicator>(1);
    communicator = single_device.get();
  }
  switch (instruction.opcode()) {
    case Opcode::kAllReduce:
      return AllReduce(instruction, operands, Participate(instruction, context, *communicator),
                       evaluator);
    case Opcode::kAllGather:
      return AllGather(instruction, operands, Participate(instruction, context, *communicator));
    case Opcode::kReduceScatter:
      return ReduceScatter(instruction, operands, Participate(instruction, context, *communicator),
                           evaluator);
    case Opcode::kAllToAll:
      return AllToAll(instruction, operands, Participate(instruction, context, *communicator));
    case Opcode::kCollectivePermute:
      return CollectivePermute(instruction, operands, context, *communicator);
    case Opcode::kCollectiveBroadcast:
      return CollectiveBroadcast(instruction, operands,
                                 Participate(instruction, context, *communicator));
    default:
      break;
  }
  GSPMD_CHECK(false, "EvaluateCollective on ", OpcodeName(instruction.opcode()));
  return Literal();
}

}  // namespace gspmd
