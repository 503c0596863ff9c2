// Opcode names and classification.
#include "ir/opcode.h"

#include <array>

namespace gspmd {
namespace {

struct OpcodeInfo {
  Opcode opcode;
  std::string_view name;
};

constexpr OpcodeInfo kOpcodes[] = {
#define GSPMD_OPCODE_INFO(name, text) {Opcode::name, text},
    GSPMD_OPCODE_LIST(GSPMD_OPCODE_INFO)
#undef GSPMD_OPCODE_INFO
};

}  // namespace

std::string_view OpcodeName(Opcode opcode) { return kOpcodes[static_cast<int>(opcode)].name; }

std::optional<Opcode> ParseOpcode(std::string_view name) {
  for (const OpcodeInfo& info : kOpcodes)
    if (info.name == name) return info.opcode;
  return std::nullopt;
}

bool IsElementwiseUnary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs: case Opcode::kCbrt: case Opcode::kCeil: case Opcode::kClz:
    case Opcode::kCosine: case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1:
    case Opcode::kFloor: case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kNegate: case Opcode::kNot:
    case Opcode::kPopulationCount: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kRsqrt: case Opcode::kSign: case Opcode::kSine:
    case Opcode::kSqrt: case Opcode::kTan: case Opcode::kTanh:
    case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin: case Opcode::kAsinh:
    case Opcode::kAtanh: case Opcode::kCosh: case Opcode::kSinh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: case Opcode::kAnd: case Opcode::kAtan2: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kMultiply: case Opcode::kOr:
    case Opcode::kPower: case Opcode::kRemainder: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
    case Opcode::kSubtract: case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsCollective(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllReduce: case Opcode::kAllGather: case Opcode::kAllToAll:
    case Opcode::kReduceScatter: case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

bool IsAsyncOrHostTransfer(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllGatherStart: case Opcode::kAllGatherDone: case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone: case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone: case Opcode::kCopyStart:
    case Opcode::kCopyDone: case Opcode::kSend: case Opcode::kSendDone: case Opcode::kRecv:
    case Opcode::kRecvDone: case Opcode::kInfeed: case Opcode::kOutfeed:
      return true;
    default:
      return false;
  }
}

}  // namespace gspmd
