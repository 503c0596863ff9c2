// The table of instruction attributes XLA's HLO text can carry (see attribute_table.h).
#include "text/attribute_table.h"

#include <unordered_map>

namespace gspmd::hlo_text {
namespace {

using A = Attr;

// Every attribute XLA writes on an instruction, and where. Taken from XLA's printer
// (xla/hlo/ir/hlo_instruction.cc: PrintExtraAttributes and the shared attributes after it;
// xla/hlo/ir/hlo_instructions.cc: each class's PrintExtraAttributesImpl, the dimension-number
// printers) and parser (xla/hlo/parser/hlo_parser.cc: ParseInstructionRhs, CreateInstruction),
// read at openxla/xla of January 2025 and of 2025 as the search index holds it, plus the
// spellings older XLA versions printed. Where two spellings mean one thing both are here:
// compare's total order is type=TOTALORDER in every XLA source read, and order=TOTAL as
// newer programs write it (Comparison::Order, which replaced Comparison::Type).
// Names with A::kVerbatim round-trip as written and are not interpreted.
constexpr AttributeInfo kAttributes[] = {
    // On every instruction.
    {"sharding", A::kSharding, "any"},
    {"metadata", A::kMetadata, "any"},
    {"frontend_attributes", A::kFrontendAttributes, "any"},
    {"backend_config", A::kBackendConfig, "any"},
    {"raw_backend_config", A::kVerbatim, "any (older XLA)"},
    {"statistics", A::kVerbatim, "any"},
    {"control-predecessors", A::kVerbatim, "any"},
    {"origin", A::kVerbatim, "any (the original value)"},
    {"parameter_replication", A::kVerbatim, "parameter"},
    {"result_accuracy", A::kVerbatim, "exp, log, tanh, sqrt, ... (unary math ops)"},
    {"mode", A::kVerbatim, "kept from this list's first version; not found in XLA's printer"},
    // Shapes and indexing.
    {"index", A::kIndex, "get-tuple-element"},
    {"dimensions", A::kDimensions,
     "broadcast, transpose, reduce, reverse, concatenate, map, sort, scan, get-dimension-size, "
     "set-dimension-size, all-gather, all-reduce, reduce-scatter, all-to-all, ragged-all-to-all"},
    {"iota_dimension", A::kIotaDimension, "iota"},
    {"slice", A::kSlice, "slice"},
    {"dynamic_slice_sizes", A::kDynamicSliceSizes, "dynamic-slice"},
    {"padding", A::kPadding, "pad"},
    {"inferred_dimension", A::kVerbatim, "reshape"},
    {"split_dimension", A::kVerbatim, "all-to-all (older XLA)"},
    // Windows and convolutions.
    {"window", A::kWindow, "convolution, reduce-window, select-and-scatter, custom-call"},
    {"dim_labels", A::kDimLabels, "convolution, custom-call"},
    {"feature_group_count", A::kFeatureGroupCount, "convolution, custom-call"},
    {"batch_group_count", A::kBatchGroupCount, "convolution, custom-call"},
    {"conv_kind", A::kVerbatim, "convolution"},
    {"padding_type", A::kVerbatim, "custom-call"},
    // Dots.
    {"lhs_batch_dims", A::kLhsBatchDims, "dot, ragged-dot"},
    {"rhs_batch_dims", A::kRhsBatchDims, "dot, ragged-dot"},
    {"lhs_contracting_dims", A::kLhsContractingDims, "dot, ragged-dot"},
    {"rhs_contracting_dims", A::kRhsContractingDims, "dot, ragged-dot"},
    {"lhs_ragged_dims", A::kVerbatim, "ragged-dot"},
    {"rhs_group_dims", A::kVerbatim, "ragged-dot"},
    {"operand_precision", A::kVerbatim, "dot, ragged-dot, convolution, custom-call"},
    {"precision_config", A::kVerbatim, "dot, convolution (older XLA)"},
    {"algorithm", A::kVerbatim, "dot (precision algorithm), rng-bit-generator"},
    {"sparsity", A::kVerbatim, "dot"},
    // Gather and scatter.
    {"offset_dims", A::kOffsetDims, "gather"},
    {"collapsed_slice_dims", A::kCollapsedSliceDims, "gather"},
    {"start_index_map", A::kStartIndexMap, "gather"},
    {"operand_batching_dims", A::kOperandBatchingDims, "gather"},
    {"start_indices_batching_dims", A::kStartIndicesBatchingDims, "gather"},
    {"slice_sizes", A::kSliceSizes, "gather, collective-permute (combined permutes)"},
    {"index_vector_dim", A::kIndexVectorDim, "gather, scatter"},
    {"indices_are_sorted", A::kIndicesAreSorted, "gather, scatter"},
    {"update_window_dims", A::kUpdateWindowDims, "scatter"},
    {"inserted_window_dims", A::kInsertedWindowDims, "scatter"},
    {"scatter_dims_to_operand_dims", A::kScatterDimsToOperandDims, "scatter"},
    {"input_batching_dims", A::kInputBatchingDims, "scatter"},
    {"scatter_indices_batching_dims", A::kScatterIndicesBatchingDims, "scatter"},
    {"unique_indices", A::kUniqueIndices, "scatter"},
    // Called computations.
    {"to_apply", A::kToApply,
     "reduce, reduce-window, map, sort, scan, call, scatter, all-reduce, all-reduce-start, "
     "reduce-scatter, custom-call"},
    {"condition", A::kCondition, "while"},
    {"body", A::kBody, "while"},
    {"true_computation", A::kTrueComputation, "conditional"},
    {"false_computation", A::kFalseComputation, "conditional"},
    {"branch_computations", A::kBranchComputations, "conditional"},
    {"calls", A::kCalls, "fusion, async-start, async-update, async-done"},
    {"select", A::kSelect, "select-and-scatter"},
    {"scatter", A::kScatter, "select-and-scatter"},
    {"called_computations", A::kCalledComputations, "custom-call"},
    {"is_composite", A::kVerbatim, "call"},
    {"kind", A::kVerbatim, "fusion"},
    {"output_to_operand_aliasing", A::kVerbatim, "fusion, custom-call"},
    {"async_execution_thread", A::kVerbatim, "async-start, async-update, async-done"},
    {"async_group_id", A::kVerbatim, "async-start, async-update, async-done (older XLA)"},
    {"async_wrapped_computation", A::kVerbatim, "async-start (older XLA)"},
    // Compare, sort, top-k.
    {"direction", A::kDirection, "compare"},
    {"type", A::kType, "compare (FLOAT, TOTALORDER, SIGNED, UNSIGNED)"},
    {"order", A::kOrder, "compare (TOTAL, PARTIAL: the same orders as type=)"},
    {"is_stable", A::kIsStable, "sort"},
    {"k", A::kK, "topk"},
    {"largest", A::kLargest, "topk"},
    // Scan.
    {"is_reverse", A::kVerbatim, "scan"},
    {"is_associative", A::kVerbatim, "scan"},
    {"num_carries", A::kVerbatim, "scan (older XLA)"},
    // Custom calls.
    {"custom_call_target", A::kCustomCallTarget, "custom-call"},
    {"custom_call_has_side_effect", A::kCustomCallHasSideEffect, "custom-call"},
    {"api_version", A::kVerbatim, "custom-call"},
    {"literal", A::kVerbatim, "custom-call"},
    {"operand_layout_constraints", A::kVerbatim, "custom-call"},
    {"schedule", A::kVerbatim, "custom-call"},
    {"custom_call_schedule", A::kVerbatim, "custom-call (older XLA)"},
    // Collectives and host transfers.
    {"channel_id", A::kChannelId, "collectives, send, recv, send-done, recv-done"},
    {"replica_groups", A::kReplicaGroups,
     "all-reduce, all-gather, reduce-scatter, all-to-all, ragged-all-to-all, collective-broadcast"},
    {"use_global_device_ids", A::kUseGlobalDeviceIds, "all-reduce, all-gather, reduce-scatter"},
    {"constrain_layout", A::kConstrainLayout, "all-reduce, all-gather, all-to-all, reduce-scatter"},
    {"source_target_pairs", A::kSourceTargetPairs, "collective-permute, collective-permute-start"},
    {"is_host_transfer", A::kVerbatim, "send, recv, send-done, recv-done"},
    {"infeed_config", A::kVerbatim, "infeed"},
    {"outfeed_config", A::kVerbatim, "outfeed"},
    {"outfeed_shape", A::kVerbatim, "outfeed"},
    {"cross_program_prefetch_index", A::kVerbatim, "copy-start"},
    {"is_cross_program_prefetch", A::kVerbatim, "copy-start (older XLA)"},
    // Everything else.
    {"exponent_bits", A::kExponentBits, "reduce-precision"},
    {"mantissa_bits", A::kMantissaBits, "reduce-precision"},
    {"distribution", A::kDistribution, "rng"},
    {"delta", A::kVerbatim, "rng-get-and-update-state"},
    {"fft_type", A::kVerbatim, "fft"},
    {"fft_length", A::kVerbatim, "fft"},
    {"left_side", A::kVerbatim, "triangular-solve"},
    {"lower", A::kVerbatim, "triangular-solve, cholesky"},
    {"unit_diagonal", A::kVerbatim, "triangular-solve"},
    {"transpose_a", A::kVerbatim, "triangular-solve"},
    {"epsilon", A::kVerbatim, "batch-norm-training, batch-norm-inference, batch-norm-grad"},
    {"feature_index", A::kVerbatim, "batch-norm-training, batch-norm-inference, batch-norm-grad"},
    {"domain", A::kVerbatim, "domain"},
};

bool IsOneOf(Opcode opcode, std::initializer_list<Opcode> opcodes) {
  for (Opcode o : opcodes)
    if (o == opcode) return true;
  return false;
}

}  // namespace

const AttributeInfo* FindAttribute(std::string_view name) {
  static const auto* const table = [] {
    auto* map = new std::unordered_map<std::string_view, const AttributeInfo*>();
    for (const AttributeInfo& info : kAttributes) map->emplace(info.name, &info);
    return map;
  }();
  auto it = table->find(name);
  return it == table->end() ? nullptr : it->second;
}

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
    case Attr::kDirection: case Attr::kType: case Attr::kOrder: return opcode == O::kCompare;
    case Attr::kIsStable: return opcode == O::kSort || opcode == O::kTopK;
    case Attr::kK: case Attr::kLargest: return opcode == O::kTopK;
    case Attr::kCustomCallTarget: case Attr::kCustomCallHasSideEffect: return opcode == O::kCustomCall;
    case Attr::kExponentBits: case Attr::kMantissaBits: return opcode == O::kReducePrecision;
    case Attr::kChannelId: return IsCollective(opcode) || opcode == O::kCollectivePermuteStart;
    case Attr::kReplicaGroups: return IsCollective(opcode) && opcode != O::kCollectivePermute;
    case Attr::kUseGlobalDeviceIds:
      return IsOneOf(opcode, {O::kAllReduce, O::kAllGather, O::kReduceScatter});
    case Attr::kConstrainLayout: return IsOneOf(opcode, {O::kAllReduce, O::kAllGather, O::kAllToAll});
    case Attr::kSourceTargetPairs: return opcode == O::kCollectivePermute || opcode == O::kCollectivePermuteStart;
    case Attr::kDistribution: return opcode == O::kRng;
    case Attr::kCount: case Attr::kVerbatim: return false;
  }
  return false;
}

std::string_view MissingRequiredAttribute(Opcode opcode, const AttributeSet& seen) {
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

}  // namespace gspmd::hlo_text
