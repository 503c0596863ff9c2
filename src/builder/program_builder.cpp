// ProgramBuilder: shape-checked construction of whole programs (entry + sub-computations).
#include "builder/program_builder.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "builder/einsum.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::string Describe(const Instruction* x) { return StrCat("%", x->name(), " (", x->shape().ToString(false), ")"); }

void RequireArray(const Instruction* x, const char* what) {
  if (!x->shape().IsArray()) GSPMD_USER_ERROR(what, ": expected an array operand, got ", Describe(x));
}

void RequireDims(const Instruction* x, const std::vector<int64_t>& dims, const char* what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= x->shape().rank())
      GSPMD_USER_ERROR(what, ": dimension ", d, " is out of range for ", Describe(x));
  }
}

double ReduceInit(ReduceKind kind, ElementType type) {
  if (kind == ReduceKind::kSum) return 0.0;
  const bool is_max = kind == ReduceKind::kMax;
  if (IsFloatingPoint(type)) return is_max ? -INFINITY : INFINITY;
  if (type == ElementType::kPred) return is_max ? 0.0 : 1.0;
  const int64_t bits = ElementByteSize(type) * 8;
  if (IsUnsignedInteger(type)) return is_max ? 0.0 : std::ldexp(1.0, static_cast<int>(bits)) - 1;
  return is_max ? -std::ldexp(1.0, static_cast<int>(bits - 1)) : std::ldexp(1.0, static_cast<int>(bits - 1)) - 1;
}

const char* ReduceName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
  }
  return "reduce";
}

Opcode ReduceOpcode(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return Opcode::kAdd;
    case ReduceKind::kMax: return Opcode::kMaximum;
    case ReduceKind::kMin: return Opcode::kMinimum;
  }
  return Opcode::kAdd;
}

// Scalars print without a layout ("f32[]"), as XLA and JAX write them.
void DropScalarLayouts(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.mutable_tuple_shapes()) DropScalarLayouts(element);
    return;
  }
  if (shape.IsArray() && shape.rank() == 0) shape.set_layout(std::nullopt);
}

void DropScalarLayouts(Computation& computation) {
  for (const auto& instruction : computation.instructions()) DropScalarLayouts(instruction->mutable_shape());
}

std::string ComputationLayout(const Computation& entry) {
  std::string text = "{(";
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    if (i > 0) text += ", ";
    text += entry.parameter(i)->shape().ToString(true);
  }
  text += ")->" + entry.root()->shape().ToString(true) + "}";
  return text;
}

}  // namespace

ComputationBuilder::ComputationBuilder(ProgramState* state, Computation* computation)
    : state_(state), computation_(computation), hlo_(computation, &state->names) {}

Instruction* ComputationBuilder::Parameter(Shape shape, const std::string& name) {
  return hlo_.Parameter(next_parameter_++, std::move(shape), name);
}

Instruction* ComputationBuilder::Constant(Literal literal) { return hlo_.Constant(std::move(literal)); }

Instruction* ComputationBuilder::Scalar(double value, ElementType type) { return hlo_.ScalarConstant(type, value); }

Instruction* ComputationBuilder::Full(const Shape& shape, double value) {
  Instruction* scalar = Scalar(value, shape.element_type());
  if (shape.rank() == 0) return scalar;
  return hlo_.BroadcastScalar(scalar, shape.dims());
}

Instruction* ComputationBuilder::FullLike(Instruction* like, double value) {
  RequireArray(like, "full_like");
  return Full(like->shape(), value);
}

Instruction* ComputationBuilder::Iota(ElementType type, std::vector<int64_t> dims, int64_t dimension) {
  if (dimension < 0 || dimension >= static_cast<int64_t>(dims.size()))
    GSPMD_USER_ERROR("iota: dimension ", dimension, " is out of range for rank ", dims.size());
  return hlo_.Iota(Shape(type, std::move(dims)), dimension);
}

Instruction* ComputationBuilder::Checked(Instruction* a, Instruction* b, const char* what) {
  RequireArray(a, what);
  RequireArray(b, what);
  if (!a->shape().Compatible(b->shape()))
    GSPMD_USER_ERROR(what, ": operand shapes differ: ", Describe(a), " vs ", Describe(b));
  return a;
}

Instruction* ComputationBuilder::Elementwise(Opcode opcode, Instruction* a, Instruction* b) {
  Checked(a, b, OpcodeName(opcode).data());
  return hlo_.Binary(opcode, a, b);
}

Instruction* ComputationBuilder::Elementwise(Opcode opcode, Instruction* x) {
  RequireArray(x, OpcodeName(opcode).data());
  return hlo_.Unary(opcode, x);
}

Instruction* ComputationBuilder::Add(Instruction* a, Instruction* b) { return Elementwise(Opcode::kAdd, a, b); }
Instruction* ComputationBuilder::Sub(Instruction* a, Instruction* b) { return Elementwise(Opcode::kSubtract, a, b); }
Instruction* ComputationBuilder::Mul(Instruction* a, Instruction* b) { return Elementwise(Opcode::kMultiply, a, b); }
Instruction* ComputationBuilder::Div(Instruction* a, Instruction* b) { return Elementwise(Opcode::kDivide, a, b); }
Instruction* ComputationBuilder::Max(Instruction* a, Instruction* b) { return Elementwise(Opcode::kMaximum, a, b); }
Instruction* ComputationBuilder::Min(Instruction* a, Instruction* b) { return Elementwise(Opcode::kMinimum, a, b); }
Instruction* ComputationBuilder::Neg(Instruction* x) { return Elementwise(Opcode::kNegate, x); }
Instruction* ComputationBuilder::Exp(Instruction* x) { return Elementwise(Opcode::kExp, x); }
Instruction* ComputationBuilder::Log(Instruction* x) { return Elementwise(Opcode::kLog, x); }
Instruction* ComputationBuilder::Tanh(Instruction* x) { return Elementwise(Opcode::kTanh, x); }
Instruction* ComputationBuilder::Sqrt(Instruction* x) { return Elementwise(Opcode::kSqrt, x); }
Instruction* ComputationBuilder::Rsqrt(Instruction* x) { return Elementwise(Opcode::kRsqrt, x); }
Instruction* ComputationBuilder::Relu(Instruction* x) { return Max(x, FullLike(x, 0.0)); }
Instruction* ComputationBuilder::Scale(Instruction* x, double factor) { return Mul(x, FullLike(x, factor)); }
Instruction* ComputationBuilder::AddScalar(Instruction* x, double value) { return Add(x, FullLike(x, value)); }

Instruction* ComputationBuilder::Compare(Instruction* a, Instruction* b, ComparisonDirection direction) {
  Checked(a, b, "compare");
  return hlo_.Compare(a, b, direction);
}

Instruction* ComputationBuilder::Select(Instruction* pred, Instruction* on_true, Instruction* on_false) {
  Checked(on_true, on_false, "select");
  RequireArray(pred, "select");
  if (pred->shape().element_type() != ElementType::kPred || pred->shape().dims() != on_true->shape().dims())
    GSPMD_USER_ERROR("select: expected a pred predicate shaped like ", Describe(on_true), ", got ", Describe(pred));
  return hlo_.Select(pred, on_true, on_false);
}

Instruction* ComputationBuilder::Convert(Instruction* x, ElementType type) {
  RequireArray(x, "convert");
  if (x->shape().element_type() == type) return x;
  return hlo_.Convert(x, type);
}

Instruction* ComputationBuilder::Broadcast(Instruction* x, std::vector<int64_t> dims, std::vector<int64_t> dimensions) {
  RequireArray(x, "broadcast");
  if (static_cast<int64_t>(dimensions.size()) != x->shape().rank())
    GSPMD_USER_ERROR("broadcast of ", Describe(x), ": expected ", x->shape().rank(), " dimensions, got ",
                     dimensions.size());
  for (size_t i = 0; i < dimensions.size(); ++i) {
    const int64_t d = dimensions[i];
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || dims[d] != x->shape().dim(static_cast<int64_t>(i)))
      GSPMD_USER_ERROR("broadcast of ", Describe(x), ": operand dim ", i, " cannot map to result dim ", d);
  }
  return hlo_.Broadcast(x, std::move(dims), std::move(dimensions));
}

Instruction* ComputationBuilder::BroadcastAlong(Instruction* x, const std::vector<int64_t>& dims,
                                                const std::vector<int64_t>& new_dims) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
    if (std::find(new_dims.begin(), new_dims.end(), d) == new_dims.end()) kept.push_back(d);
  return Broadcast(x, dims, kept);
}

Instruction* ComputationBuilder::Reshape(Instruction* x, std::vector<int64_t> dims) {
  RequireArray(x, "reshape");
  Shape target(x->shape().element_type(), dims);
  if (target.element_count() != x->shape().element_count())
    GSPMD_USER_ERROR("reshape of ", Describe(x), " to ", target.ToString(false), ": element counts differ");
  if (x->shape().dims() == dims) return x;
  return hlo_.Reshape(x, std::move(dims));
}

Instruction* ComputationBuilder::Transpose(Instruction* x, std::vector<int64_t> permutation) {
  RequireArray(x, "transpose");
  std::vector<int64_t> sorted = permutation;
  std::sort(sorted.begin(), sorted.end());
  bool valid = static_cast<int64_t>(sorted.size()) == x->shape().rank();
  for (size_t i = 0; valid && i < sorted.size(); ++i) valid = sorted[i] == static_cast<int64_t>(i);
  if (!valid) GSPMD_USER_ERROR("transpose of ", Describe(x), ": not a permutation of its dims");
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) identity = identity && permutation[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return hlo_.Transpose(x, std::move(permutation));
}

Instruction* ComputationBuilder::Slice(Instruction* x, const std::vector<int64_t>& starts,
                                       const std::vector<int64_t>& limits) {
  RequireArray(x, "slice");
  if (static_cast<int64_t>(starts.size()) != x->shape().rank() || limits.size() != starts.size())
    GSPMD_USER_ERROR("slice of ", Describe(x), ": expected ", x->shape().rank(), " starts and limits");
  std::vector<SliceDim> slice;
  for (size_t d = 0; d < starts.size(); ++d) {
    if (starts[d] < 0 || limits[d] < starts[d] || limits[d] > x->shape().dim(static_cast<int64_t>(d)))
      GSPMD_USER_ERROR("slice of ", Describe(x), ": [", starts[d], ":", limits[d], "] is out of range in dim ", d);
    slice.push_back({starts[d], limits[d], 1});
  }
  return hlo_.Slice(x, std::move(slice));
}

Instruction* ComputationBuilder::DynamicSlice(Instruction* x, const std::vector<Instruction*>& starts,
                                              std::vector<int64_t> sizes) {
  RequireArray(x, "dynamic-slice");
  if (static_cast<int64_t>(starts.size()) != x->shape().rank() || sizes.size() != starts.size())
    GSPMD_USER_ERROR("dynamic-slice of ", Describe(x), ": expected ", x->shape().rank(), " starts and sizes");
  return hlo_.DynamicSlice(x, starts, std::move(sizes));
}

Instruction* ComputationBuilder::DynamicUpdateSlice(Instruction* x, Instruction* update,
                                                    const std::vector<Instruction*>& starts) {
  RequireArray(x, "dynamic-update-slice");
  RequireArray(update, "dynamic-update-slice");
  if (static_cast<int64_t>(starts.size()) != x->shape().rank() || update->shape().rank() != x->shape().rank())
    GSPMD_USER_ERROR("dynamic-update-slice of ", Describe(x), " with ", Describe(update), ": ranks differ");
  return hlo_.DynamicUpdateSlice(x, update, starts);
}

Instruction* ComputationBuilder::Concatenate(const std::vector<Instruction*>& parts, int64_t dimension) {
  if (parts.empty()) GSPMD_USER_ERROR("concatenate: expected at least one operand");
  for (Instruction* part : parts) {
    RequireArray(part, "concatenate");
    RequireDims(part, {dimension}, "concatenate");
    std::vector<int64_t> a = part->shape().dims(), b = parts[0]->shape().dims();
    a[dimension] = b[dimension] = 0;
    if (a != b) GSPMD_USER_ERROR("concatenate: ", Describe(part), " does not match ", Describe(parts[0]));
  }
  if (parts.size() == 1) return parts[0];
  return hlo_.Concatenate(parts, dimension);
}

Instruction* ComputationBuilder::Pad(Instruction* x, Instruction* value, PaddingConfig padding) {
  RequireArray(x, "pad");
  if (static_cast<int64_t>(padding.size()) != x->shape().rank())
    GSPMD_USER_ERROR("pad of ", Describe(x), ": expected ", x->shape().rank(), " padding dims");
  return hlo_.Pad(x, value, std::move(padding));
}

Instruction* ComputationBuilder::Dot(Instruction* lhs, Instruction* rhs, DotDimensionNumbers dims) {
  RequireArray(lhs, "dot");
  RequireArray(rhs, "dot");
  std::vector<int64_t> result_dims;
  auto is_in = [](const std::vector<int64_t>& list, int64_t d) {
    return std::find(list.begin(), list.end(), d) != list.end();
  };
  if (dims.lhs_batch_dims.size() != dims.rhs_batch_dims.size() ||
      dims.lhs_contracting_dims.size() != dims.rhs_contracting_dims.size())
    GSPMD_USER_ERROR("dot of ", Describe(lhs), " and ", Describe(rhs), ": batch/contracting dim counts differ");
  RequireDims(lhs, dims.lhs_batch_dims, "dot");
  RequireDims(lhs, dims.lhs_contracting_dims, "dot");
  RequireDims(rhs, dims.rhs_batch_dims, "dot");
  RequireDims(rhs, dims.rhs_contracting_dims, "dot");
  for (size_t i = 0; i < dims.lhs_batch_dims.size(); ++i) {
    if (lhs->shape().dim(dims.lhs_batch_dims[i]) != rhs->shape().dim(dims.rhs_batch_dims[i]))
      GSPMD_USER_ERROR("dot of ", Describe(lhs), " and ", Describe(rhs), ": batch dim sizes differ");
    result_dims.push_back(lhs->shape().dim(dims.lhs_batch_dims[i]));
  }
  for (size_t i = 0; i < dims.lhs_contracting_dims.size(); ++i) {
    if (lhs->shape().dim(dims.lhs_contracting_dims[i]) != rhs->shape().dim(dims.rhs_contracting_dims[i]))
      GSPMD_USER_ERROR("dot of ", Describe(lhs), " and ", Describe(rhs), ": contracting dim sizes differ");
  }
  for (int64_t d = 0; d < lhs->shape().rank(); ++d)
    if (!is_in(dims.lhs_batch_dims, d) && !is_in(dims.lhs_contracting_dims, d)) result_dims.push_back(lhs->shape().dim(d));
  for (int64_t d = 0; d < rhs->shape().rank(); ++d)
    if (!is_in(dims.rhs_batch_dims, d) && !is_in(dims.rhs_contracting_dims, d)) result_dims.push_back(rhs->shape().dim(d));
  Instruction* dot = hlo_.AddOp(Opcode::kDot, Shape(lhs->shape().element_type(), result_dims), {lhs, rhs});
  dot->mutable_dot_dims() = std::move(dims);
  return dot;
}

Instruction* ComputationBuilder::Einsum(const std::string& spec, Instruction* lhs, Instruction* rhs) {
  RequireArray(lhs, "einsum");
  RequireArray(rhs, "einsum");
  EinsumPlan plan = PlanEinsum(spec, lhs->shape(), rhs->shape());
  if (!plan.lhs_sum_dims.empty()) lhs = ReduceSum(lhs, plan.lhs_sum_dims);
  if (!plan.rhs_sum_dims.empty()) rhs = ReduceSum(rhs, plan.rhs_sum_dims);
  Instruction* dot = Dot(lhs, rhs, plan.dot_dims);
  return Transpose(dot, plan.output_permutation);
}

Computation* ComputationBuilder::Reducer(ReduceKind kind, ElementType type) {
  auto key = std::make_pair(kind, type);
  auto found = state_->reducers.find(key);
  if (found != state_->reducers.end()) return found->second;
  const std::string name = StrCat(ReduceName(kind), "_", ElementTypeName(type));
  auto computation = std::make_unique<Computation>(state_->names.Unique(name));
  HloBuilder b(computation.get(), &state_->names);
  Instruction* a = b.Parameter(0, Shape(type, {}), "lhs");
  Instruction* c = b.Parameter(1, Shape(type, {}), "rhs");
  computation->set_root(b.Binary(ReduceOpcode(kind), a, c));
  Computation* raw = computation.get();
  state_->pending.push_back(std::move(computation));
  state_->reducers[key] = raw;
  return raw;
}

Instruction* ComputationBuilder::Reduce(Instruction* x, std::vector<int64_t> dims, ReduceKind kind) {
  RequireArray(x, "reduce");
  RequireDims(x, dims, "reduce");
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    GSPMD_USER_ERROR("reduce of ", Describe(x), ": a dimension is listed twice");
  if (dims.empty()) return x;
  const ElementType type = x->shape().element_type();
  Instruction* init = Scalar(ReduceInit(kind, type), type);
  std::vector<int64_t> result_dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) result_dims.push_back(x->shape().dim(d));
  Instruction* reduce = hlo_.AddOp(Opcode::kReduce, Shape(type, result_dims), {x, init});
  reduce->dimensions = std::move(dims);
  reduce->set_called_computations({Reducer(kind, type)});
  return reduce;
}

Instruction* ComputationBuilder::Mean(Instruction* x, std::vector<int64_t> dims) {
  int64_t count = 1;
  RequireDims(x, dims, "mean");
  for (int64_t d : dims) count *= x->shape().dim(d);
  return Scale(ReduceSum(x, std::move(dims)), 1.0 / static_cast<double>(count));
}

Instruction* ComputationBuilder::Softmax(Instruction* x, int64_t dim) {
  RequireDims(x, {dim}, "softmax");
  const std::vector<int64_t>& dims = x->shape().dims();
  Instruction* max = BroadcastAlong(ReduceMax(x, {dim}), dims, {dim});
  Instruction* e = Exp(Sub(x, max));
  Instruction* sum = BroadcastAlong(ReduceSum(e, {dim}), dims, {dim});
  return Div(e, sum);
}

Instruction* ComputationBuilder::Tuple(const std::vector<Instruction*>& elements) { return hlo_.Tuple(elements); }

Instruction* ComputationBuilder::GetTupleElement(Instruction* tuple, int64_t index) {
  if (!tuple->shape().IsTuple() || index < 0 || index >= tuple->shape().tuple_size())
    GSPMD_USER_ERROR("get-tuple-element ", index, " of ", Describe(tuple), ": not a tuple element");
  return hlo_.GetTupleElement(tuple, index);
}

Instruction* ComputationBuilder::While(Computation* condition, Computation* body, Instruction* init) {
  if (condition->root() == nullptr || body->root() == nullptr)
    GSPMD_USER_ERROR("while: the condition and body need roots (SetRoot)");
  if (!body->root()->shape().Compatible(init->shape()) || body->num_parameters() != 1 ||
      !body->parameter(0)->shape().Compatible(init->shape()))
    GSPMD_USER_ERROR("while: body ", body->name(), " must take and return ", init->shape().ToString(false));
  if (!condition->root()->shape().Compatible(Shape(ElementType::kPred, {})))
    GSPMD_USER_ERROR("while: condition ", condition->name(), " must return pred[]");
  Instruction* loop = hlo_.AddOp(Opcode::kWhile, init->shape(), {init});
  loop->set_called_computations({condition, body});
  return loop;
}

Instruction* ComputationBuilder::Call(Computation* callee, const std::vector<Instruction*>& arguments) {
  if (callee->root() == nullptr) GSPMD_USER_ERROR("call: ", callee->name(), " has no root (SetRoot)");
  if (callee->num_parameters() != static_cast<int64_t>(arguments.size()))
    GSPMD_USER_ERROR("call of ", callee->name(), ": expected ", callee->num_parameters(), " arguments, got ",
                     arguments.size());
  Instruction* call = hlo_.AddOp(Opcode::kCall, callee->root()->shape(), arguments);
  call->set_called_computations({callee});
  return call;
}

Instruction* ComputationBuilder::ShardingConstraint(Instruction* x, const Sharding& sharding,
                                                    const std::vector<int64_t>& unspecified_dims) {
  Instruction* call = hlo_.AddOp(Opcode::kCustomCall, x->shape(), {x});
  call->custom_call_target = "Sharding";
  call->set_sharding(sharding);
  if (!unspecified_dims.empty()) {
    std::string config = "\"unspecified_dims=[";
    for (size_t i = 0; i < unspecified_dims.size(); ++i) config += (i > 0 ? "," : "") + std::to_string(unspecified_dims[i]);
    call->backend_config = config + "]\"";
  }
  return Name(call, "sharding_constraint");
}

Instruction* ComputationBuilder::Name(Instruction* x, const std::string& name) {
  x->set_name(state_->names.Unique(name));
  return x;
}

// ---- ProgramBuilder ----

namespace {

std::unique_ptr<ProgramState> NewState(const std::string& module_name) {
  auto state = std::make_unique<ProgramState>();
  state->module_name = module_name;
  state->entry = std::make_unique<Computation>(state->names.Unique("main"));
  state->entry->printed_with_signature = false;
  return state;
}

// Appends `pending` computations to `module` so that every callee precedes its callers.
void AddInCalleeOrder(std::vector<std::unique_ptr<Computation>>& pending, Module& module) {
  std::set<const Computation*> added;
  std::function<void(Computation*)> visit = [&](Computation* computation) {
    if (!added.insert(computation).second) return;
    for (const auto& instruction : computation->instructions())
      for (Computation* callee : instruction->called_computations()) visit(callee);
    for (auto& owned : pending) {
      if (owned.get() == computation) module.AddComputation(std::move(owned));
    }
  };
  for (size_t i = 0; i < pending.size(); ++i)
    if (pending[i]) visit(pending[i].get());
}

}  // namespace

ProgramBuilder::ProgramBuilder(const std::string& module_name) : ProgramBuilder(NewState(module_name)) {}

ProgramBuilder::ProgramBuilder(std::unique_ptr<ProgramState> state)
    : ComputationBuilder(state.get(), state->entry.get()), owned_state_(std::move(state)) {}

ProgramBuilder::~ProgramBuilder() = default;

std::unique_ptr<ComputationBuilder> ProgramBuilder::NewComputation(const std::string& name) {
  auto computation = std::make_unique<Computation>(owned_state_->names.Unique(name));
  Computation* raw = computation.get();
  owned_state_->pending.push_back(std::move(computation));
  return std::make_unique<ComputationBuilder>(owned_state_.get(), raw);
}

std::unique_ptr<Module> ProgramBuilder::Build(Instruction* root, std::optional<Sharding> root_sharding) {
  if (root->shape().IsTuple()) {
    if (root_sharding) root->set_sharding(std::move(root_sharding));
    return Finish(root);
  }
  return Build(std::vector<Instruction*>{root}, {std::move(root_sharding)});
}

std::unique_ptr<Module> ProgramBuilder::Build(const std::vector<Instruction*>& results,
                                              const std::vector<std::optional<Sharding>>& result_shardings) {
  if (results.empty()) GSPMD_USER_ERROR("Build: expected at least one result");
  if (!result_shardings.empty() && result_shardings.size() != results.size())
    GSPMD_USER_ERROR("Build: ", result_shardings.size(), " result shardings for ", results.size(), " results");
  bool all = !result_shardings.empty();
  for (const auto& s : result_shardings) all = all && s.has_value();
  std::vector<Instruction*> outputs = results;
  if (!all) {
    for (size_t i = 0; i < result_shardings.size(); ++i)
      if (result_shardings[i]) outputs[i] = ShardingConstraint(outputs[i], *result_shardings[i]);
  }
  Instruction* root = outputs.size() == 1 ? outputs[0] : Tuple(outputs);
  // A result that already carries another annotation (a parameter, a Sharding custom-call)
  // keeps it; a copy carries the result sharding.
  if (all && outputs.size() == 1 && root->sharding() && !(*root->sharding() == *result_shardings[0]))
    root = hlo().Copy(root);
  if (all && outputs.size() == 1) root->set_sharding(*result_shardings[0]);
  if (all && outputs.size() > 1) {
    std::vector<Sharding> leaves;
    for (const auto& s : result_shardings) leaves.push_back(*s);
    root->set_sharding(Sharding::Tuple(std::move(leaves)));
  }
  return Finish(root);
}

std::unique_ptr<Module> ProgramBuilder::Finish(Instruction* root) {
  if (!owned_state_->entry) GSPMD_USER_ERROR("ProgramBuilder: Build called twice");
  Computation* entry = owned_state_->entry.get();
  if (root->parent() != entry) GSPMD_USER_ERROR("Build: result %", root->name(), " is not in the entry computation");
  entry->set_root(root);
  int64_t devices = owned_state_->num_devices;
  auto count_devices = [&](const Computation& computation) {
    for (const auto& instruction : computation.instructions())
      if (instruction->sharding()) devices = std::max(devices, instruction->sharding()->RequiredDeviceCount());
  };
  count_devices(*entry);
  DropScalarLayouts(*entry);
  for (const auto& computation : owned_state_->pending) {
    count_devices(*computation);
    DropScalarLayouts(*computation);
  }

  auto module = std::make_unique<Module>(owned_state_->module_name);
  module->SetAttribute("entry_computation_layout", ComputationLayout(*entry));
  module->set_num_partitions(std::max<int64_t>(devices, 1));
  AddInCalleeOrder(owned_state_->pending, *module);
  module->AddComputation(std::move(owned_state_->entry), /*is_entry=*/true);
  return module;
}

}  // namespace gspmd
