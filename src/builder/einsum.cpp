// Einsum planning: labels -> dot dimension numbers, pre-reductions and the output transpose.
#include "builder/einsum.h"

#include <algorithm>
#include <cctype>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool Contains(const std::string& labels, char c) { return labels.find(c) != std::string::npos; }

int64_t IndexOf(const std::string& labels, char c) { return static_cast<int64_t>(labels.find(c)); }

void CheckLabels(const std::string& spec, const std::string& labels, const char* which) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!std::isalpha(static_cast<unsigned char>(labels[i])))
      GSPMD_USER_ERROR("einsum \"", spec, "\": ", which, " label '", labels[i], "' is not a letter");
    if (labels.find(labels[i], i + 1) != std::string::npos)
      GSPMD_USER_ERROR("einsum \"", spec, "\": label '", labels[i], "' repeats in the ", which,
                       " (diagonals are not supported)");
  }
}

// Drops the labels of `labels` that appear neither in `other` nor in `out`; returns their dims.
std::vector<int64_t> SummedDims(std::string& labels, const std::string& other, const std::string& out) {
  std::vector<int64_t> dims;
  std::string kept;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (Contains(other, labels[i]) || Contains(out, labels[i])) {
      kept += labels[i];
    } else {
      dims.push_back(static_cast<int64_t>(i));
    }
  }
  labels = kept;
  return dims;
}

}  // namespace

EinsumPlan PlanEinsum(const std::string& spec, const Shape& lhs, const Shape& rhs) {
  std::string text;
  for (char c : spec)
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  const size_t comma = text.find(',');
  const size_t arrow = text.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma)
    GSPMD_USER_ERROR("einsum \"", spec, "\": expected \"LHS,RHS->OUT\"");
  std::string l = text.substr(0, comma), r = text.substr(comma + 1, arrow - comma - 1), out = text.substr(arrow + 2);
  CheckLabels(spec, l, "lhs");
  CheckLabels(spec, r, "rhs");
  CheckLabels(spec, out, "output");
  if (static_cast<int64_t>(l.size()) != lhs.rank())
    GSPMD_USER_ERROR("einsum \"", spec, "\": lhs has ", l.size(), " labels but the operand ", lhs.ToString(false),
                     " has rank ", lhs.rank());
  if (static_cast<int64_t>(r.size()) != rhs.rank())
    GSPMD_USER_ERROR("einsum \"", spec, "\": rhs has ", r.size(), " labels but the operand ", rhs.ToString(false),
                     " has rank ", rhs.rank());
  for (char c : out)
    if (!Contains(l, c) && !Contains(r, c))
      GSPMD_USER_ERROR("einsum \"", spec, "\": output label '", c, "' is in neither operand");
  for (size_t i = 0; i < l.size(); ++i) {
    if (Contains(r, l[i]) && lhs.dim(static_cast<int64_t>(i)) != rhs.dim(IndexOf(r, l[i])))
      GSPMD_USER_ERROR("einsum \"", spec, "\": label '", l[i], "' has size ", lhs.dim(static_cast<int64_t>(i)),
                       " in lhs but ", rhs.dim(IndexOf(r, l[i])), " in rhs");
  }

  EinsumPlan plan;
  std::vector<int64_t> lhs_dims = lhs.dims(), rhs_dims = rhs.dims();
  const std::string l0 = l, r0 = r;
  plan.lhs_sum_dims = SummedDims(l, r0, out);
  plan.rhs_sum_dims = SummedDims(r, l0, out);
  auto size_of = [&](char c) {
    return Contains(l0, c) ? lhs.dim(IndexOf(l0, c)) : rhs.dim(IndexOf(r0, c));
  };

  std::string result;  // labels of the dot result: batch, lhs free, rhs free
  for (size_t i = 0; i < l.size(); ++i) {
    if (!Contains(r, l[i])) continue;
    if (Contains(out, l[i])) {
      plan.dot_dims.lhs_batch_dims.push_back(static_cast<int64_t>(i));
      plan.dot_dims.rhs_batch_dims.push_back(IndexOf(r, l[i]));
      result += l[i];
    } else {
      plan.dot_dims.lhs_contracting_dims.push_back(static_cast<int64_t>(i));
      plan.dot_dims.rhs_contracting_dims.push_back(IndexOf(r, l[i]));
    }
  }
  for (char c : l)
    if (!Contains(r, c)) result += c;
  for (char c : r)
    if (!Contains(l, c)) result += c;
  if (result.size() != out.size())
    GSPMD_USER_ERROR("einsum \"", spec, "\": every label shared by both operands must be in the output or summed");
  for (char c : out) {
    plan.output_permutation.push_back(IndexOf(result, c));
    plan.output_dims.push_back(size_of(c));
  }
  return plan;
}

}  // namespace gspmd
