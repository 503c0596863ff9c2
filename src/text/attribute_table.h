// The one table of instruction attributes XLA's HLO text can carry: each name, the opcodes
// XLA writes it on, and how this IR keeps it (a typed field of Instruction, or verbatim).
// Internal to src/text.
#pragma once

#include <bitset>
#include <cstddef>
#include <string_view>

#include "ir/opcode.h"

namespace gspmd::hlo_text {

// How an attribute is kept: a typed field (read by attribute_parser.cpp, printed by
// printer.cpp), or kVerbatim (name=value kept as written in extra_attributes; it round-trips
// but nothing here interprets it).
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
  kDirection, kType, kOrder, kIsStable, kK, kLargest, kCustomCallTarget, kCustomCallHasSideEffect,
  kExponentBits, kMantissaBits, kChannelId, kReplicaGroups, kUseGlobalDeviceIds,
  kConstrainLayout, kSourceTargetPairs, kDistribution,
  kCount,     // the typed attributes above; bits of AttributeSet
  kVerbatim,  // not a typed field
};

using AttributeSet = std::bitset<static_cast<size_t>(Attr::kCount)>;

struct AttributeInfo {
  std::string_view name;
  Attr attr;
  std::string_view written_on;  // the opcodes XLA's parser reads it on ("any": every opcode)
};

// The attribute called `name`, or nullptr when XLA's HLO syntax has no such attribute.
const AttributeInfo* FindAttribute(std::string_view name);

// Whether the typed attribute `attr` is a field of `opcode` (the printer writes exactly these
// back); an attribute XLA defines that does not apply is kept verbatim.
bool AttributeApplies(Attr attr, Opcode opcode);

// An attribute `opcode` needs and `seen` lacks, as it is written ("direction="), or "".
std::string_view MissingRequiredAttribute(Opcode opcode, const AttributeSet& seen);

}  // namespace gspmd::hlo_text
