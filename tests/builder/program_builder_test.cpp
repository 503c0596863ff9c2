// ProgramBuilder: einsum lowering checked against direct loops, shape errors, sub-computations,
// and reverse-mode gradients checked against finite differences.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "builder/autodiff.h"
#include "builder/program_builder.h"
#include "ir/verifier.h"
#include "runtime/interp/evaluator.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

Literal Random(const Shape& shape, uint64_t seed) {
  Literal literal(shape);
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    literal.SetFromDouble(i, static_cast<double>((state >> 33) % 2001) / 1000.0 - 1.0);
  }
  return literal;
}

TEST(ProgramBuilderTest, EinsumMatchesLoops) {
  ProgramBuilder p("einsum");
  Instruction* x = p.Parameter(F32({2, 3, 4}), "x");
  Instruction* w = p.Parameter(F32({4, 5, 6}), "w");
  Instruction* y = p.Einsum("bsd,dnh->bnsh", x, w);
  EXPECT_EQ(y->shape().dims(), (std::vector<int64_t>{2, 5, 3, 6}));
  std::unique_ptr<Module> module = p.Build(y);
  VerifyModule(*module);
  std::vector<Literal> args = {Random(F32({2, 3, 4}), 1), Random(F32({4, 5, 6}), 2)};
  Literal out = EvaluateModule(*module, args);
  const float* a = args[0].data<float>();
  const float* b = args[1].data<float>();
  const float* o = out.data<float>();
  for (int bi = 0; bi < 2; ++bi)
    for (int n = 0; n < 5; ++n)
      for (int s = 0; s < 3; ++s)
        for (int h = 0; h < 6; ++h) {
          double sum = 0;
          for (int d = 0; d < 4; ++d) sum += a[(bi * 3 + s) * 4 + d] * b[(d * 5 + n) * 6 + h];
          EXPECT_NEAR(o[((bi * 5 + n) * 3 + s) * 6 + h], sum, 1e-5);
        }
}

TEST(ProgramBuilderTest, EinsumWithBatchAndSummedLabels) {
  ProgramBuilder p("einsum_batch");
  Instruction* x = p.Parameter(F32({3, 2, 4}), "x");  // g s m
  Instruction* y = p.Parameter(F32({3, 5, 4}), "y");  // g e m
  Instruction* z = p.Einsum("gsm,gem->egs", x, y);
  Instruction* summed = p.Einsum("gsm,gem->e", x, y);
  std::unique_ptr<Module> module = p.Build({z, summed});
  std::vector<Literal> args = {Random(F32({3, 2, 4}), 3), Random(F32({3, 5, 4}), 4)};
  std::vector<Literal> out = FlattenTuple(EvaluateModule(*module, args));
  const float* a = args[0].data<float>();
  const float* b = args[1].data<float>();
  for (int e = 0; e < 5; ++e) {
    double total = 0;
    for (int g = 0; g < 3; ++g)
      for (int s = 0; s < 2; ++s) {
        double sum = 0;
        for (int m = 0; m < 4; ++m) sum += a[(g * 2 + s) * 4 + m] * b[(g * 5 + e) * 4 + m];
        EXPECT_NEAR(out[0].data<float>()[(e * 3 + g) * 2 + s], sum, 1e-5);
        total += sum;
      }
    EXPECT_NEAR(out[1].data<float>()[e], total, 1e-4);
  }
}

TEST(ProgramBuilderTest, ShapeErrorsAreUserErrors) {
  ProgramBuilder p("errors");
  Instruction* x = p.Parameter(F32({2, 3}), "x");
  Instruction* y = p.Parameter(F32({3, 2}), "y");
  EXPECT_THROW(p.Add(x, y), UserError);
  EXPECT_THROW(p.Einsum("ab,bc->ac", x, x), UserError);
  EXPECT_THROW(p.Einsum("ab,bc", x, y), UserError);
  EXPECT_THROW(p.Einsum("abc,bc->a", x, y), UserError);
  EXPECT_THROW(p.Einsum("aa,ab->b", x, y), UserError);
  EXPECT_THROW(p.Einsum("ab,bc->az", x, y), UserError);
  EXPECT_THROW(p.Reduce(x, {2}, ReduceKind::kSum), UserError);
  EXPECT_THROW(p.Reshape(x, {4}), UserError);
  EXPECT_THROW(p.Transpose(x, {0, 0}), UserError);
  try {
    p.Add(x, y);
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("%x (f32[2,3]) vs %y (f32[3,2])"), std::string::npos) << error.what();
  }
}

TEST(ProgramBuilderTest, WhileLoopAndSubComputations) {
  ProgramBuilder p("loop");
  Shape state = Shape::Tuple({S32({}), F32({4})});
  auto cond = p.NewComputation("cond");
  {
    Instruction* t = cond->Parameter(state, "t");
    cond->SetRoot(cond->Compare(cond->GetTupleElement(t, 0), cond->Scalar(3, ElementType::kS32), ComparisonDirection::kLt));
  }
  auto body = p.NewComputation("body");
  {
    Instruction* t = body->Parameter(state, "t");
    Instruction* i = body->GetTupleElement(t, 0);
    Instruction* v = body->GetTupleElement(t, 1);
    Instruction* next = body->Add(i, body->Scalar(1, ElementType::kS32));
    Instruction* doubled = body->Scale(v, 2.0);
    Instruction* total = body->ReduceSum(doubled, {0});  // a reducer made inside the body
    body->SetRoot(body->Tuple({next, body->Add(doubled, body->Broadcast(total, {4}, {}))}));
  }
  Instruction* x = p.Parameter(F32({4}), "x");
  Instruction* loop = p.While(cond->computation(), body->computation(), p.Tuple({p.Scalar(0, ElementType::kS32), x}));
  std::unique_ptr<Module> module = p.Build(p.GetTupleElement(loop, 1));
  VerifyModule(*module);
  std::string text = PrintModule(*module);
  std::unique_ptr<Module> reparsed = ParseModule(text);
  EXPECT_EQ(PrintModule(*reparsed), text);
  Literal input = Literal::FromDoubles(F32({4}), std::vector<double>{1, 0, 0, 0});
  Literal out = EvaluateModule(*reparsed, {&input, 1});
  // v -> 2v + sum(2v): (1,0,0,0) -> (4,2,2,2) -> (28,24,24,24) -> (256,248,248,248)
  EXPECT_EQ(out.data<float>()[0], 256.0f);
  EXPECT_EQ(out.data<float>()[3], 248.0f);
}

// f64 programs: gradients from Gradients() against central differences of the loss.
void CheckGradients(const std::function<Instruction*(ProgramBuilder&, std::vector<Instruction*>&)>& loss_of,
                    const std::vector<Shape>& shapes) {
  auto build = [&](bool with_gradients) {
    ProgramBuilder p("grad");
    std::vector<Instruction*> params;
    for (size_t i = 0; i < shapes.size(); ++i) params.push_back(p.Parameter(shapes[i], "p" + std::to_string(i)));
    Instruction* loss = loss_of(p, params);
    if (!with_gradients) return p.Build(loss);
    std::vector<Instruction*> outputs = Gradients(p, loss, params);
    return p.Build(outputs);
  };
  std::vector<Literal> args;
  for (size_t i = 0; i < shapes.size(); ++i) args.push_back(Random(shapes[i], 10 + i));
  std::unique_ptr<Module> loss_module = build(false);
  std::unique_ptr<Module> grad_module = build(true);
  VerifyModule(*grad_module);
  ParseModule(PrintModule(*grad_module));
  Literal grads_value = EvaluateModule(*grad_module, args);
  std::vector<Literal> grads = shapes.size() == 1 ? std::vector<Literal>{} : FlattenTuple(std::move(grads_value));
  if (shapes.size() == 1) grads.push_back(std::move(grads_value));
  const double h = 1e-6;
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (int64_t k = 0; k < args[i].element_count(); ++k) {
      const double saved = args[i].GetAsDouble(k);
      args[i].SetFromDouble(k, saved + h);
      const double up = EvaluateModule(*loss_module, args).GetAsDouble(0);
      args[i].SetFromDouble(k, saved - h);
      const double down = EvaluateModule(*loss_module, args).GetAsDouble(0);
      args[i].SetFromDouble(k, saved);
      EXPECT_NEAR(grads[i].GetAsDouble(k), (up - down) / (2 * h), 1e-5) << "parameter " << i << " element " << k;
    }
  }
}

Shape F64(std::vector<int64_t> dims) { return Shape(ElementType::kF64, std::move(dims)); }

TEST(AutodiffTest, DotBroadcastReduceElementwise) {
  CheckGradients(
      [](ProgramBuilder& p, std::vector<Instruction*>& v) {
        Instruction* h = p.Einsum("bsd,dnh->bsnh", v[0], v[1]);  // dot + transpose
        Instruction* t = p.Tanh(p.Add(h, p.Broadcast(v[2], h->shape().dims(), {3})));
        Instruction* r = p.Relu(p.Mul(t, p.Exp(p.Scale(t, 0.5))));
        return p.ReduceSum(p.Mul(r, r), {0, 1, 2, 3});
      },
      {F64({2, 3, 4}), F64({4, 2, 3}), F64({3})});
}

TEST(AutodiffTest, SoftmaxDivideRsqrtAndMax) {
  CheckGradients(
      [](ProgramBuilder& p, std::vector<Instruction*>& v) {
        Instruction* s = p.Softmax(p.Einsum("ab,cb->ac", v[0], v[1]), 1);
        Instruction* var = p.AddScalar(p.Mean(p.Mul(v[0], v[0]), {1}), 1.0);
        Instruction* norm = p.Mul(v[0], p.BroadcastAlong(p.Rsqrt(var), v[0]->shape().dims(), {1}));
        Instruction* m = p.ReduceMax(p.Einsum("ab,cb->ca", norm, v[1]), {1});
        return p.Add(p.ReduceSum(p.Mul(s, s), {0, 1}), p.ReduceSum(p.Div(m, p.AddScalar(p.Mul(m, m), 2.0)), {0}));
      },
      {F64({3, 4}), F64({5, 4})});
}

TEST(AutodiffTest, SlicesConcatsAndShardingAnnotations) {
  CheckGradients(
      [](ProgramBuilder& p, std::vector<Instruction*>& v) {
        Instruction* a = p.Slice(v[0], {1, 0}, {4, 3});
        Instruction* b = p.Concatenate({a, p.Transpose(v[1], {1, 0})}, 0);  // [5,3]
        Instruction* c = p.ShardingConstraint(p.Reshape(b, {15}), Sharding::Replicated());
        Instruction* i = p.Scalar(1, ElementType::kS32);
        Instruction* d = p.DynamicSlice(c, {i}, {4});
        Instruction* e = p.DynamicUpdateSlice(c, p.Exp(d), {p.Scalar(8, ElementType::kS32)});
        return p.ReduceSum(p.Mul(e, e), {0});
      },
      {F64({5, 3}), F64({3, 2})});
}

// A value chosen by a comparison (a top-1 mask, a capacity check) is a constant to the
// gradient: the masked product's gradient is the mask, and nothing is emitted for the path
// through the comparison.
TEST(AutodiffTest, ComparisonsAndIntegerIndicesCarryNoGradient) {
  CheckGradients(
      [](ProgramBuilder& p, std::vector<Instruction*>& v) {
        Instruction* best = p.BroadcastAlong(p.ReduceMax(v[0], {1}), v[0]->shape().dims(), {1});
        Instruction* mask = p.Convert(p.Compare(v[0], best, ComparisonDirection::kEq), ElementType::kF64);
        return p.ReduceSum(p.Mul(p.Mul(v[0], mask), v[0]), {0, 1});
      },
      {F64({3, 4})});
}

// A loop's result is a leaf: its gradient is returned and nothing flows into the loop.
TEST(AutodiffTest, TupleElementsAreLeaves) {
  ProgramBuilder p("loop_leaf");
  Instruction* x = p.Parameter(F32({4}), "x");
  Instruction* t = p.Tuple({x, x});
  Instruction* e = p.GetTupleElement(t, 1);
  Instruction* loss = p.ReduceSum(p.Mul(e, e), {0});
  std::vector<Instruction*> grads = Gradients(p, loss, {e, x});
  std::unique_ptr<Module> module = p.Build(grads);
  Literal input = Literal::FromDoubles(F32({4}), std::vector<double>{1, 2, 3, 4});
  std::vector<Literal> out = FlattenTuple(EvaluateModule(*module, {&input, 1}));
  EXPECT_EQ(out[0].GetAsDouble(3), 8.0);  // d/de sum(e^2) = 2e
  EXPECT_EQ(out[1].GetAsDouble(3), 0.0);  // x reaches the loss only through the tuple
}

}  // namespace
}  // namespace gspmd
