// An estimate of how XLA would fuse one computation into kernels, so that HBM traffic counts
// only values that a kernel stores and another loads, not every intermediate.
//
// Rules (the opcode classes of op_counts.h):
//   - elementwise and data-movement ops (kLoop) join the kernel of their users when all their
//     users are in one kernel that takes producers (a loop, reduce, matrix or in-place kernel);
//     otherwise they start a loop kernel of their own;
//   - broadcast, iota and constants (kDuplicable) are copied into every consuming kernel and
//     never stored; their operands are read by those kernels instead;
//   - reshape and bitcast (kView) are the same bytes under other dims (row-major layouts):
//     no kernel, and fusion and reads look through them;
//   - reduce / reduce-window and dot / convolution end a kernel: producers fuse in, their result
//     is stored; except that a dot whose one use is the update of a dynamic-update-slice
//     joins that kernel and writes its result into the buffer in place (a windowed einsum's
//     partial result), and one whose one use is an add (a bias, an accumulator) joins the
//     add's kernel (XLA's output fusion);
//   - collectives, control flow and the other ops (gather, scatter, sort, custom-call) are
//     kernels of their own; parameters, tuples and get-tuple-element cost nothing.
// A kernel reads each value from outside it once (a slice or dynamic-slice reads only its
// result's bytes) and writes each of its values that is used outside it or is the
// computation's result. dynamic-update-slice writes only its update into the buffer.
//
//   %e = exp(%x); %s = reduce(%e, %zero), to_apply=%add; %d = divide(%e, broadcast(%s))
//   -> kernel {%e, %s} reads %x, writes %s and %e (used by %d); kernel {%d} reads %e and %s.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/computation.h"
#include "simulate/op_counts.h"

namespace gspmd::simulate {

struct Kernel {
  const Instruction* root = nullptr;          // last member in program order
  std::vector<const Instruction*> members;    // program order
  std::vector<const Instruction*> inputs;     // values read from outside (materialized)
  OpCounts counts;                            // sum over members; unfused_bytes too
  double bytes_read = 0;
  double bytes_written = 0;
};

struct KernelPlan {
  std::vector<Kernel> kernels;  // by program order of their roots
  // Kernel index of each instruction that belongs to one; free and duplicated instructions,
  // collectives and control flow have none.
  std::unordered_map<const Instruction*, int64_t> kernel_of;
};

// Groups the instructions of `computation` that run on the core (not collectives or control
// flow, which callers cost themselves) into kernels.
KernelPlan PlanKernels(const Computation& computation);

}  // namespace gspmd::simulate
