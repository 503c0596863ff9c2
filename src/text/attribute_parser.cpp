// HLO text parser, attribute level: the ", name=value" list after an instruction's operands.
// Attributes an opcode uses go into the typed fields of Instruction; any other attribute
// (unknown, or not used by this opcode) is kept verbatim in extra_attributes.
#include <bitset>
#include <unordered_map>
#include <unordered_set>

#include "ir/verifier.h"
#include "sharding/sharding_text.h"
#include "text/attribute_text.h"
#include "text/literal_text.h"
#include "text/shape_text.h"
#include "text/module_parser.h"

namespace gspmd::hlo_text {
namespace {

enum class Attr {
  kSharding, kMetadata, kFrontendAttributes, kBackendConfig,
  kIndex, kDimensions, kIotaDimension, kSlice, kDynamicSliceSizes, kPadding, kWindow,
  kDimLabels, kFeatureGroupCount, kBatchGroupCount,
  kLhsBatchDims, kRhsBatchDims, kLhsContractingDims, kRhsContractingDims,
  kOffsetDims, kCollapsedSliceDims, kStartIndexMap, kOperandBatchingDims,
  kStartIndicesBatchingDims, kIndexVectorDim, kSliceSizes, kIndicesAreSorted,
  kUpdateWindowDims, kInsertedWindowDims, kScatterDimsToOperandDims, kInputBatchingDims,
  kScatterIndicesBatchingDims, kUniqueIndices,
  kToApply, kCondition, kBody, kTrueComputation, kFalseComputation, kBranchComputations,
  kCalls, kSelect, kScatter, kCalledComputations,
  kDirection, kType, kIsStable, kK, kLargest, kCustomCallTarget, kCustomCallHasSideEffect,
  kExponentBits, kMantissaBits, kChannelId, kReplicaGroups, kUseGlobalDeviceIds,
  kConstrainLayout, kSourceTargetPairs, kDistribution,
  kCount
};

const std::unordered_map<std::string_view, Attr>& AttributeTable() {
  static const std::unordered_map<std::string_view, Attr> table = {
      {"sharding", Attr::kSharding}, {"metadata", Attr::kMetadata},
      {"frontend_attributes", Attr::kFrontendAttributes}, {"backend_config", Attr::kBackendConfig},
      {"index", Attr::kIndex}, {"dimensions", Attr::kDimensions}, {"iota_dimension", Attr::kIotaDimension},
      {"slice", Attr::kSlice}, {"dynamic_slice_sizes", Attr::kDynamicSliceSizes}, {"padding", Attr::kPadding},
      {"window", Attr::kWindow}, {"dim_labels", Attr::kDimLabels},
      {"feature_group_count", Attr::kFeatureGroupCount}, {"batch_group_count", Attr::kBatchGroupCount},
      {"lhs_batch_dims", Attr::kLhsBatchDims}, {"rhs_batch_dims", Attr::kRhsBatchDims},
      {"lhs_contracting_dims", Attr::kLhsContractingDims}, {"rhs_contracting_dims", Attr::kRhsContractingDims},
      {"offset_dims", Attr::kOffsetDims}, {"collapsed_slice_dims", Attr::kCollapsedSliceDims},
      {"start_index_map", Attr::kStartIndexMap}, {"operand_batching_dims", Attr::kOperandBatchingDims},
      {"start_indices_batching_dims", Attr::kStartIndicesBatchingDims},
      {"index_vector_dim", Attr::kIndexVectorDim}, {"slice_sizes", Attr::kSliceSizes},
      {"indices_are_sorted", Attr::kIndicesAreSorted}, {"update_window_dims", Attr::kUpdateWindowDims},
      {"inserted_window_dims", Attr::kInsertedWindowDims},
      {"scatter_dims_to_operand_dims", Attr::kScatterDimsToOperandDims},
      {"input_batching_dims", Attr::kInputBatchingDims},
      {"scatter_indices_batching_dims", Attr::kScatterIndicesBatchingDims},
      {"unique_indices", Attr::kUniqueIndices}, {"to_apply", Attr::kToApply}, {"condition", Attr::kCondition},
      {"body", Attr::kBody}, {"true_computation", Attr::kTrueComputation},
      {"false_computation", Attr::kFalseComputation}, {"branch_computations", Attr::kBranchComputations},
      {"calls", Attr::kCalls}, {"select", Attr::kSelect}, {"scatter", Attr::kScatter},
      {"called_computations", Attr::kCalledComputations}, {"direction", Attr::kDirection},
      {"type", Attr::kType}, {"is_stable", Attr::kIsStable}, {"k", Attr::kK}, {"largest", Attr::kLargest},
      {"custom_call_target", Attr::kCustomCallTarget},
      {"custom_call_has_side_effect", Attr::kCustomCallHasSideEffect},
      {"exponent_bits", Attr::kExponentBits}, {"mantissa_bits", Attr::kMantissaBits},
      {"channel_id", Attr::kChannelId}, {"replica_groups", Attr::kReplicaGroups},
      {"use_global_device_ids", Attr::kUseGlobalDeviceIds}, {"constrain_layout", Attr::kConstrainLayout},
      {"source_target_pairs", Attr::kSourceTargetPairs}, {"distribution", Attr::kDistribution},
  };
  return table;
}

bool IsOneOf(Opcode opcode, std::initializer_list<Opcode> opcodes) {
  for (Opcode o : opcodes)
    if (o == opcode) return true;
  return false;
}

// Whether `attr` is a typed field for `opcode` (the printer writes exactly these back).
bool AttributeApplies(Attr attr, Opcode opcode) {
  using O = Opcode;
  switch (attr) {
    case Attr::kSharding: case Attr::kMetadata: case Attr::kFrontendAttributes: case Attr::kBackendConfig:
      return true;
    case Attr::kIndex: return opcode == O::kGetTupleElement;
    case Attr::kDimensions:
      return IsOneOf(opcode, {O::kBroadcast, O::kTranspose, O::kReduce, O::kReverse, O::kConcatenate,
                              O::kAllGather, O::kAllToAll, O::kReduceScatter, O::kSort, O::kMap,
                              O::kGetDimensionSize, O::kSetDimensionSize});
    case Attr::kIotaDimension: return opcode == O::kIota;
    case Attr::kSlice: return opcode == O::kSlice;
    case Attr::kDynamicSliceSizes: return opcode == O::kDynamicSlice;
    case Attr::kPadding: return opcode == O::kPad;
    case Attr::kWindow: return IsOneOf(opcode, {O::kReduceWindow, O::kConvolution, O::kSelectAndScatter});
    case Attr::kDimLabels: case Attr::kFeatureGroupCount: case Attr::kBatchGroupCount:
      return opcode == O::kConvolution;
    case Attr::kLhsBatchDims: case Attr::kRhsBatchDims: case Attr::kLhsContractingDims:
    case Attr::kRhsContractingDims:
      return opcode == O::kDot;
    case Attr::kOffsetDims: case Attr::kCollapsedSliceDims: case Attr::kStartIndexMap:
    case Attr::kOperandBatchingDims: case Attr::kStartIndicesBatchingDims: case Attr::kSliceSizes:
      return opcode == O::kGather;
    case Attr::kIndexVectorDim: case Attr::kIndicesAreSorted:
      return opcode == O::kGather || opcode == O::kScatter;
    case Attr::kUpdateWindowDims: case Attr::kInsertedWindowDims: case Attr::kScatterDimsToOperandDims:
    case Attr::kInputBatchingDims: case Attr::kScatterIndicesBatchingDims: case Attr::kUniqueIndices:
      return opcode == O::kScatter;
    case Attr::kToApply:
      return IsOneOf(opcode, {O::kReduce, O::kReduceWindow, O::kMap, O::kSort, O::kCall, O::kAllReduce,
                              O::kReduceScatter, O::kScatter, O::kCustomCall, O::kAllReduceStart, O::kScan});
    case Attr::kCondition: case Attr::kBody: return opcode == O::kWhile;
    case Attr::kTrueComputation: case Attr::kFalseComputation: case Attr::kBranchComputations:
      return opcode == O::kConditional;
    case Attr::kCalls: return IsOneOf(opcode, {O::kFusion, O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone});
    case Attr::kSelect: case Attr::kScatter: return opcode == O::kSelectAndScatter;
    case Attr::kCalledComputations: return opcode == O::kCustomCall;
    case Attr::kDirection: case Attr::kType: return opcode == O::kCompare;
    case Attr::kIsStable: return opcode == O::kSort || opcode == O::kTopK;
    case Attr::kK: case Attr::kLargest: return opcode == O::kTopK;
    case Attr::kCustomCallTarget: case Attr::kCustomCallHasSideEffect: return opcode == O::kCustomCall;
    case Attr::kExponentBits: case Attr::kMantissaBits: return opcode == O::kReducePrecision;
    case Attr::kChannelId: return IsCollective(opcode);
    case Attr::kReplicaGroups: return IsCollective(opcode) && opcode != O::kCollectivePermute;
    case Attr::kUseGlobalDeviceIds:
      return IsOneOf(opcode, {O::kAllReduce, O::kAllGather, O::kReduceScatter});
    case Attr::kConstrainLayout: return IsOneOf(opcode, {O::kAllReduce, O::kAllGather, O::kAllToAll});
    case Attr::kSourceTargetPairs: return opcode == O::kCollectivePermute;
    case Attr::kDistribution: return opcode == O::kRng;
    case Attr::kCount: return false;
  }
  return false;
}

// An attribute the opcode needs to make sense, with how it is written.
std::string_view MissingRequiredAttribute(Opcode opcode, const std::bitset<static_cast<size_t>(Attr::kCount)>& seen) {
  auto missing = [&](Attr attr) { return !seen[static_cast<size_t>(attr)]; };
  switch (opcode) {
    case Opcode::kGetTupleElement: return missing(Attr::kIndex) ? "index=" : "";
    case Opcode::kCompare: return missing(Attr::kDirection) ? "direction=" : "";
    case Opcode::kIota: return missing(Attr::kIotaDimension) ? "iota_dimension=" : "";
    case Opcode::kSlice: return missing(Attr::kSlice) ? "slice=" : "";
    case Opcode::kDynamicSlice: return missing(Attr::kDynamicSliceSizes) ? "dynamic_slice_sizes=" : "";
    case Opcode::kPad: return missing(Attr::kPadding) ? "padding=" : "";
    case Opcode::kCustomCall: return missing(Attr::kCustomCallTarget) ? "custom_call_target=" : "";
    case Opcode::kTopK: return missing(Attr::kK) ? "k=" : "";
    case Opcode::kConvolution: return missing(Attr::kDimLabels) ? "dim_labels=" : "";
    case Opcode::kTranspose: case Opcode::kReduce: case Opcode::kConcatenate:
      return missing(Attr::kDimensions) ? "dimensions=" : "";
    case Opcode::kGather:
      if (missing(Attr::kOffsetDims)) return "offset_dims=";
      if (missing(Attr::kIndexVectorDim)) return "index_vector_dim=";
      return missing(Attr::kSliceSizes) ? "slice_sizes=" : "";
    case Opcode::kScatter:
      if (missing(Attr::kUpdateWindowDims)) return "update_window_dims=";
      return missing(Attr::kIndexVectorDim) ? "index_vector_dim=" : "";
    default:
      return "";
  }
}

// Attribute names XLA's HLO syntax defines that this IR keeps verbatim (extra_attributes):
// they round-trip but nothing here interprets them. Any other name is an error, as in XLA.
bool IsKnownXlaAttribute(std::string_view name) {
  static const std::unordered_set<std::string_view> names = {
      "statistics", "parameter_replication", "control-predecessors", "origin", "result_accuracy",
      "mode", "slice_sizes", "async_execution_thread", "output_to_operand_aliasing",
      "cross_program_prefetch_index", "is_cross_program_prefetch", "inferred_dimension", "is_host_transfer",
      "is_composite", "conv_kind", "operand_precision", "fft_type", "fft_length", "left_side", "lower",
      "unit_diagonal", "transpose_a", "num_carries", "is_reverse", "is_associative", "epsilon",
      "feature_index", "kind", "infeed_config", "outfeed_config", "outfeed_shape", "delta", "algorithm",
      "operand_layout_constraints", "padding_type", "literal", "schedule", "api_version",
      "lhs_ragged_dims", "rhs_group_dims", "domain", "sparsity", "window", "dim_labels",
      "feature_group_count", "batch_group_count", "custom_call_has_side_effect", "to_apply", "calls",
      "called_computations", "dimensions", "channel_id", "replica_groups", "use_global_device_ids",
      "constrain_layout", "source_target_pairs", "distribution", "split_dimension", "async_group_id",
      "async_wrapped_computation", "frontend_attributes", "sharding", "metadata", "backend_config",
      "index", "iota_dimension", "k", "largest", "is_stable", "condition", "body", "select", "scatter",
      "slice", "dynamic_slice_sizes", "padding", "exponent_bits", "mantissa_bits", "true_computation",
      "false_computation", "branch_computations", "custom_call_target", "direction", "type",
      "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims", "offset_dims",
      "collapsed_slice_dims", "start_index_map", "index_vector_dim", "indices_are_sorted",
      "operand_batching_dims", "start_indices_batching_dims", "update_window_dims",
      "inserted_window_dims", "scatter_dims_to_operand_dims", "unique_indices", "input_batching_dims",
      "scatter_indices_batching_dims", "precision_config", "custom_call_schedule", "raw_backend_config",
  };
  return names.count(name) > 0;
}

}  // namespace

// literal=s32[2]{0} {1, 2} or literal=( s32[2]{0} {1, 2}, pred[] true ) (custom-call): shapes
// with constant values, checked and kept verbatim.
std::string_view ModuleParser::ReadShapedLiteralText() {
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  ReadShapedLiteral(0);
  return scanner_.text().substr(start, scanner_.pos() - start);
}

void ModuleParser::ReadShapedLiteral(int depth) {
  constexpr int kMaxLiteralNesting = 64;
  if (depth > kMaxLiteralNesting) scanner_.ErrorExpected("a literal nested at most 64 tuples deep");
  if (scanner_.TryConsume('(')) {
    if (scanner_.TryConsume(')')) return;
    do {
      ReadShapedLiteral(depth + 1);
    } while (scanner_.TryConsume(','));
    scanner_.Expect(')', "',' or ')' in the tuple literal");
    return;
  }
  Shape shape = ParseShape(scanner_);
  ParseLiteral(scanner_, shape);
}

namespace {

// Removes /* ... */ comments (XLA writes /*index=5*/ inside long tuple shardings) and
// remembers where each kept character came from.
std::string StripComments(std::string_view text, std::vector<size_t>& origin) {
  std::string out;
  out.reserve(text.size());
  origin.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      if (end != std::string_view::npos) {
        i = end + 1;
        continue;
      }
    }
    out.push_back(text[i]);
    origin.push_back(i);
  }
  origin.push_back(text.size());
  return out;
}

}  // namespace

// Called computations written as separate attributes, assembled once all are read.
struct ModuleParser::CalledSlots {
  Computation* to_apply = nullptr;
  Computation* condition = nullptr;
  Computation* body = nullptr;
  Computation* true_computation = nullptr;
  Computation* false_computation = nullptr;
  Computation* select = nullptr;
  Computation* scatter = nullptr;
  std::vector<Computation*> list;  // branch_computations / called_computations
  bool has_list = false;
};

std::vector<Computation*> ModuleParser::ParseComputationList() {
  scanner_.Expect('{', "'{' to start a list of computations");
  std::vector<Computation*> list;
  if (scanner_.TryConsume('}')) return list;
  do {
    scanner_.SkipSpace();
    size_t pos = scanner_.pos();
    list.push_back(ResolveComputation(scanner_.ReadName("a computation name"), pos));
  } while (scanner_.TryConsume(','));
  scanner_.Expect('}', "',' or '}' in the list of computations");
  return list;
}

void ModuleParser::ParseShardingAttribute(Instruction& instruction) {
  // Checked against the shape (and nested to match a tuple shape) once the instruction is
  // complete: the shape may still have to be inferred.
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  sharding_pos_ = start;
  if (scanner_.Peek() != '{') scanner_.ErrorExpected("'{' to start the sharding");
  std::string_view raw = scanner_.ReadBalanced();
  std::vector<size_t> origin;
  std::string text = StripComments(raw, origin);
  // Many instructions repeat the same few shardings: parse each distinct text once.
  auto cached = sharding_cache_.find(text);
  if (cached != sharding_cache_.end()) {
    instruction.set_sharding(cached->second);
    return;
  }
  Sharding sharding;
  try {
    sharding = ParseSharding(text);
  } catch (const ShardingSyntaxError& e) {
    size_t offset = e.offset < origin.size() ? origin[e.offset] : raw.size();
    scanner_.ErrorAt(start + offset, StrCat("bad sharding: ", e.what()));
  } catch (const UserError& e) {
    scanner_.ErrorAt(start, StrCat("bad sharding: ", e.what()));
  }
  instruction.set_sharding(sharding);
  sharding_cache_.emplace(std::move(text), std::move(sharding));
}

void ModuleParser::ParseReplicaGroupsAttribute(Instruction& instruction) {
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  std::string_view raw = scanner_.ReadRawValue("replica groups such as {{0,1},{2,3}} or [2,4]<=[8]");
  std::vector<size_t> origin;
  std::string text = StripComments(raw, origin);
  try {
    instruction.mutable_replica_groups() = ParseReplicaGroups(text);
  } catch (const ShardingSyntaxError& e) {
    size_t offset = e.offset < origin.size() ? origin[e.offset] : raw.size();
    scanner_.ErrorAt(start + offset, StrCat("bad replica_groups: ", e.what()));
  } catch (const UserError& e) {
    scanner_.ErrorAt(start, StrCat("bad replica_groups: ", e.what()));
  }
  instruction.has_replica_groups = true;
}

void ModuleParser::ParseAttributes(Instruction& instruction, size_t opcode_pos, bool allow_attributes) {
  std::bitset<static_cast<size_t>(Attr::kCount)> seen;
  CalledSlots called;
  Opcode opcode = instruction.opcode();
  const auto& table = AttributeTable();
  while (allow_attributes) {
    size_t before = scanner_.pos();  // so the caller can see what follows on this line
    if (!scanner_.TryConsume(',')) {
      scanner_.set_pos(before);
      break;
    }
    scanner_.SkipSpace();
    size_t name_pos = scanner_.pos();
    std::string_view name = scanner_.ReadName("an attribute name");
    scanner_.Expect('=', What("'=' after attribute ", name));
    auto it = table.find(name);
    bool typed = it != table.end() && AttributeApplies(it->second, opcode);
    if (!typed && it == table.end() && !IsKnownXlaAttribute(name))
      scanner_.ErrorAt(name_pos, StrCat("unknown attribute '", name, "' on ", OpcodeName(opcode),
                                        ": expected an attribute XLA defines (such as sharding=, metadata=, ",
                                        "dimensions=)"));
    if (!typed) {
      for (const auto& [existing, unused] : instruction.extra_attributes())
        if (existing == name) scanner_.ErrorAt(name_pos, StrCat("duplicate attribute ", name));
      std::string_view value = name == "literal" ? ReadShapedLiteralText()
                                                 : scanner_.ReadRawValue(What("a value for attribute ", name));
      instruction.mutable_extra_attributes().emplace_back(std::string(name), std::string(value));
      continue;
    }
    Attr attr = it->second;
    if (seen[static_cast<size_t>(attr)]) scanner_.ErrorAt(name_pos, StrCat("duplicate attribute ", name));
    seen[static_cast<size_t>(attr)] = true;
    auto read_int = [&] { return scanner_.ReadInt(What("an integer value for ", name)); };
    auto read_computation = [&] {
      scanner_.SkipSpace();
      size_t pos = scanner_.pos();
      return ResolveComputation(scanner_.ReadName(What("a computation name for ", name)), pos);
    };
    // Written only when the attribute is present, so other instructions keep no out-of-line
    // attributes.
    auto gather = [&]() -> GatherDimensionNumbers& { return instruction.mutable_gather_dims(); };
    auto scatter = [&]() -> ScatterDimensionNumbers& { return instruction.mutable_scatter_dims(); };
    switch (attr) {
      case Attr::kSharding: ParseShardingAttribute(instruction); break;
      case Attr::kMetadata: {
        std::string_view value = scanner_.ReadBalanced();
        if (value.front() != '{') scanner_.ErrorAt(name_pos, "expected '{' after metadata=");
        instruction.metadata = std::string(value.substr(1, value.size() - 2));
        break;
      }
      case Attr::kFrontendAttributes: {
        std::string_view value = scanner_.ReadBalanced();
        if (value.front() != '{') scanner_.ErrorAt(name_pos, "expected '{' after frontend_attributes=");
        instruction.frontend_attributes = std::string(value.substr(1, value.size() - 2));
        break;
      }
      case Attr::kBackendConfig:
        instruction.backend_config = std::string(scanner_.ReadRawValue("a backend_config value"));
        break;
      case Attr::kIndex: instruction.tuple_index = read_int(); break;
      case Attr::kDimensions: instruction.dimensions = ParseIntList(scanner_); break;
      case Attr::kIotaDimension: instruction.iota_dimension = read_int(); break;
      case Attr::kSlice: instruction.mutable_slice() = ParseSlice(scanner_); break;
      case Attr::kDynamicSliceSizes: instruction.mutable_dynamic_slice_sizes() = ParseIntList(scanner_); break;
      case Attr::kPadding: instruction.mutable_padding() = ParsePadding(scanner_); break;
      case Attr::kWindow: instruction.mutable_window() = ParseWindow(scanner_); break;
      case Attr::kDimLabels: instruction.mutable_conv_dims() = ParseDimLabels(scanner_); break;
      case Attr::kFeatureGroupCount: instruction.feature_group_count = read_int(); break;
      case Attr::kBatchGroupCount: instruction.batch_group_count = read_int(); break;
      case Attr::kLhsBatchDims: instruction.mutable_dot_dims().lhs_batch_dims = ParseIntList(scanner_); break;
      case Attr::kRhsBatchDims: instruction.mutable_dot_dims().rhs_batch_dims = ParseIntList(scanner_); break;
      case Attr::kLhsContractingDims: instruction.mutable_dot_dims().lhs_contracting_dims = ParseIntList(scanner_); break;
      case Attr::kRhsContractingDims: instruction.mutable_dot_dims().rhs_contracting_dims = ParseIntList(scanner_); break;
      case Attr::kOffsetDims: gather().offset_dims = ParseIntList(scanner_); break;
      case Attr::kCollapsedSliceDims: gather().collapsed_slice_dims = ParseIntList(scanner_); break;
      case Attr::kStartIndexMap: gather().start_index_map = ParseIntList(scanner_); break;
      case Attr::kOperandBatchingDims: gather().operand_batching_dims = ParseIntList(scanner_); break;
      case Attr::kStartIndicesBatchingDims: gather().start_indices_batching_dims = ParseIntList(scanner_); break;
      case Attr::kIndexVectorDim:
        if (opcode == Opcode::kGather)
          gather().index_vector_dim = read_int();
        else
          scatter().index_vector_dim = read_int();
        break;
      case Attr::kSliceSizes: instruction.mutable_gather_slice_sizes() = ParseIntList(scanner_); break;
      case Attr::kIndicesAreSorted: instruction.indices_are_sorted = ParseBool(scanner_); break;
      case Attr::kUpdateWindowDims: scatter().update_window_dims = ParseIntList(scanner_); break;
      case Attr::kInsertedWindowDims: scatter().inserted_window_dims = ParseIntList(scanner_); break;
      case Attr::kScatterDimsToOperandDims: scatter().scatter_dims_to_operand_dims = ParseIntList(scanner_); break;
      case Attr::kInputBatchingDims: scatter().input_batching_dims = ParseIntList(scanner_); break;
      case Attr::kScatterIndicesBatchingDims: scatter().scatter_indices_batching_dims = ParseIntList(scanner_); break;
      case Attr::kUniqueIndices: instruction.unique_indices = ParseBool(scanner_); break;
      case Attr::kToApply: called.to_apply = read_computation(); break;
      case Attr::kCondition: called.condition = read_computation(); break;
      case Attr::kBody: called.body = read_computation(); break;
      case Attr::kTrueComputation: called.true_computation = read_computation(); break;
      case Attr::kFalseComputation: called.false_computation = read_computation(); break;
      case Attr::kCalls: called.to_apply = read_computation(); break;
      case Attr::kSelect: called.select = read_computation(); break;
      case Attr::kScatter: called.scatter = read_computation(); break;
      case Attr::kBranchComputations: case Attr::kCalledComputations:
        called.list = ParseComputationList();
        called.has_list = true;
        break;
      case Attr::kDirection: instruction.comparison_direction = ParseComparisonDirection(scanner_); break;
      case Attr::kType: instruction.comparison_type = ParseComparisonType(scanner_); break;
      case Attr::kIsStable: instruction.is_stable = ParseBool(scanner_); break;
      case Attr::kK: instruction.k = read_int(); break;
      case Attr::kLargest: instruction.largest = ParseBool(scanner_); break;
      case Attr::kCustomCallTarget: {
        std::string_view quoted = scanner_.ReadQuoted("a quoted custom_call_target");
        instruction.custom_call_target = std::string(quoted.substr(1, quoted.size() - 2));
        break;
      }
      case Attr::kCustomCallHasSideEffect: instruction.custom_call_has_side_effect = ParseBool(scanner_); break;
      case Attr::kExponentBits: instruction.exponent_bits = read_int(); break;
      case Attr::kMantissaBits: instruction.mantissa_bits = read_int(); break;
      case Attr::kChannelId: instruction.channel_id = read_int(); break;
      case Attr::kReplicaGroups: ParseReplicaGroupsAttribute(instruction); break;
      case Attr::kUseGlobalDeviceIds: instruction.use_global_device_ids = ParseBool(scanner_); break;
      case Attr::kConstrainLayout: instruction.constrain_layout = ParseBool(scanner_); break;
      case Attr::kSourceTargetPairs: instruction.mutable_source_target_pairs() = ParseSourceTargetPairs(scanner_); break;
      case Attr::kDistribution: {
        std::string_view word = scanner_.ReadWord();
        if (word.empty()) scanner_.ErrorExpected("a distribution such as rng_uniform");
        instruction.mutable_rng_distribution() = std::string(word);
        break;
      }
      case Attr::kCount: break;
    }
  }

  std::string_view missing = MissingRequiredAttribute(opcode, seen);
  // A broadcast of a scalar may leave out dimensions={} (XLA infers it).
  bool scalar_broadcast = opcode == Opcode::kBroadcast && instruction.operand_count() == 1 &&
                          instruction.operand(0)->shape().IsArray() && instruction.operand(0)->shape().rank() == 0;
  if (opcode == Opcode::kBroadcast && !scalar_broadcast && !seen[static_cast<size_t>(Attr::kDimensions)])
    missing = "dimensions=";
  if (!missing.empty())
    scanner_.ErrorAt(opcode_pos, StrCat(OpcodeName(opcode), " expects attribute ", missing));

  // Assemble the called computations in the order Instruction documents.
  std::vector<Computation*> computations;
  switch (opcode) {
    case Opcode::kWhile:
      if (called.condition) computations.push_back(called.condition);
      if (called.body) computations.push_back(called.body);
      break;
    case Opcode::kSelectAndScatter:
      if (called.select) computations.push_back(called.select);
      if (called.scatter) computations.push_back(called.scatter);
      break;
    case Opcode::kConditional:
      instruction.conditional_uses_branch_list = called.has_list;
      if (called.has_list) {
        computations = called.list;
        break;
      }
      if (!called.true_computation || !called.false_computation)
        scanner_.ErrorAt(opcode_pos, "conditional expects branch_computations={...} or true_computation= and false_computation=");
      computations = {called.true_computation, called.false_computation};
      break;
    case Opcode::kCustomCall:
      computations = called.list;
      if (called.to_apply) computations.insert(computations.begin(), called.to_apply);
      break;
    default:
      if (called.to_apply) computations.push_back(called.to_apply);
      break;
  }
  instruction.set_called_computations(std::move(computations));
}

}  // namespace gspmd::hlo_text
