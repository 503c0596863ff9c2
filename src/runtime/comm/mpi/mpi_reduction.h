// Internal to src/runtime/comm/mpi: the MPI datatype and operation that reduce a buffer of an
// HLO element type with HLO semantics. MPI's own operations are used where they compute the
// same thing; the rest are user-defined MPI operations over the communicators' kernel
// (runtime/comm/reduction.h).
#pragma once

#include "ir/element_type.h"
#include "runtime/comm/mpi/mpi_handles.h"
#include "runtime/interp/kernels.h"

namespace gspmd::mpi_internal {

struct MpiReduction {
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

// Requires IsNativeReduction(op, type). Native where MPI's result is bit-identical to HLO's:
//   integer add/multiply -> MPI_SUM/MPI_PROD on the unsigned type of that width (wrap-around,
//     which signed MPI arithmetic does not promise), min/max on the signed or unsigned type,
//     and/or/xor -> MPI_BAND/BOR/BXOR;
//   f32/f64 add/multiply -> MPI_SUM/MPI_PROD;
//   pred -> MPI_BOR (add, max, or), MPI_BAND (multiply, min, and), MPI_BXOR on bytes of 0/1.
// User-defined (created once per process, commutative): f16 and bf16 for every op (computed
// in f32, rounded once per step, as the threads backend does), f32/f64 min and max (HLO
// propagates NaN, MPI_MIN/MPI_MAX do not).
MpiReduction MpiReductionFor(ElementType type, BinaryReducer op);

// Frees the user-defined operations (before MPI_Finalize).
void FreeUserReductions();

}  // namespace gspmd::mpi_internal
