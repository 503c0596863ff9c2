// Random program generator, part 3: argmax reductions, select-and-scatter, conditionals, calls,
// topk, clamp, constants, sharding constraints, optimization barriers, and the windowed,
// multi-index and batched forms of gather and scatter.
#include "partitioner/random_program_generator.h"
#include "support/diagnostic.h"

namespace gspmd::random_program::detail {

std::string Generator::ArgRegion(ElementType type) {
  std::string name = "argmax_" + TypeName(type);
  if (std::find(region_names_.begin(), region_names_.end(), name) != region_names_.end()) return name;
  std::string t = TypeName(type);
  // Larger value wins; equal values: the smaller index (associative and commutative).
  regions_.push_back("%" + name + " (a: " + t + "[], ai: s32[], b: " + t + "[], bi: s32[]) -> (" + t +
                     "[], s32[]) {\n  %a = " + t + "[] parameter(0)\n  %ai = s32[] parameter(1)\n  %b = " + t +
                     "[] parameter(2)\n  %bi = s32[] parameter(3)\n"
                     "  %gt = pred[] compare(%a, %b), direction=GT\n"
                     "  %eq = pred[] compare(%a, %b), direction=EQ\n"
                     "  %lt = pred[] compare(%ai, %bi), direction=LT\n"
                     "  %tie = pred[] and(%eq, %lt)\n  %pick = pred[] or(%gt, %tie)\n"
                     "  %v = " + t + "[] select(%pick, %a, %b)\n  %i = s32[] select(%pick, %ai, %bi)\n"
                     "  ROOT %r = (" + t + "[], s32[]) tuple(%v, %i)\n}\n");
  region_names_.push_back(name);
  return name;
}

bool Generator::GenArgReduce() {
  Value* x = PickValue([](const Value& v) { return IsNumeric(v) && v.exact && v.rank() >= 1; });
  if (x == nullptr) return false;
  int64_t dim = Uniform(0, x->rank() - 1);
  Value& index = Emit("iota", kS32, x->dims, "iota(), iota_dimension=" + std::to_string(dim), true,
                      ShardingFor(x->rank(), x));
  Value& init_value = ScalarConstant(x->type, InitFor("maximum", x->type));
  Value& init_index = ScalarConstant(kS32, "0");
  Dims out;
  for (int64_t i = 0; i < x->rank(); ++i)
    if (i != dim) out.push_back(x->dims[i]);
  int64_t rank = static_cast<int64_t>(out.size());
  std::string value_sharding = RandomSharding(rank);
  std::string index_sharding = Chance(0.8) ? value_sharding : RandomSharding(rank);
  Value values{"", x->type, out}, indices{"", kS32, out};
  std::string op = "reduce(" + Use(*x) + ", " + Use(index) + ", " + Use(init_value) + ", " + Use(init_index) +
                   "), dimensions={" + std::to_string(dim) + "}, to_apply=%" + ArgRegion(x->type);
  Value tuple = EmitTuple("argmax", {values, indices}, op, "{" + value_sharding + ", " + index_sharding + "}");
  Emit("max", x->type, out, "get-tuple-element(%" + tuple.name + "), index=0", true, value_sharding);
  Emit("argmax", kS32, out, "get-tuple-element(%" + tuple.name + "), index=1", true, index_sharding);
  return true;
}

bool Generator::GenSelectAndScatter() {
  Value* x = PickValue([](const Value& v) { return v.type == kF32 && v.exact && v.rank() >= 1; });
  if (x == nullptr) return false;
  // Max-like (>=, >) or min-like (<=, <) selects; the first of equal elements wins for >=, <=.
  std::string select = PickOf(std::vector<std::string>{"ge", "ge", "greater", "le", "less"});
  bool max_like = select == "ge" || select == "greater";
  if (Chance(0.3)) {
    // An operand with -inf (+inf) elements, which tie with what a partitioner pads with.
    Value& extreme = ScalarConstant(kF32, max_like ? "-inf" : "inf");
    std::string config;
    Dims dims;
    for (int64_t i = 0; i < x->rank(); ++i) {
      int64_t low = Uniform(0, 2), high = Uniform(0, 2);
      config += (i ? "x" : "") + std::to_string(low) + "_" + std::to_string(high);
      dims.push_back(x->dims[i] + low + high);
    }
    if (!Fits(dims)) return false;
    x = &Emit("padinf", kF32, dims, "pad(" + Use(*x) + ", " + Use(extreme) + "), padding=" + config, true,
              RandomSharding(x->rank()));
  }
  Dims size, stride, low, high, ones(x->rank(), 1), out;
  for (int64_t i = 0; i < x->rank(); ++i) {
    bool windowed = Chance(0.6);
    size.push_back(windowed ? Spread(1, 3) : 1);
    stride.push_back(windowed ? Uniform(1, size.back()) : 1);
    low.push_back(windowed && Chance(0.3) ? Uniform(0, size.back() - 1) : 0);
    high.push_back(windowed && Chance(0.3) ? Uniform(0, size.back() - 1) : 0);
    int64_t n = WindowOutput(x->dims[i], size[i], stride[i], low[i], high[i], 1, 1);
    if (n < 1) return false;
    out.push_back(n);
  }
  Value& source = OperandLike(kF32, out, false);
  Value& init = ScalarConstant(kF32, "0");
  std::string op = "select-and-scatter(" + Use(*x) + ", " + Use(source) + ", " + Use(init) + "), " +
                   WindowText(size, stride, low, high, ones, ones) + ", select=%" + Region(select, kF32) +
                   ", scatter=%" + Region("add", kF32);
  Emit("sas", kF32, x->dims, op, false, ShardingFor(x->rank(), x));
  return true;
}

std::string Generator::BranchComputation(const std::string& name, ElementType type, const Dims& dims,
                                         const std::string& in_sharding, const std::string& out_sharding,
                                         int64_t variant) {
  Scope branch;
  branch.allows_parameters = false;
  Scope* saved = scope_;
  scope_ = &branch;
  std::string shape = ShapeText(type, dims);
  int64_t rank = static_cast<int64_t>(dims.size());
  Value& param = Emit("bp", type, dims, "parameter(0)", true, in_sharding);
  std::string param_name = param.name;
  if (variant == 0) {
    Emit("neg", type, dims, "negate(" + Use(param) + ")", true, out_sharding);
  } else if (variant == 1) {
    Value& doubled = Emit("dbl", type, dims, "add(" + Use(param) + ", " + Use(param) + ")", true, RandomSharding(rank));
    Emit("mx", type, dims, "maximum(" + Use(doubled) + ", " + Use(param) + ")", true, out_sharding);
  } else if (variant == 3) {
    // Any ops; the result is the latest value of the parameter's type and dims.
    ++depth_;
    RandomOps(Uniform(1, 4));
    --depth_;
    Value* result = &param;
    for (auto it = branch.values.rbegin(); it != branch.values.rend(); ++it) {
      if (it->type == type && it->dims == dims) {
        result = &*it;
        break;
      }
    }
    Emit("out", type, dims, "copy(" + Use(*result) + ")", result->exact, out_sharding);
  } else {
    Dims kept_dims(dims.begin() + 1, dims.end()), kept(rank - 1);
    std::iota(kept.begin(), kept.end(), 1);
    Value& init = ScalarConstant(type, InitFor("maximum", type));
    Value& r = Emit("r", type, kept_dims,
                    "reduce(" + Use(param) + ", " + Use(init) + "), dimensions={0}, to_apply=%" + Region("maximum", type),
                    true, RandomSharding(rank - 1));
    Value& back = Emit("back", type, dims, "broadcast(" + Use(r) + "), dimensions={" + Join(kept) + "}", true,
                       RandomSharding(rank));
    Emit("sub", type, dims, "subtract(" + Use(param) + ", " + Use(back) + ")", true, out_sharding);
  }
  branch.lines.back() = "ROOT " + branch.lines.back();
  scope_ = saved;
  std::string text = "%" + name + " (" + param_name + ": " + shape + ") -> " + shape + " {\n";
  for (const std::string& line : branch.lines) text += "  " + line + "\n";
  return text + "}\n";
}

bool Generator::GenConditional() {
  if (!scope().allows_parameters) return false;
  Value* x = PickValue([](const Value& v) { return IsNumeric(v) && v.rank() >= 1 && v.rank() <= 3; });
  if (x == nullptr) return false;
  int64_t branches = Uniform(2, 3);
  int64_t id = next_id_++;
  std::string in_sharding = Chance(0.7) ? x->sharding : RandomSharding(x->rank());
  std::string out_sharding = ShardingFor(x->rank(), x);
  std::string names, operands;
  bool exact = x->exact;
  for (int64_t b = 0; b < branches; ++b) {
    std::string name = "branch." + std::to_string(id) + "." + std::to_string(b);
    int64_t variant = b == 0 && Chance(0.5) ? 3 : b;
    exact = exact && variant != 3;  // the generic branch may add floats in any order
    regions_.push_back(BranchComputation(name, x->type, x->dims, in_sharding, out_sharding, variant));
    names += (b ? ", %" : "%") + name;
    operands += ", " + Use(*x);
  }
  // Out-of-range branch indices run the last branch.
  Value& index = NewParameter(kS32, {}, -1, branches);
  std::string op = "conditional(" + Use(index) + operands + "), branch_computations={" + names + "}";
  Emit("cond", x->type, x->dims, op, exact, out_sharding);
  return true;
}

bool Generator::GenCall() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1 && v.rank() <= 3; });
  if (x == nullptr) return false;
  std::string name = "callee." + std::to_string(next_id_++);
  std::string in_sharding = Chance(0.7) ? x->sharding : RandomSharding(x->rank());
  std::string out_sharding = ShardingFor(x->rank(), x);
  int64_t variant = x->type == kPred ? 3 : Uniform(0, 3);
  regions_.push_back(BranchComputation(name, x->type, x->dims, in_sharding, out_sharding, variant));
  Emit("call", x->type, x->dims, "call(" + Use(*x) + "), to_apply=%" + name, x->exact && variant != 3, out_sharding);
  return true;
}

bool Generator::GenShardingConstraint() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  Emit("constraint", x->type, x->dims, "custom-call(" + Use(*x) + "), custom_call_target=\"Sharding\"", x->exact,
       RandomSharding(x->rank()));
  return true;
}

bool Generator::GenOptimizationBarrier() {
  Value* x = PickValue([](const Value& v) { return v.rank() >= 1; });
  if (x == nullptr) return false;
  Value* y = PickValue([](const Value& v) { return v.rank() >= 1; });
  std::string sx = ShardingFor(x->rank(), x), sy = ShardingFor(y->rank(), y);
  std::string sharding = "{" + sx + ", " + sy + "}";
  Value tuple = EmitTuple("pair", {*x, *y}, "tuple(" + Use(*x) + ", " + Use(*y) + ")", sharding);
  Value barrier = EmitTuple("barrier", {*x, *y}, "opt-barrier(%" + tuple.name + ")", sharding);
  Emit("bx", x->type, x->dims, "get-tuple-element(%" + barrier.name + "), index=0", x->exact, sx);
  Emit("by", y->type, y->dims, "get-tuple-element(%" + barrier.name + "), index=1", y->exact, sy);
  return true;
}

bool Generator::GenTopK() {
  Value* x = PickValue([](const Value& v) { return IsNumeric(v) && v.exact && v.rank() >= 1 && v.rank() <= 2; });
  if (x == nullptr) return false;
  int64_t last = x->rank() - 1;
  int64_t k = Uniform(1, std::min<int64_t>(x->dims[last], 4));
  Dims out = x->dims;
  out[last] = k;
  std::string value_sharding = RandomSharding(x->rank());
  std::string index_sharding = Chance(0.8) ? value_sharding : RandomSharding(x->rank());
  Value values{"", x->type, out}, indices{"", kS32, out};
  std::string op = "topk(" + Use(*x) + "), k=" + std::to_string(k) + ", largest=" + (Chance(0.7) ? "true" : "false");
  Value tuple = EmitTuple("topk", {values, indices}, op, "{" + value_sharding + ", " + index_sharding + "}");
  Emit("top", x->type, out, "get-tuple-element(%" + tuple.name + "), index=0", true, value_sharding);
  Emit("topi", kS32, out, "get-tuple-element(%" + tuple.name + "), index=1", true, index_sharding);
  return true;
}

bool Generator::GenClamp() {
  Value* x = PickValue([](const Value& v) { return IsNumeric(v); });
  if (x == nullptr) return false;
  std::string low, high;
  bool exact = x->exact;
  if (Chance(0.4)) {
    low = Use(ScalarConstant(x->type, x->type == kF32 ? "-0.5" : "-2"));
    high = Use(ScalarConstant(x->type, x->type == kF32 ? "0.5" : "2"));
  } else {
    Value& lo = OperandLike(x->type, x->dims, false);
    Value& hi = OperandLike(x->type, x->dims, false);
    exact = exact && lo.exact && hi.exact;
    low = Use(lo);
    high = Use(hi);
  }
  Emit("clamp", x->type, x->dims, "clamp(" + low + ", " + Use(*x) + ", " + high + ")", exact, ShardingFor(x->rank(), x));
  return true;
}

bool Generator::GenWindowedGather() {
  if (!scope().allows_parameters) return false;
  Value& operand = PickIndexedOperand(1, 3);
  int64_t count = Uniform(1, 5);
  Dims slice_sizes = operand.dims, collapsed, start_map;
  int64_t high = 0;
  if (operand.rank() >= 2 && Chance(0.4)) {
    // Two collapsed index dims: start_index_map in a random order.
    Dims axes = RandomPermutation(operand.rank());
    start_map = {axes[0], axes[1]};
    collapsed = start_map;
    std::sort(collapsed.begin(), collapsed.end());
    for (int64_t a : collapsed) slice_sizes[a] = 1;
    high = std::min(operand.dims[axes[0]], operand.dims[axes[1]]) - 1;
  } else {
    int64_t axis = Uniform(0, operand.rank() - 1);
    start_map = {axis};
    slice_sizes[axis] = Uniform(1, operand.dims[axis]);
    high = operand.dims[axis] - slice_sizes[axis];
  }
  Windowed out{{count}, {}};
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (std::find(collapsed.begin(), collapsed.end(), i) != collapsed.end()) continue;
    out.window_dims.push_back(static_cast<int64_t>(out.dims.size()));
    out.dims.push_back(slice_sizes[i]);
  }
  if (!Fits(out.dims)) return false;
  bool wide = Chance(0.15);
  Value& indices = NewParameter(kS32, {count, static_cast<int64_t>(start_map.size())}, wide ? -2 : 0,
                                wide ? high + 2 : high);
  EmitGather("wgather", operand, indices, out, collapsed, start_map, "index_vector_dim=1", slice_sizes);
  return true;
}

bool Generator::GenBatchedGather() {
  if (!scope().allows_parameters) return false;
  Value& operand = PickIndexedOperand(2, 3);
  Dims axes = RandomPermutation(operand.rank());
  int64_t batch = axes[0], axis = axes[1];
  int64_t count = Uniform(1, 5);
  Windowed out = AroundIndexed(operand, {operand.dims[batch], count}, axis, batch);
  if (!Fits(out.dims)) return false;
  Dims slice_sizes = operand.dims;
  slice_sizes[batch] = 1;
  slice_sizes[axis] = 1;
  Value& indices = NewParameter(kS32, {operand.dims[batch], count}, 0, operand.dims[axis] - 1);
  EmitGather("bgather", operand, indices, out, {axis}, {axis},
             "operand_batching_dims={" + std::to_string(batch) +
                 "}, start_indices_batching_dims={0}, index_vector_dim=2",
             slice_sizes);
  return true;
}

bool Generator::GenBatchedScatter() {
  if (!scope().allows_parameters) return false;
  Value& operand = PickIndexedOperand(2, 3);
  Dims axes = RandomPermutation(operand.rank());
  int64_t batch = axes[0], axis = axes[1];
  int64_t count = Uniform(1, 5);
  Windowed updates = AroundIndexed(operand, {operand.dims[batch], count}, axis, batch);
  Value& indices = NewParameter(kS32, {operand.dims[batch], count}, 0, operand.dims[axis] - 1);
  Value& update_values = OperandLike(operand.type, updates.dims, false);
  EmitAddScatter("bscatter", operand, indices, update_values, updates.window_dims, axis,
                 "input_batching_dims={" + std::to_string(batch) +
                     "}, scatter_indices_batching_dims={0}, index_vector_dim=2");
  return true;
}

bool Generator::GenConstant() {
  Dims dims = RandomDims(Uniform(1, 2));
  if (Product(dims) > 64) return false;
  ElementType type = Chance(0.7) ? kF32 : kS32;
  // Nested braces, one level per dim: {{a, b}, {c, d}}.
  std::function<std::string(size_t)> level = [&](size_t d) {
    std::string text = "{";
    for (int64_t i = 0; i < dims[d]; ++i) {
      if (i) text += ", ";
      if (d + 1 < dims.size()) text += level(d + 1);
      else text += type == kF32 ? std::to_string(static_cast<double>(Uniform(-8, 8)) / 8) : std::to_string(Uniform(-5, 5));
    }
    return text + "}";
  };
  Emit("const", type, dims, "constant(" + level(0) + ")", true, RandomSharding(static_cast<int64_t>(dims.size())));
  return true;
}

}  // namespace gspmd::random_program::detail
