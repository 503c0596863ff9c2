// HLO opcodes and their text names.
#pragma once

#include <optional>
#include <string_view>

namespace gspmd {

// X(enum name, text name)
#define GSPMD_OPCODE_LIST(X)                                      \
  X(kAbs, "abs")                                                  \
  X(kAdd, "add")                                                  \
  X(kAddDependency, "add-dependency")                             \
  X(kAfterAll, "after-all")                                       \
  X(kAllGather, "all-gather")                                     \
  X(kAllReduce, "all-reduce")                                     \
  X(kAllToAll, "all-to-all")                                      \
  X(kAnd, "and")                                                  \
  X(kAtan2, "atan2")                                              \
  X(kBitcast, "bitcast")                                          \
  X(kBitcastConvert, "bitcast-convert")                           \
  X(kBroadcast, "broadcast")                                      \
  X(kCall, "call")                                                \
  X(kCbrt, "cbrt")                                                \
  X(kCeil, "ceil")                                                \
  X(kClamp, "clamp")                                              \
  X(kClz, "count-leading-zeros")                                  \
  X(kCollectiveBroadcast, "collective-broadcast")                 \
  X(kCollectivePermute, "collective-permute")                     \
  X(kCompare, "compare")                                          \
  X(kConcatenate, "concatenate")                                  \
  X(kConditional, "conditional")                                  \
  X(kConstant, "constant")                                        \
  X(kConvert, "convert")                                          \
  X(kConvolution, "convolution")                                  \
  X(kCopy, "copy")                                                \
  X(kCosine, "cosine")                                            \
  X(kCustomCall, "custom-call")                                   \
  X(kDivide, "divide")                                            \
  X(kDomain, "domain")                                            \
  X(kDot, "dot")                                                  \
  X(kDynamicSlice, "dynamic-slice")                               \
  X(kDynamicUpdateSlice, "dynamic-update-slice")                  \
  X(kErf, "erf")                                                  \
  X(kExp, "exponential")                                          \
  X(kExpm1, "exponential-minus-one")                              \
  X(kFloor, "floor")                                              \
  X(kFusion, "fusion")                                            \
  X(kGather, "gather")                                            \
  X(kGetDimensionSize, "get-dimension-size")                      \
  X(kGetTupleElement, "get-tuple-element")                        \
  X(kIota, "iota")                                                \
  X(kIsFinite, "is-finite")                                       \
  X(kLog, "log")                                                  \
  X(kLog1p, "log-plus-one")                                       \
  X(kLogistic, "logistic")                                        \
  X(kMap, "map")                                                  \
  X(kMaximum, "maximum")                                          \
  X(kMinimum, "minimum")                                          \
  X(kMultiply, "multiply")                                        \
  X(kNegate, "negate")                                            \
  X(kNot, "not")                                                  \
  X(kOptimizationBarrier, "opt-barrier")                          \
  X(kOr, "or")                                                    \
  X(kPad, "pad")                                                  \
  X(kParameter, "parameter")                                      \
  X(kPartitionId, "partition-id")                                 \
  X(kPopulationCount, "popcnt")                                   \
  X(kPower, "power")                                              \
  X(kReduce, "reduce")                                            \
  X(kReducePrecision, "reduce-precision")                         \
  X(kReduceScatter, "reduce-scatter")                             \
  X(kReduceWindow, "reduce-window")                               \
  X(kRemainder, "remainder")                                      \
  X(kReplicaId, "replica-id")                                     \
  X(kReshape, "reshape")                                          \
  X(kReverse, "reverse")                                          \
  X(kRng, "rng")                                                  \
  X(kRngBitGenerator, "rng-bit-generator")                        \
  X(kRoundNearestAfz, "round-nearest-afz")                        \
  X(kRoundNearestEven, "round-nearest-even")                      \
  X(kRsqrt, "rsqrt")                                              \
  X(kScatter, "scatter")                                          \
  X(kSelect, "select")                                            \
  X(kSelectAndScatter, "select-and-scatter")                      \
  X(kShiftLeft, "shift-left")                                     \
  X(kShiftRightArithmetic, "shift-right-arithmetic")              \
  X(kShiftRightLogical, "shift-right-logical")                    \
  X(kSign, "sign")                                                \
  X(kSine, "sine")                                                \
  X(kSlice, "slice")                                              \
  X(kSort, "sort")                                                \
  X(kSqrt, "sqrt")                                                \
  X(kStochasticConvert, "stochastic-convert")                     \
  X(kSubtract, "subtract")                                        \
  X(kTan, "tan")                                                  \
  X(kTanh, "tanh")                                                \
  X(kTopK, "topk")                                                \
  X(kTranspose, "transpose")                                      \
  X(kTuple, "tuple")                                              \
  X(kWhile, "while")                                              \
  X(kXor, "xor")                                                  \
  /* XLA opcodes that are parsed, verified and printed; most cannot run here */ \
  X(kAcos, "acos")                                                \
  X(kAcosh, "acosh")                                              \
  X(kAsin, "asin")                                                \
  X(kAsinh, "asinh")                                              \
  X(kAtanh, "atanh")                                              \
  X(kCosh, "cosh")                                                \
  X(kSinh, "sinh")                                                \
  X(kReal, "real")                                                \
  X(kImag, "imag")                                                \
  X(kComplex, "complex")                                          \
  X(kAllGatherStart, "all-gather-start")                          \
  X(kAllGatherDone, "all-gather-done")                            \
  X(kAllReduceStart, "all-reduce-start")                          \
  X(kAllReduceDone, "all-reduce-done")                            \
  X(kCollectivePermuteStart, "collective-permute-start")          \
  X(kCollectivePermuteDone, "collective-permute-done")            \
  X(kAsyncStart, "async-start")                                   \
  X(kAsyncUpdate, "async-update")                                 \
  X(kAsyncDone, "async-done")                                     \
  X(kCopyStart, "copy-start")                                     \
  X(kCopyDone, "copy-done")                                       \
  X(kSend, "send")                                                \
  X(kSendDone, "send-done")                                       \
  X(kRecv, "recv")                                                \
  X(kRecvDone, "recv-done")                                       \
  X(kInfeed, "infeed")                                            \
  X(kOutfeed, "outfeed")                                          \
  X(kFft, "fft")                                                  \
  X(kCholesky, "cholesky")                                        \
  X(kTriangularSolve, "triangular-solve")                         \
  X(kBatchNormTraining, "batch-norm-training")                    \
  X(kBatchNormInference, "batch-norm-inference")                  \
  X(kBatchNormGrad, "batch-norm-grad")                            \
  X(kSetDimensionSize, "set-dimension-size")                      \
  X(kDynamicReshape, "dynamic-reshape")                           \
  X(kRngGetAndUpdateState, "rng-get-and-update-state")            \
  X(kRaggedAllToAll, "ragged-all-to-all")                         \
  X(kRaggedDot, "ragged-dot")                                     \
  X(kScan, "scan")                                                \
  X(kScaledDot, "scaled-dot")

enum class Opcode {
#define GSPMD_OPCODE_ENUM(name, text) name,
  GSPMD_OPCODE_LIST(GSPMD_OPCODE_ENUM)
#undef GSPMD_OPCODE_ENUM
};

std::string_view OpcodeName(Opcode opcode);
std::optional<Opcode> ParseOpcode(std::string_view name);

bool IsElementwiseUnary(Opcode opcode);   // abs, negate, exp, ..., convert, real, imag excluded
bool IsElementwiseBinary(Opcode opcode);  // add, ..., compare excluded
bool IsCollective(Opcode opcode);         // all-reduce, all-gather, all-to-all, reduce-scatter, collective-permute, collective-broadcast
// The asynchronous halves (all-reduce-start, send, recv-done, async-start, ...), infeed and
// outfeed: parsed, printed and verified, but neither the interpreter nor the runtime runs them.
bool IsAsyncOrHostTransfer(Opcode opcode);

}  // namespace gspmd
