// FindDigitForm / EmitDigitForm: per-partition values as arithmetic on the partition id.
#include "ir/partition_digits.h"

#include "ir/hlo_builder.h"

namespace gspmd {
namespace {

// The prime radices of n, smallest first (the finest mixed radix of 0..n-1).
std::vector<int64_t> PrimeRadices(int64_t n) {
  std::vector<int64_t> radices;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      radices.push_back(p);
      n /= p;
    }
  if (n > 1) radices.push_back(n);
  return radices;
}

// Does table[p] equal the form at every p? Walks p with a digit odometer (O(N)).
bool Matches(const std::vector<int64_t>& table, const std::vector<int64_t>& radices,
             const std::vector<int64_t>& weights, int64_t constant) {
  std::vector<int64_t> digits(radices.size(), 0);
  int64_t value = constant;
  for (int64_t entry : table) {
    if (entry != value) return false;
    for (size_t k = 0; k < radices.size(); ++k) {
      value += weights[k];
      if (++digits[k] < radices[k]) break;
      value -= weights[k] * radices[k];
      digits[k] = 0;
    }
  }
  return true;
}

}  // namespace

std::optional<PartitionDigitForm> FindDigitForm(const std::vector<int64_t>& table) {
  int64_t n = static_cast<int64_t>(table.size());
  if (n == 0) return std::nullopt;
  std::vector<int64_t> radices = PrimeRadices(n);
  std::vector<int64_t> weights;
  int64_t stride = 1;
  for (int64_t radix : radices) {
    weights.push_back(table[stride] - table[0]);
    stride *= radix;
  }
  if (!Matches(table, radices, weights, table[0])) return std::nullopt;

  PartitionDigitForm form;
  form.num_partitions = n;
  form.constant = table[0];
  stride = 1;
  for (size_t k = 0; k < radices.size(); ++k) {
    int64_t radix = radices[k];
    int64_t weight = weights[k];
    stride *= radix;
    if (weight == 0) continue;
    // Merge with the previous term when this digit continues it (weight = previous weight x
    // previous size, adjacent strides).
    if (!form.terms.empty()) {
      PartitionDigitForm::Term& last = form.terms.back();
      bool continues = last.stride * last.size == stride / radix && last.weight * last.size == weight;
      if (continues) {
        last.size *= radix;
        continue;
      }
    }
    form.terms.push_back({stride / radix, radix, weight});
  }
  return form;
}

Instruction* EmitDigitForm(HloBuilder& b, const PartitionDigitForm& form) {
  if (form.terms.empty()) return b.S32Constant(form.constant);
  Instruction* id = b.Convert(b.PartitionId(), ElementType::kS32);
  Instruction* sum = nullptr;
  for (const PartitionDigitForm::Term& term : form.terms) {
    Instruction* digit = id;
    if (term.stride > 1) digit = b.Binary(Opcode::kDivide, digit, b.S32Constant(term.stride));
    bool below_top = term.stride * term.size < form.num_partitions;
    if (below_top) digit = b.Binary(Opcode::kRemainder, digit, b.S32Constant(term.size));
    if (term.weight != 1) digit = b.Binary(Opcode::kMultiply, digit, b.S32Constant(term.weight));
    sum = sum ? b.Binary(Opcode::kAdd, sum, digit) : digit;
  }
  if (form.constant != 0) sum = b.Binary(Opcode::kAdd, sum, b.S32Constant(form.constant));
  return sum;
}

}  // namespace gspmd
