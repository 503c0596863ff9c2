// Random program generator, part 2: dot, convolution, reductions, windows, dynamic slicing,
// gather / scatter, sort and while loops; the entry's root; GenerateRandomProgram itself.
#include <sstream>

#include "partitioner/random_program_generator.h"
#include "support/diagnostic.h"

namespace gspmd::random_program::detail {

// ---------------------------------------------------------------------------------------------
// Contractions

bool Generator::GenDot() {
  // Integer dots only of parameters, whose values are small (no overflow).
  ElementType type = scope().allows_parameters && Chance(0.15) ? kS32 : kF32;
  auto accept = [type](const Value& v) {
    return v.type == type && v.rank() >= 1 && v.rank() <= 3 && (type == kF32 || v.name.rfind("p.", 0) == 0);
  };
  Value& a = PickOrCreate(accept, type, 1, 3);
  Dims batch, contracting, free;
  for (int64_t i = 0; i < a.rank(); ++i) {
    double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    (r < 0.25 ? batch : r < 0.65 ? contracting : free).push_back(i);
  }
  if (contracting.empty() && Chance(0.8)) {
    if (!free.empty()) {
      contracting.push_back(free.back());
      free.pop_back();
    } else if (!batch.empty()) {
      contracting.push_back(batch.back());
      batch.pop_back();
    }
  }
  // The other operand: batch dims, contracting dims and 0..2 free dims, in a random order.
  struct Slot { int kind; int64_t index; int64_t size; };
  std::vector<Slot> slots;
  for (size_t i = 0; i < batch.size(); ++i) slots.push_back({0, static_cast<int64_t>(i), a.dims[batch[i]]});
  for (size_t i = 0; i < contracting.size(); ++i) slots.push_back({1, static_cast<int64_t>(i), a.dims[contracting[i]]});
  int64_t other_free = Uniform(slots.empty() ? 1 : 0, 2);
  for (int64_t i = 0; i < other_free; ++i) slots.push_back({2, i, Uniform(1, 8)});
  std::shuffle(slots.begin(), slots.end(), rng_);
  Dims b_dims, b_batch(batch.size()), b_contracting(contracting.size()), b_free_sizes;
  for (size_t p = 0; p < slots.size(); ++p) {
    b_dims.push_back(slots[p].size);
    if (slots[p].kind == 0) b_batch[slots[p].index] = static_cast<int64_t>(p);
    if (slots[p].kind == 1) b_contracting[slots[p].index] = static_cast<int64_t>(p);
    if (slots[p].kind == 2) b_free_sizes.push_back(slots[p].size);
  }
  Dims a_free_sizes;
  for (int64_t i : free) a_free_sizes.push_back(a.dims[i]);
  Value& b = type == kF32 ? OperandLike(kF32, b_dims, false) : NewParameter(kS32, b_dims);
  bool swap = Chance(0.5);
  Value& lhs = swap ? b : a;
  Value& rhs = swap ? a : b;
  const Dims& lb = swap ? b_batch : batch;
  const Dims& lc = swap ? b_contracting : contracting;
  const Dims& rb = swap ? batch : b_batch;
  const Dims& rc = swap ? contracting : b_contracting;
  Dims result;
  for (int64_t i : batch) result.push_back(a.dims[i]);
  const Dims& first_free = swap ? b_free_sizes : a_free_sizes;
  const Dims& second_free = swap ? a_free_sizes : b_free_sizes;
  result.insert(result.end(), first_free.begin(), first_free.end());
  result.insert(result.end(), second_free.begin(), second_free.end());
  if (!Fits(result) || result.size() > 4) return false;
  std::string op = "dot(" + Use(lhs) + ", " + Use(rhs) + ")";
  if (!lb.empty()) op += ", lhs_batch_dims={" + Join(lb) + "}";
  if (!lc.empty()) op += ", lhs_contracting_dims={" + Join(lc) + "}";
  if (!rb.empty()) op += ", rhs_batch_dims={" + Join(rb) + "}";
  if (!rc.empty()) op += ", rhs_contracting_dims={" + Join(rc) + "}";
  Emit("dot", type, result, op, type == kS32, RandomSharding(static_cast<int64_t>(result.size())));
  return true;
}

bool Generator::GenConvolution() {
  int64_t spatial = Chance(0.7) ? 1 : 2;
  int64_t rank = spatial + 2;
  Value& input = PickOrCreate([&](const Value& v) { return v.type == kF32 && v.rank() == rank; }, kF32, rank, rank);
  // Which input dim is batch, feature, and each spatial dim.
  Dims in_perm = RandomPermutation(rank);  // in_perm[k]: the input dim of role k (b, f, 0, 1)
  auto role_char = [](int64_t role, char b, char f) { return role == 0 ? b : role == 1 ? f : static_cast<char>('0' + role - 2); };
  int64_t n = input.dims[in_perm[0]];
  int64_t c = input.dims[in_perm[1]];
  int64_t groups = 1, batch_groups = 1;
  if (Chance(0.2) && c > 1) groups = Chance(0.5) ? c : PickOf(ProperDivisors(c).empty() ? Dims{c} : ProperDivisors(c));
  else if (Chance(0.15) && n > 1) batch_groups = Chance(0.5) ? n : PickOf(ProperDivisors(n).empty() ? Dims{n} : ProperDivisors(n));
  int64_t group_count = std::max(groups, batch_groups);
  int64_t o = group_count * Uniform(1, group_count > 1 ? 2 : 5);
  Dims window, stride, low, high, lhs_dilate, rhs_dilate, reversal, out_spatial;
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t size = input.dims[in_perm[2 + s]];
    window.push_back(Spread(1, 3));
    stride.push_back(Chance(0.3) ? Spread(2, 2) : 1);
    low.push_back(Chance(0.5) ? Spread(0, 2) : 0);
    high.push_back(Chance(0.5) ? Spread(0, 2) : 0);
    lhs_dilate.push_back(Chance(0.1) ? Spread(2, 2) : 1);
    rhs_dilate.push_back(Chance(0.1) ? Spread(2, 2) : 1);
    reversal.push_back(Chance(0.1) ? 1 : 0);
    int64_t out = WindowOutput(size, window[s], stride[s], low[s], high[s], lhs_dilate[s], rhs_dilate[s]);
    if (out < 1) return false;
    out_spatial.push_back(out);
  }
  std::string in_labels(rank, '?'), kernel_labels(rank, '?'), out_labels(rank, '?');
  for (int64_t role = 0; role < rank; ++role) in_labels[in_perm[role]] = role_char(role, 'b', 'f');
  Dims kernel_perm = RandomPermutation(rank), out_perm = RandomPermutation(rank);
  Dims kernel_dims(rank), out_dims(rank);
  for (int64_t role = 0; role < rank; ++role) {
    kernel_labels[kernel_perm[role]] = role_char(role, 'i', 'o');
    kernel_dims[kernel_perm[role]] = role == 0 ? c / groups : role == 1 ? o : window[role - 2];
    out_labels[out_perm[role]] = role_char(role, 'b', 'f');
    out_dims[out_perm[role]] = role == 0 ? n / batch_groups : role == 1 ? o : out_spatial[role - 2];
  }
  if (!Fits(out_dims) || !Fits(kernel_dims)) return false;
  Value& kernel = OperandLike(kF32, kernel_dims, false);
  std::string op = "convolution(" + Use(input) + ", " + Use(kernel) + "), " +
                   WindowText(window, stride, low, high, lhs_dilate, rhs_dilate, reversal) + ", dim_labels=" + in_labels + "_" +
                   kernel_labels + "->" + out_labels;
  if (groups > 1) op += ", feature_group_count=" + std::to_string(groups);
  if (batch_groups > 1) op += ", batch_group_count=" + std::to_string(batch_groups);
  Emit("conv", kF32, out_dims, op, false, ShardingFor(rank, &input));
  return true;
}

// ---------------------------------------------------------------------------------------------
// Reductions and windows

bool Generator::GenReduce() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  std::string reducer = x->type == kPred ? PickOf(std::vector<std::string>{"and", "or"})
                                         : PickOf(std::vector<std::string>{"add", "add", "maximum", "minimum"});
  Dims reduced, kept;
  for (int64_t i = 0; i < x->rank(); ++i) (Chance(0.5) ? reduced : kept).push_back(i);
  if (reduced.empty()) {
    reduced.push_back(kept.back());
    kept.pop_back();
  }
  Dims dims;
  for (int64_t i : kept) dims.push_back(x->dims[i]);
  Value& init = x->type == kPred ? ScalarConstant(kPred, reducer == "and" ? "1" : "0")
                                 : ScalarConstant(x->type, InitFor(reducer, x->type));
  std::string op = "reduce(" + Use(*x) + ", " + Use(init) + "), dimensions={" + Join(reduced) + "}, to_apply=%" +
                   Region(reducer, x->type);
  bool exact = x->exact && (reducer != "add" || x->type == kS32);
  Emit("red", x->type, dims, op, exact, RandomSharding(static_cast<int64_t>(dims.size())));
  return true;
}

bool Generator::GenReduceWindow() {
  Value* x = PickValue([](const Value& v) { return IsNumeric(v) && v.rank() >= 1; });
  if (x == nullptr) return false;
  std::string reducer = PickOf(std::vector<std::string>{"add", "maximum", "minimum"});
  Dims size, stride, low, high, lhs_dilate, rhs_dilate, dims;
  for (int64_t i = 0; i < x->rank(); ++i) {
    bool windowed = Chance(0.6);
    size.push_back(windowed ? Spread(1, 3) : 1);
    stride.push_back(windowed && Chance(0.4) ? Spread(2, 3) : 1);
    low.push_back(windowed && Chance(0.5) ? Spread(0, size.back() - 1) : 0);
    high.push_back(windowed && Chance(0.5) ? Spread(0, size.back() - 1) : 0);
    lhs_dilate.push_back(windowed && Chance(0.1) ? Spread(2, 2) : 1);
    rhs_dilate.push_back(windowed && Chance(0.1) ? Spread(2, 2) : 1);
    int64_t out = WindowOutput(x->dims[i], size[i], stride[i], low[i], high[i], lhs_dilate[i], rhs_dilate[i]);
    if (out < 1) return false;
    dims.push_back(out);
  }
  if (!Fits(dims)) return false;
  Value& init = ScalarConstant(x->type, InitFor(reducer, x->type));
  std::string op = "reduce-window(" + Use(*x) + ", " + Use(init) + "), " +
                   WindowText(size, stride, low, high, lhs_dilate, rhs_dilate) + ", to_apply=%" + Region(reducer, x->type);
  bool exact = x->exact && (reducer != "add" || x->type == kS32);
  Emit("rw", x->type, dims, op, exact, ShardingFor(x->rank(), x));
  return true;
}

// ---------------------------------------------------------------------------------------------
// Dynamic slicing, gather and scatter

std::string Generator::DynamicStart(int64_t dim_size, int64_t slice_size) {
  int64_t last = dim_size - slice_size;
  if (Chance(0.4)) return Use(ScalarConstant(kS32, std::to_string(Uniform(-1, last + 1))));
  // Mostly in range; sometimes beyond it (starts are clamped).
  bool wide = Chance(0.2);
  return Use(NewParameter(kS32, {}, wide ? -2 : 0, wide ? last + 2 : last));
}

bool Generator::GenDynamicSlice() {
  if (!scope().allows_parameters) return false;
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  Dims sizes;
  std::string starts;
  for (int64_t i = 0; i < x->rank(); ++i) {
    int64_t size = Chance(0.4) ? x->dims[i] : Uniform(1, x->dims[i]);
    sizes.push_back(size);
    starts += ", " + DynamicStart(x->dims[i], size);
  }
  std::string op = "dynamic-slice(" + Use(*x) + starts + "), dynamic_slice_sizes={" + Join(sizes) + "}";
  Emit("ds", x->type, sizes, op, x->exact, ShardingFor(x->rank(), x));
  return true;
}

bool Generator::GenDynamicUpdateSlice() {
  if (!scope().allows_parameters) return false;
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  Dims sizes;
  for (int64_t i = 0; i < x->rank(); ++i) sizes.push_back(Chance(0.4) ? x->dims[i] : Uniform(1, x->dims[i]));
  Value& update = OperandLike(x->type, sizes, false);
  std::string starts;
  for (int64_t i = 0; i < x->rank(); ++i) starts += ", " + DynamicStart(x->dims[i], sizes[i]);
  std::string op = "dynamic-update-slice(" + Use(*x) + ", " + Use(update) + starts + ")";
  Emit("dus", x->type, x->dims, op, x->exact && update.exact, ShardingFor(x->rank(), x));
  return true;
}

Value& Generator::PickIndexedOperand(int64_t min_rank, int64_t max_rank) {
  return PickOrCreate(
      [=](const Value& v) { return IsNumeric(v) && v.rank() >= min_rank && v.rank() <= max_rank; },
      Chance(0.8) ? kF32 : kS32, min_rank, max_rank);
}

Generator::Windowed Generator::AroundIndexed(const Value& operand, Dims lead, int64_t axis, int64_t batch) {
  Windowed result{std::move(lead), {}};
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (i == axis || i == batch) continue;
    result.window_dims.push_back(static_cast<int64_t>(result.dims.size()));
    result.dims.push_back(operand.dims[i]);
  }
  return result;
}

void Generator::EmitGather(const std::string& base, Value& operand, Value& indices, const Windowed& result,
                           const Dims& collapsed, const Dims& start_map, const std::string& index_attributes,
                           const Dims& slice_sizes) {
  std::string op = "gather(" + Use(operand) + ", " + Use(indices) + "), offset_dims={" + Join(result.window_dims) +
                   "}, collapsed_slice_dims={" + Join(collapsed) + "}, start_index_map={" + Join(start_map) + "}, " +
                   index_attributes + ", slice_sizes={" + Join(slice_sizes) + "}";
  Emit(base, operand.type, result.dims, op, operand.exact, RandomSharding(static_cast<int64_t>(result.dims.size())));
}

void Generator::EmitAddScatter(const std::string& base, Value& operand, Value& indices, Value& updates,
                               const Dims& window_dims, int64_t axis, const std::string& index_attributes) {
  std::string op = "scatter(" + Use(operand) + ", " + Use(indices) + ", " + Use(updates) + "), update_window_dims={" +
                   Join(window_dims) + "}, inserted_window_dims={" + std::to_string(axis) +
                   "}, scatter_dims_to_operand_dims={" + std::to_string(axis) + "}, " + index_attributes +
                   ", to_apply=%" + Region("add", operand.type);
  bool exact = operand.type == kS32 && operand.exact && updates.exact;
  Emit(base, operand.type, operand.dims, op, exact, ShardingFor(operand.rank(), &operand));
}

bool Generator::GenGather() {
  if (!scope().allows_parameters) return false;
  Value& operand = PickIndexedOperand(1, 3);
  int64_t axis = Uniform(0, operand.rank() - 1);
  int64_t size = operand.dims[axis];
  Dims index_dims = {Uniform(1, 6)};
  if (Chance(0.3)) index_dims.push_back(Uniform(1, 4));
  int64_t batch_rank = static_cast<int64_t>(index_dims.size());
  bool explicit_vector = Chance(0.3);
  if (explicit_vector) index_dims.push_back(1);
  Windowed out = AroundIndexed(operand, Dims(index_dims.begin(), index_dims.begin() + batch_rank), axis);
  if (!Fits(out.dims)) return false;
  Dims slice_sizes = operand.dims;
  slice_sizes[axis] = 1;
  bool wide = Chance(0.15);
  Value& indices = NewParameter(kS32, index_dims, wide ? -2 : 0, wide ? size + 1 : size - 1);
  EmitGather("gather", operand, indices, out, {axis}, {axis}, "index_vector_dim=" + std::to_string(batch_rank),
             slice_sizes);
  return true;
}

bool Generator::GenScatter() {
  if (!scope().allows_parameters) return false;
  Value& operand = PickIndexedOperand(1, 3);
  int64_t axis = Uniform(0, operand.rank() - 1);
  int64_t size = operand.dims[axis];
  int64_t count = Uniform(1, 6);
  Dims index_dims = {count};
  if (Chance(0.3)) index_dims.push_back(1);
  Windowed updates = AroundIndexed(operand, {count}, axis);
  bool wide = Chance(0.1);  // out-of-range updates are dropped
  Value& indices = NewParameter(kS32, index_dims, wide ? -1 : 0, wide ? size : size - 1);
  Value& update_values = OperandLike(operand.type, updates.dims, false);
  EmitAddScatter("scatter", operand, indices, update_values, updates.window_dims, axis, "index_vector_dim=1");
  return true;
}

// ---------------------------------------------------------------------------------------------
// Sort and while

bool Generator::GenSort() {
  Value* x = PickValue([](const Value& v) { return IsNumeric(v) && v.rank() >= 1 && v.rank() <= 3; });
  if (x == nullptr) return false;
  int64_t dim = Uniform(0, x->rank() - 1);
  std::string dimension = "dimensions={" + std::to_string(dim) + "}";
  if (!x->exact || !Chance(0.5)) {
    std::string comparator = Region(Chance(0.5) ? "less" : "greater", x->type);
    std::string op = "sort(" + Use(*x) + "), " + dimension + ", to_apply=%" + comparator;
    Emit("sort", x->type, x->dims, op, x->exact, ShardingFor(x->rank(), x));
    return true;
  }
  EmitKeyValueSort(*x, dim);
  return true;
}

Generator::KeysAndPermutation Generator::EmitKeyValueSort(Value& x, int64_t dim) {
  Value& positions = Emit("iota", kS32, x.dims, "iota(), iota_dimension=" + std::to_string(dim), true,
                          ShardingFor(x.rank(), &x));
  std::string key_sharding = ShardingFor(x.rank(), &x);
  std::string value_sharding = Chance(0.7) ? key_sharding : RandomSharding(x.rank());
  std::string op = "sort(" + Use(x) + ", " + Use(positions) + "), dimensions={" + std::to_string(dim) +
                   "}, is_stable=true, to_apply=%" + Region("less2", x.type);
  Value tuple = EmitTuple("sort", {x, positions}, op, "{" + key_sharding + ", " + value_sharding + "}");
  Value& keys = Emit("keys", x.type, x.dims, "get-tuple-element(%" + tuple.name + "), index=0", true, key_sharding);
  Value& perm = Emit("perm", kS32, x.dims, "get-tuple-element(%" + tuple.name + "), index=1", true, value_sharding);
  return {keys, perm};
}

// A sort of which only a prefix along the sort dim is read (top-k written as sort + slice).
bool Generator::GenSortPrefix() {
  Value* x = PickValue([](const Value& v) { return IsNumeric(v) && v.rank() >= 1 && v.rank() <= 2; });
  if (x == nullptr) return false;
  int64_t dim = Uniform(0, x->rank() - 1);
  int64_t size = x->dims[dim];
  std::string dimension = "dimensions={" + std::to_string(dim) + "}";
  auto prefix_slice = [&](Value& sorted, ElementType type) {
    Dims dims = sorted.dims;
    std::string spec;
    for (int64_t i = 0; i < sorted.rank(); ++i) {
      int64_t limit = i == dim ? Uniform(1, size) : dims[i];
      spec += (i ? ", " : "") + std::string("[0:") + std::to_string(limit) + "]";
      dims[i] = limit;
    }
    Emit("prefix", type, dims, "slice(" + Use(sorted) + "), slice={" + spec + "}", sorted.exact, ShardingFor(sorted.rank(), &sorted));
  };
  if (!x->exact || Chance(0.5)) {
    std::string comparator = Region(Chance(0.5) ? "less" : "greater", x->type);
    Value& sorted = Emit("sort", x->type, x->dims, "sort(" + Use(*x) + "), " + dimension + ", to_apply=%" + comparator,
                         x->exact, ShardingFor(x->rank(), x));
    sorted.hidden = true;
    prefix_slice(sorted, x->type);
    if (Chance(0.3)) prefix_slice(sorted, x->type);
    return true;
  }
  auto [keys, perm] = EmitKeyValueSort(*x, dim);
  keys.hidden = perm.hidden = true;
  prefix_slice(keys, x->type);
  prefix_slice(perm, kS32);
  return true;
}

std::string Generator::WhileBody(const std::string& name, const std::string& state_shape,
                                 const std::string& state_sharding, ElementType type, const Dims& dims,
                                 const std::string& x_sharding, const std::string& w_sharding, bool* exact) {
  Scope body;
  body.allows_parameters = false;
  Scope* saved = scope_;
  scope_ = &body;
  std::string param = "param." + std::to_string(next_id_++);
  body.lines.push_back("%" + param + " = " + state_shape + " parameter(0), sharding=" + state_sharding);
  Value& i = Emit("i", kS32, {}, "get-tuple-element(%" + param + "), index=0", true, "{replicated}");
  Value& x = Emit("x", type, dims, "get-tuple-element(%" + param + "), index=1", *exact, x_sharding);
  Value& w = Emit("w", type, dims, "get-tuple-element(%" + param + "), index=2", true, w_sharding);
  Value& one = ScalarConstant(kS32, "1");
  Value& next_i = Emit("next_i", kS32, {}, "add(" + Use(i) + ", " + Use(one) + ")", true, "{replicated}");
  int64_t rank = static_cast<int64_t>(dims.size());
  Value* current = &x;
  if (Chance(0.5)) {
    // Any ops; the new carry is the latest value of the carry's type and dims.
    ++depth_;
    RandomOps(Uniform(1, 4));
    --depth_;
    for (auto it = body.values.rbegin(); it != body.values.rend(); ++it) {
      if (it->type == type && it->dims == dims) {
        current = &*it;
        break;
      }
    }
  }
  int64_t steps = Uniform(current == &x ? 1 : 0, 2);
  for (int64_t s = 0; s < steps; ++s) {
    int64_t kind = Uniform(0, 2);
    if (kind == 0) {
      std::string op = type == kF32 ? PickOf(std::vector<std::string>{"tanh", "sine", "negate"})
                                    : PickOf(std::vector<std::string>{"negate", "abs"});
      current = &Emit("u", type, dims, op + "(" + Use(*current) + ")", current->exact, RandomSharding(rank));
    } else if (kind == 1) {
      std::string op = PickOf(std::vector<std::string>{"add", "maximum", type == kF32 ? "multiply" : "subtract"});
      current = &Emit("b", type, dims, op + "(" + Use(*current) + ", " + Use(w) + ")", current->exact,
                      RandomSharding(rank));
    } else if (rank >= 1) {
      // Reduce over some dims, then broadcast back and combine.
      Dims reduced, kept, kept_dims;
      for (int64_t d = 0; d < rank; ++d) (Chance(0.5) ? reduced : kept).push_back(d);
      if (reduced.empty()) {
        reduced.push_back(kept.back());
        kept.pop_back();
      }
      for (int64_t d : kept) kept_dims.push_back(dims[d]);
      Value& init = ScalarConstant(type, InitFor("maximum", type));
      Value& r = Emit("r", type, kept_dims,
                      "reduce(" + Use(*current) + ", " + Use(init) + "), dimensions={" + Join(reduced) +
                          "}, to_apply=%" + Region("maximum", type),
                      current->exact, RandomSharding(static_cast<int64_t>(kept_dims.size())));
      Value& back = Emit("back", type, dims, "broadcast(" + Use(r) + "), dimensions={" + Join(kept) + "}", r.exact,
                         RandomSharding(rank));
      current = &Emit("sub", type, dims, "subtract(" + Use(*current) + ", " + Use(back) + ")", current->exact,
                      RandomSharding(rank));
    }
  }
  *exact = current->exact;
  std::string root = "tuple(" + Use(next_i) + ", " + Use(*current) + ", " + Use(w) + ")";
  body.lines.push_back("ROOT %" + name + ".root = " + state_shape + " " + root + ", sharding=" + state_sharding);
  scope_ = saved;
  std::string text = "%" + name + " (" + param + ": " + state_shape + ") -> " + state_shape + " {\n";
  for (const std::string& line : body.lines) text += "  " + line + "\n";
  return text + "}\n";
}

bool Generator::GenWhile() {
  if (depth_ >= 2) return false;
  Value* x = PickValue([](const Value& v) { return IsNumeric(v) && v.rank() >= 1 && v.rank() <= 3; });
  if (x == nullptr) return false;
  ElementType type = x->type;
  Dims dims = x->dims;
  Value& w = OperandLike(type, dims, false);
  std::string x_sharding = ShardingFor(x->rank(), x);
  std::string w_sharding = ShardingFor(w.rank(), &w);
  std::string state_shape = "(s32[], " + ShapeText(type, dims) + ", " + ShapeText(type, dims) + ")";
  std::string state_sharding = "{{replicated}, " + x_sharding + ", " + w_sharding + "}";
  int64_t id = next_id_++;
  std::string body_name = "body." + std::to_string(id), cond_name = "cond." + std::to_string(id);
  bool exact = x->exact && w.exact;
  regions_.push_back(WhileBody(body_name, state_shape, state_sharding, type, dims, x_sharding, w_sharding, &exact));
  int64_t trips = Uniform(1, 3);
  std::string cp = "cp." + std::to_string(id);
  std::string c = "%" + cond_name;
  std::string cond = c + " (" + cp + ": " + state_shape + ") -> pred[] {\n  %" + cp + " = " + state_shape +
                     " parameter(0), sharding=" + state_sharding + "\n  " + c + ".i = s32[] get-tuple-element(%" + cp +
                     "), index=0, sharding={replicated}\n  " + c + ".n = s32[] constant(" + std::to_string(trips) +
                     "), sharding={replicated}\n";
  std::string counting = "compare(" + c + ".i, " + c + ".n), direction=LT, sharding={replicated}\n";
  if (type != kPred && Chance(0.3)) {
    // The condition also reduces the (sharded) carry: max(x) < the largest value, always true.
    std::string all_dims(Join([&] { Dims d(dims.size()); std::iota(d.begin(), d.end(), 0); return d; }()));
    std::string t = TypeName(type);
    std::string region = Region("maximum", type);
    std::string lowest = InitFor("maximum", type), highest = InitFor("minimum", type);
    cond += "  " + c + ".x = " + ShapeText(type, dims) + " get-tuple-element(%" + cp + "), index=1, sharding=" +
            x_sharding + "\n  " + c + ".low = " + t + "[] constant(" + lowest + "), sharding={replicated}\n  " + c +
            ".m = " + t + "[] reduce(" + c + ".x, " + c + ".low), dimensions={" + all_dims + "}, to_apply=%" + region +
            ", sharding={replicated}\n  " + c + ".high = " + t + "[] constant(" + highest +
            "), sharding={replicated}\n  " + c + ".finite = pred[] compare(" + c + ".m, " + c +
            ".high), direction=LT, sharding={replicated}\n  " + c + ".counting = pred[] " + counting + "  ROOT " + c +
            ".go = pred[] and(" + c + ".counting, " + c + ".finite), sharding={replicated}\n}\n";
  } else {
    cond += "  ROOT " + c + ".lt = pred[] " + counting + "}\n";
  }
  regions_.push_back(cond);
  Value& zero = ScalarConstant(kS32, "0");
  Value counter;
  counter.type = kS32;
  std::string init_op = "tuple(" + Use(zero) + ", " + Use(*x) + ", " + Use(w) + ")";
  Value init = EmitTuple("init", {counter, *x, w}, init_op, state_sharding);
  Value loop = EmitTuple("while", {counter, *x, w},
                         "while(%" + init.name + "), condition=%" + cond_name + ", body=%" + body_name, state_sharding);
  Emit("loop", type, dims, "get-tuple-element(%" + loop.name + "), index=1", exact, x_sharding);
  return true;
}

// ---------------------------------------------------------------------------------------------
// The entry and the module

void Generator::FinishEntry() {
  std::vector<Value*> leaves;
  for (Value& value : entry_.values)
    if (value.uses == 0 && value.name.rfind("p.", 0) != 0 && value.name.rfind("c.", 0) != 0) leaves.push_back(&value);
  if (leaves.empty()) leaves.push_back(&entry_.values.back());
  if (leaves.size() == 1 && Chance(0.5)) {
    // The single result as the root itself: move its line last and mark it.
    std::string prefix = "%" + leaves[0]->name + " = ";
    auto line = std::find_if(entry_.lines.begin(), entry_.lines.end(),
                             [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
    GSPMD_CHECK(line != entry_.lines.end(), "no line for ", leaves[0]->name);
    std::string root = "ROOT " + *line;
    entry_.lines.erase(line);
    entry_.lines.push_back(root);
    return;
  }
  if (Chance(0.15)) {
    // A parameter as a result too.
    std::vector<Value*> parameters;
    for (Value& value : entry_.values)
      if (value.name.rfind("p.", 0) == 0 && value.rank() >= 1) parameters.push_back(&value);
    if (!parameters.empty()) leaves.push_back(PickOf(parameters));
  }
  if (Chance(0.15)) leaves.push_back(PickOf(leaves));  // the same value twice (maybe in two shardings)
  std::string shape = "(", operands, sharding = "{";
  for (size_t i = 0; i < leaves.size(); ++i) {
    const char* separator = i ? ", " : "";
    shape += separator + ShapeText(leaves[i]->type, leaves[i]->dims);
    operands += separator + Use(*leaves[i]);
    sharding += separator + (Chance(0.7) ? leaves[i]->sharding : RandomSharding(leaves[i]->rank()));
  }
  entry_.lines.push_back("ROOT %result = " + shape + ") tuple(" + operands + "), sharding=" + sharding + "}");
}

std::string Generator::ModuleText() const {
  std::string text = "HloModule random_" + std::to_string(program_.seed) +
                     ", num_partitions=" + std::to_string(program_.num_devices) + "\n\n";
  for (const std::string& region : regions_) text += region + "\n";
  text += "ENTRY %main {\n";
  for (const std::string& line : entry_.lines) text += "  " + line + "\n";
  return text + "}\n";
}

void Generator::RandomOps(int64_t count) {
  struct Kind { const char* name; bool (Generator::*generate)(); int weight; };
  static const std::vector<Kind> kKinds = {
      {"unary", &Generator::GenUnary, 5},         {"binary", &Generator::GenBinary, 7},
      {"select", &Generator::GenSelect, 4},       {"broadcast", &Generator::GenBroadcast, 4},
      {"transpose", &Generator::GenTranspose, 4}, {"reshape", &Generator::GenReshape, 6},
      {"slice", &Generator::GenSlice, 5},         {"pad", &Generator::GenPad, 5},
      {"concatenate", &Generator::GenConcatenate, 4}, {"reverse", &Generator::GenReverse, 3},
      {"dot", &Generator::GenDot, 7},             {"reduce", &Generator::GenReduce, 6},
      {"reduce-window", &Generator::GenReduceWindow, 5}, {"iota", &Generator::GenIota, 2},
      {"dynamic-slice", &Generator::GenDynamicSlice, 4}, {"dynamic-update-slice", &Generator::GenDynamicUpdateSlice, 4},
      {"convert", &Generator::GenConvert, 3},     {"gather", &Generator::GenGather, 4},
      {"scatter", &Generator::GenScatter, 4},     {"sort", &Generator::GenSort, 3},
      {"convolution", &Generator::GenConvolution, 4}, {"while", &Generator::GenWhile, 3},
      {"argmax", &Generator::GenArgReduce, 3},    {"select-and-scatter", &Generator::GenSelectAndScatter, 3},
      {"conditional", &Generator::GenConditional, 2}, {"topk", &Generator::GenTopK, 2},
      {"clamp", &Generator::GenClamp, 2},         {"windowed-gather", &Generator::GenWindowedGather, 3},
      {"batched-gather", &Generator::GenBatchedGather, 2}, {"batched-scatter", &Generator::GenBatchedScatter, 2},
      {"constant", &Generator::GenConstant, 2},     {"sort-prefix", &Generator::GenSortPrefix, 2},
      {"call", &Generator::GenCall, 2},             {"sharding-constraint", &Generator::GenShardingConstraint, 2},
      {"opt-barrier", &Generator::GenOptimizationBarrier, 1},
  };
  int total_weight = 0;
  for (const Kind& kind : kKinds) total_weight += kind.weight;
  for (int64_t n = 0; n < count; ++n) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      int64_t r = Uniform(0, total_weight - 1);
      const Kind* chosen = &kKinds.front();
      for (const Kind& kind : kKinds) {
        if (r < kind.weight) {
          chosen = &kind;
          break;
        }
        r -= kind.weight;
      }
      if ((this->*(chosen->generate))()) {
        program_.op_kinds.push_back(scope_ == &entry_ ? chosen->name : std::string("nested ") + chosen->name);
        break;
      }
    }
  }
}

RandomProgram Generator::Run() {
  ChooseMesh();
  int64_t initial = Uniform(1, 2);
  for (int64_t i = 0; i < initial; ++i) NewParameter(Chance(0.75) ? kF32 : kS32, RandomDims(Uniform(1, 3)));
  RandomOps(Uniform(options_.min_ops, options_.max_ops));
  FinishEntry();
  program_.text = ModuleText();
  return program_;
}

}  // namespace gspmd::random_program::detail

namespace gspmd::random_program {

RandomProgram GenerateRandomProgram(uint64_t seed, const RandomProgramOptions& options) {
  detail::Generator generator(seed, options);
  return generator.Run();
}

std::vector<Literal> RandomArguments(const RandomProgram& program, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  std::vector<Literal> arguments;
  for (const ParameterSpec& parameter : program.parameters) {
    Literal literal(parameter.shape);
    bool is_float = IsFloatingPoint(parameter.shape.element_type());
    std::uniform_real_distribution<double> real(-1, 1);
    std::uniform_int_distribution<int64_t> integer(parameter.low, parameter.high);
    for (int64_t e = 0; e < literal.element_count(); ++e)
      literal.SetFromDouble(e, is_float ? real(rng) : static_cast<double>(integer(rng)));
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

}  // namespace gspmd::random_program
