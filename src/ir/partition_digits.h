// Functions of the partition id written arithmetically (sums of its mixed-radix digits), so
// that per-partition offsets need no constant table whose size grows with the device count.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gspmd {

class HloBuilder;
class Instruction;

// f(p) = constant + sum over terms of ((p / stride) % size) * weight, for p in [0, N).
// Example: the offset of a 2-way split of dim size 16 over {devices=[2,4]<=[8]}: p / 4 * 8,
// i.e. terms {{stride 4, size 2, weight 8}}.
struct PartitionDigitForm {
  struct Term {
    int64_t stride = 1;
    int64_t size = 1;
    int64_t weight = 0;
  };
  int64_t num_partitions = 1;
  int64_t constant = 0;
  std::vector<Term> terms;  // by increasing stride, non-overlapping digits
};

// The digit form of table[p] (p = 0..table.size()-1), or nullopt when the table is not a sum of
// per-digit linear functions of p (for example clamped or permuted offsets).
std::optional<PartitionDigitForm> FindDigitForm(const std::vector<int64_t>& table);

// s32[] f(partition-id): divide / remainder / multiply / add on the partition id, with the
// divide omitted for stride 1, the remainder for the most significant digit and the multiply
// for weight 1.
Instruction* EmitDigitForm(HloBuilder& builder, const PartitionDigitForm& form);

}  // namespace gspmd
