// MpiReductionFor: MPI's built-in operations where they match HLO, user-defined ones elsewhere.
#include "runtime/comm/mpi/mpi_reduction.h"

#include <map>
#include <mutex>
#include <utility>

#include "runtime/comm/reduction.h"

namespace gspmd::mpi_internal {
namespace {

// MPI calls a user function as inout[i] = in[i] op inout[i]; every reducer here is
// commutative, so ReduceInto(inout, in) computes the same.
template <ElementType kType, BinaryReducer kOp>
void UserReduction(void* in, void* inout, int* length, MPI_Datatype*) {
  ReduceInto(kType, kOp, inout, in, *length);
}

template <ElementType kType>
MPI_User_function* UserFunction(BinaryReducer op) {
  switch (op) {
    case BinaryReducer::kAdd: return &UserReduction<kType, BinaryReducer::kAdd>;
    case BinaryReducer::kMultiply: return &UserReduction<kType, BinaryReducer::kMultiply>;
    case BinaryReducer::kMaximum: return &UserReduction<kType, BinaryReducer::kMaximum>;
    case BinaryReducer::kMinimum: return &UserReduction<kType, BinaryReducer::kMinimum>;
    default: break;
  }
  GSPMD_CHECK(false, "no user-defined MPI reduction for ", ElementTypeName(kType));
  return nullptr;
}

std::mutex g_mutex;
std::map<std::pair<ElementType, BinaryReducer>, MPI_Op> g_user_ops;

MPI_Op UserOp(ElementType type, BinaryReducer op) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto [it, inserted] = g_user_ops.try_emplace({type, op}, MPI_OP_NULL);
  if (!inserted) return it->second;
  MPI_User_function* function = nullptr;
  switch (type) {
    case ElementType::kF16: function = UserFunction<ElementType::kF16>(op); break;
    case ElementType::kBF16: function = UserFunction<ElementType::kBF16>(op); break;
    case ElementType::kF32: function = UserFunction<ElementType::kF32>(op); break;
    case ElementType::kF64: function = UserFunction<ElementType::kF64>(op); break;
    default: GSPMD_CHECK(false, "no user-defined MPI reduction for ", ElementTypeName(type));
  }
  CheckMpi(MPI_Op_create(function, /*commute=*/1, &it->second), "MPI_Op_create");
  return it->second;
}

MPI_Datatype UnsignedOfWidth(int64_t bytes) {
  switch (bytes) {
    case 1: return MPI_UINT8_T;
    case 2: return MPI_UINT16_T;
    case 4: return MPI_UINT32_T;
    default: return MPI_UINT64_T;
  }
}

MPI_Datatype IntegerDatatype(ElementType type) {
  switch (type) {
    case ElementType::kS8: return MPI_INT8_T;
    case ElementType::kS16: return MPI_INT16_T;
    case ElementType::kS32: return MPI_INT32_T;
    case ElementType::kS64: return MPI_INT64_T;
    case ElementType::kU8: return MPI_UINT8_T;
    case ElementType::kU16: return MPI_UINT16_T;
    case ElementType::kU32: return MPI_UINT32_T;
    default: return MPI_UINT64_T;
  }
}

}  // namespace

MpiReduction MpiReductionFor(ElementType type, BinaryReducer op) {
  GSPMD_CHECK(IsNativeReduction(op, type), "no native reduction of ", ElementTypeName(type));
  if (type == ElementType::kPred) {
    switch (op) {
      case BinaryReducer::kAdd:
      case BinaryReducer::kMaximum:
      case BinaryReducer::kOr: return {MPI_UINT8_T, MPI_BOR};
      case BinaryReducer::kMultiply:
      case BinaryReducer::kMinimum:
      case BinaryReducer::kAnd: return {MPI_UINT8_T, MPI_BAND};
      default: return {MPI_UINT8_T, MPI_BXOR};
    }
  }
  if (IsInteger(type)) {
    const MPI_Datatype wrapping = UnsignedOfWidth(ElementByteSize(type));
    switch (op) {
      case BinaryReducer::kAdd: return {wrapping, MPI_SUM};
      case BinaryReducer::kMultiply: return {wrapping, MPI_PROD};
      case BinaryReducer::kMaximum: return {IntegerDatatype(type), MPI_MAX};
      case BinaryReducer::kMinimum: return {IntegerDatatype(type), MPI_MIN};
      case BinaryReducer::kAnd: return {wrapping, MPI_BAND};
      case BinaryReducer::kOr: return {wrapping, MPI_BOR};
      default: return {wrapping, MPI_BXOR};
    }
  }
  if (type == ElementType::kF32 || type == ElementType::kF64) {
    const MPI_Datatype datatype = type == ElementType::kF32 ? MPI_FLOAT : MPI_DOUBLE;
    if (op == BinaryReducer::kAdd) return {datatype, MPI_SUM};
    if (op == BinaryReducer::kMultiply) return {datatype, MPI_PROD};
    return {datatype, UserOp(type, op)};
  }
  // f16, bf16: 2-byte elements reduced by our kernel.
  return {MPI_UINT16_T, UserOp(type, op)};
}

void FreeUserReductions() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& [key, op] : g_user_ops)
    if (op != MPI_OP_NULL) MPI_Op_free(&op);
  g_user_ops.clear();
}

}  // namespace gspmd::mpi_internal
