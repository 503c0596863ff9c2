// ProgramBuilder: a friendly front end over HloBuilder for writing whole programs as for one
// device (parameters, einsums, elementwise math, reductions, softmax, loops), producing a Module.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/hlo_builder.h"
#include "ir/module.h"

namespace gspmd {

enum class ReduceKind { kSum, kMax, kMin };

// State shared by every computation builder of one program: the module name, the entry
// computation, instruction/computation names, cached reducer computations, pending sub-computations (added to the module, callees first,
// when the program is finished) and the device count the annotations need.
struct ProgramState {
  std::string module_name;
  NameUniquer names;
  std::unique_ptr<Computation> entry;
  std::vector<std::unique_ptr<Computation>> pending;  // sub-computations, not yet in a module
  std::map<std::pair<ReduceKind, ElementType>, Computation*> reducers;
  int64_t num_devices = 0;  // largest device count an annotation used
};

// Appends instructions to one computation. Shapes are inferred; operands with mismatched
// shapes are UserErrors naming the operation and both shapes.
//
//   ProgramBuilder p("mlp");
//   Instruction* x = p.Parameter(F32({8, 16}), "x");
//   Instruction* w = p.Parameter(F32({16, 32}), "w");
//   Instruction* h = p.Relu(p.Einsum("bd,dh->bh", x, w));
//   std::unique_ptr<Module> module = p.Build(h);
class ComputationBuilder {
 public:
  ComputationBuilder(ProgramState* state, Computation* computation);

  Computation* computation() const { return computation_; }
  ProgramState* state() const { return state_; }
  HloBuilder& hlo() { return hlo_; }

  // Parameters are numbered in creation order.
  Instruction* Parameter(Shape shape, const std::string& name);
  Instruction* Constant(Literal literal);
  Instruction* Scalar(double value, ElementType type = ElementType::kF32);
  // A value of `shape` with every element `value` (a broadcast scalar constant).
  Instruction* Full(const Shape& shape, double value);
  Instruction* FullLike(Instruction* like, double value);
  Instruction* Iota(ElementType type, std::vector<int64_t> dims, int64_t dimension);

  // Elementwise (same shapes).
  Instruction* Add(Instruction* a, Instruction* b);
  Instruction* Sub(Instruction* a, Instruction* b);
  Instruction* Mul(Instruction* a, Instruction* b);
  Instruction* Div(Instruction* a, Instruction* b);
  Instruction* Max(Instruction* a, Instruction* b);
  Instruction* Min(Instruction* a, Instruction* b);
  Instruction* Neg(Instruction* x);
  Instruction* Exp(Instruction* x);
  Instruction* Log(Instruction* x);
  Instruction* Tanh(Instruction* x);
  Instruction* Sqrt(Instruction* x);
  Instruction* Rsqrt(Instruction* x);
  Instruction* Relu(Instruction* x);
  Instruction* Scale(Instruction* x, double factor);       // x * factor
  Instruction* AddScalar(Instruction* x, double value);    // x + value
  Instruction* Compare(Instruction* a, Instruction* b, ComparisonDirection direction);
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false);
  Instruction* Convert(Instruction* x, ElementType type);
  Instruction* Elementwise(Opcode opcode, Instruction* a, Instruction* b);
  Instruction* Elementwise(Opcode opcode, Instruction* x);

  // Shape ops.
  // Maps operand dim i to result dim `dimensions[i]` (HLO broadcast).
  Instruction* Broadcast(Instruction* x, std::vector<int64_t> dims, std::vector<int64_t> dimensions);
  // Broadcasts a value with some dims of `like` removed back to `like`'s dims: operand dims are
  // the result dims not in `new_dims`, in order.
  Instruction* BroadcastAlong(Instruction* x, const std::vector<int64_t>& dims, const std::vector<int64_t>& new_dims);
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims);
  Instruction* Transpose(Instruction* x, std::vector<int64_t> permutation);
  Instruction* Slice(Instruction* x, const std::vector<int64_t>& starts, const std::vector<int64_t>& limits);
  Instruction* DynamicSlice(Instruction* x, const std::vector<Instruction*>& starts, std::vector<int64_t> sizes);
  Instruction* DynamicUpdateSlice(Instruction* x, Instruction* update, const std::vector<Instruction*>& starts);
  Instruction* Concatenate(const std::vector<Instruction*>& parts, int64_t dimension);
  Instruction* Pad(Instruction* x, Instruction* value, PaddingConfig padding);

  // Contractions. Dot result dims: batch, lhs free, rhs free (as HLO's dot).
  Instruction* Dot(Instruction* lhs, Instruction* rhs, DotDimensionNumbers dims);
  // Two-operand einsum, e.g. "bsd,dnh->bsnh": shared labels kept in the output are batch dims,
  // shared labels dropped are contracted; labels of one operand missing from the output are
  // summed first. One letter per dim, no repeats within an operand.
  Instruction* Einsum(const std::string& spec, Instruction* lhs, Instruction* rhs);

  // Reductions over `dims` (result keeps the other dims in order).
  Instruction* Reduce(Instruction* x, std::vector<int64_t> dims, ReduceKind kind);
  Instruction* ReduceSum(Instruction* x, std::vector<int64_t> dims) { return Reduce(x, std::move(dims), ReduceKind::kSum); }
  Instruction* ReduceMax(Instruction* x, std::vector<int64_t> dims) { return Reduce(x, std::move(dims), ReduceKind::kMax); }
  Instruction* Mean(Instruction* x, std::vector<int64_t> dims);
  // exp(x - max) / sum along `dim`.
  Instruction* Softmax(Instruction* x, int64_t dim);

  // Tuples, loops and calls.
  Instruction* Tuple(const std::vector<Instruction*>& elements);
  Instruction* GetTupleElement(Instruction* tuple, int64_t index);
  Instruction* While(Computation* condition, Computation* body, Instruction* init);
  Instruction* Call(Computation* callee, const std::vector<Instruction*>& arguments);

  // A `Sharding` custom-call (JAX's with_sharding_constraint): an identity of `x` whose
  // result has `sharding`; `unspecified_dims` are left open for propagation to refine
  // (written as backend_config="unspecified_dims=[...]", as XLA does).
  Instruction* ShardingConstraint(Instruction* x, const Sharding& sharding,
                                  const std::vector<int64_t>& unspecified_dims = {});

  // Renames an instruction (uniqued); returns it.
  Instruction* Name(Instruction* x, const std::string& name);
  void SetRoot(Instruction* root) { computation_->set_root(root); }

 private:
  Instruction* Checked(Instruction* a, Instruction* b, const char* what);
  Computation* Reducer(ReduceKind kind, ElementType type);

  ProgramState* state_;
  Computation* computation_;
  HloBuilder hlo_;
  int64_t next_parameter_ = 0;
};

// Owns the module and its entry computation.
class ProgramBuilder : public ComputationBuilder {
 public:
  explicit ProgramBuilder(const std::string& module_name);
  ~ProgramBuilder();
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  // A builder for a new sub-computation (while body/condition, called function). Set its root
  // with SetRoot before Build.
  std::unique_ptr<ComputationBuilder> NewComputation(const std::string& name);

  // Finishes the program with one result (the root) or several (a tuple root). A result
  // sharding given for every result becomes the root's sharding (JAX's out_shardings); when
  // only some results have one, those results get Sharding custom-calls instead. A single
  // result that already has another sharding (a parameter, a mesh_split) keeps it and a copy
  // carries the result sharding. Sets num_partitions from the annotations (at least 1).
  // Call once: the builder hands its computations to the module.
  std::unique_ptr<Module> Build(Instruction* root, std::optional<Sharding> root_sharding = std::nullopt);
  std::unique_ptr<Module> Build(const std::vector<Instruction*>& results,
                                const std::vector<std::optional<Sharding>>& result_shardings = {});

 private:
  explicit ProgramBuilder(std::unique_ptr<ProgramState> state);
  std::unique_ptr<Module> Finish(Instruction* root);
  std::unique_ptr<ProgramState> owned_state_;
};

// Shape shorthands.
inline Shape F32(std::vector<int64_t> dims) { return Shape(ElementType::kF32, std::move(dims)); }
inline Shape S32(std::vector<int64_t> dims) { return Shape(ElementType::kS32, std::move(dims)); }

}  // namespace gspmd
