// StableHLO control flow and calls: while (pretty and generic, with values from outside the
// loop), if and case (branches using enclosing values), func.call to functions defined
// later, composite (inlined), optimization_barrier, and their region checks.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

TEST(StableHloWhile, PrettyFormCarriesAllValuesInATuple) {
  std::string text = R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %v1 = stablehlo.add %v, %v : tensor<4xf32>
    stablehlo.return %i1, %v1 : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "while\\(%tuple\\), condition=%region, body=%region\\.1");
  ExpectValue(Eval(text, {F32({4}, {1, 2, 3, 4})}), F32({4}, {8, 16, 24, 32}));
}

TEST(StableHloWhile, ValuesFromOutsideTheLoopArePassedIn) {
  // %w and %limit are defined outside and used inside (not loop values).
  std::string text = R"(func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>, %limit: tensor<i32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = "stablehlo.while"(%c, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<2xf32>):
    %p = stablehlo.compare LT, %i, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<2xf32>):
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %v1 = stablehlo.multiply %v, %w : tensor<2xf32>
    stablehlo.return %i1, %v1 : tensor<i32>, tensor<2xf32>
  }) : (tensor<i32>, tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>)
  return %0#1 : tensor<2xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "\\(s32\\[\\], f32\\[2\\]\\{0\\}, s32\\[\\], f32\\[2\\]\\{0\\}\\) tuple\\(%constant, %Arg_0, %Arg_2, %Arg_1\\)");
  ExpectValue(Eval(text, {F32({2}, {1, 2}), F32({2}, {3, 0.5}), S32({}, {2})}), F32({2}, {9, 0.5}));
}

TEST(StableHloWhile, NestedRegionsPassOuterValuesThroughEachLevel) {
  std::string text = R"(func.func @main(%x: tensor<f32>, %k: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<f32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.while(%j = %z, %u = %v) : tensor<i32>, tensor<f32>
    cond {
      %p = stablehlo.compare LT, %j, %i1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %j1 = stablehlo.add %j, %one : tensor<i32>
      %u1 = stablehlo.add %u, %k : tensor<f32>
      stablehlo.return %j1, %u1 : tensor<i32>, tensor<f32>
    }
    stablehlo.return %i1, %1#1 : tensor<i32>, tensor<f32>
  }
  return %0#1 : tensor<f32>
})";
  // Outer iteration 1 adds k once, iteration 2 adds it twice: x + 3k.
  ExpectValue(Eval(text, {F32({}, {1}), F32({}, {10})}), F32({}, {31}));
}

TEST(StableHloWhile, MismatchedRegionArgumentsAreErrors) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.while"(%x) ({
  ^bb0(%v: tensor<i32>):
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  }, {
  ^bb0(%v: tensor<f32>):
    stablehlo.return %v : tensor<f32>
  }) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
})", 2, 31, "argument 0 of the cond region of stablehlo.while is tensor<i32>, expected tensor<f32>");
  ExpectErrorAt(R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.while(%v = %x) : tensor<f32>
  cond {
    stablehlo.return %v : tensor<f32>
  } do {
    stablehlo.return %v : tensor<f32>
  }
  return %0 : tensor<f32>
})", 4, 5, "value 0 returned by the cond region of stablehlo.while is tensor<f32>, expected tensor<i1>");
}

TEST(StableHloConditional, IfAndCaseWithEnclosingValues) {
  std::string text = R"(func.func @main(%p: tensor<i1>, %i: tensor<i32>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "stablehlo.if"(%p) ({
    %s = stablehlo.add %a, %b : tensor<2xf32>
    stablehlo.return %s : tensor<2xf32>
  }, {
    stablehlo.return %b : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  %1 = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<2xf32>
  }, {
    %m = stablehlo.multiply %a, %b : tensor<2xf32>
    stablehlo.return %m : tensor<2xf32>
  }, {
    stablehlo.return %b : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "conditional\\(%Arg_0, %tuple, %tuple\\.1\\), true_computation=%region, false_computation=%region\\.1");
  EXPECT_HLO_LINE(hlo, "conditional\\(%Arg_1, %tuple\\.2, %tuple\\.3, %tuple\\.4\\), branch_computations=\\{%region\\.2, %region\\.3, %region\\.4\\}");
  Literal a = F32({2}, {1, 2}), b = F32({2}, {3, 4});
  Literal result = Eval(text, {Pred({}, {1}), S32({}, {1}), a, b});
  ExpectValue(result.tuple_elements()[0], F32({2}, {4, 6}));
  ExpectValue(result.tuple_elements()[1], F32({2}, {3, 8}));
  // An index out of range runs the last branch.
  result = Eval(text, {Pred({}, {0}), S32({}, {7}), a, b});
  ExpectValue(result.tuple_elements()[0], b);
  ExpectValue(result.tuple_elements()[1], b);
}

TEST(StableHloConditional, PrettyIfWithSeveralResults) {
  std::string text = R"(func.func @main(%p: tensor<i1>, %a: tensor<f32>) -> tensor<f32> {
  %0:2 = stablehlo.if %p -> (tensor<f32>, tensor<f32>) {
    stablehlo.return %a, %a : tensor<f32>, tensor<f32>
  } else {
    %n = stablehlo.negate %a : tensor<f32>
    stablehlo.return %n, %a : tensor<f32>, tensor<f32>
  }
  %1 = stablehlo.add %0#0, %0#1 : tensor<f32>
  return %1 : tensor<f32>
})";
  ExpectValue(Eval(text, {Pred({}, {0}), F32({}, {5})}), F32({}, {0}));
  ExpectValue(Eval(text, {Pred({}, {1}), F32({}, {5})}), F32({}, {10}));
}

TEST(StableHloCalls, CallsOfFunctionsDefinedLater) {
  std::string text = R"(module @m {
  func.func public @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
    %0:2 = call @pair(%x) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    %1 = func.call @square(%0#1) : (tensor<3xf32>) -> tensor<3xf32>
    return %0#0, %1 : tensor<3xf32>, tensor<3xf32>
  }
  func.func private @pair(%a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
    %n = stablehlo.negate %a : tensor<3xf32>
    return %n, %a : tensor<3xf32>, tensor<3xf32>
  }
  func.func private @square(%a: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.multiply %a, %a : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "call\\(%Arg_0\\), to_apply=%pair");
  // Callees come before their callers.
  EXPECT_LT(hlo.find("%square"), hlo.find("ENTRY"));
  Literal result = Eval(text, {F32({3}, {1, -2, 3})});
  ExpectValue(result.tuple_elements()[0], F32({3}, {-1, 2, -3}));
  ExpectValue(result.tuple_elements()[1], F32({3}, {1, 4, 9}));
}

TEST(StableHloCalls, CallTypeMismatchAndRecursionAreErrors) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = call @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f(%a: tensor<4xf32>) -> tensor<3xf32> {
  %0 = stablehlo.slice %a [0:3] : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})", 2, 8, "operand 0 of the call to @f is tensor<3xf32> but the function's is tensor<4xf32>");
  std::string message = ReadError(R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = call @main(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
})");
  EXPECT_NE(message.find("recursion is not supported"), std::string::npos) << message;
  ExpectErrorAt(R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = call @nowhere(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
})", 2, 8, "call to undefined function @nowhere");
}

TEST(StableHloCalls, CompositeIsInlined) {
  std::string text = R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.composite "my.gelu_like" %x {composite_attributes = {approximate = true}, decomposition = @my.gelu_like.impl, version = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}
func.func private @my.gelu_like.impl(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.tanh %a : tensor<2xf32>
  %1 = stablehlo.multiply %0, %a : tensor<2xf32>
  return %1 : tensor<2xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_EQ(hlo.find("call("), std::string::npos) << hlo;
  EXPECT_EQ(hlo.find("my.gelu_like.impl"), std::string::npos) << hlo;
  EXPECT_HLO_LINE(hlo, "tanh\\(%Arg_0\\)");
  ExpectValue(Eval(text, {F32({2}, {0, 1})}), F32({2}, {0, 2 * std::tanh(1.0)}));
}

TEST(StableHloCalls, OptimizationBarrier) {
  std::string text = R"(func.func @main(%a: tensor<2xf32>, %b: tensor<i32>) -> tensor<2xf32> {
  %0:2 = stablehlo.optimization_barrier %a, %b : tensor<2xf32>, tensor<i32>
  return %0#0 : tensor<2xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "opt-barrier\\(%tuple\\)");
  ExpectValue(Eval(text, {F32({2}, {1, 2}), S32({}, {3})}), F32({2}, {1, 2}));
}

}  // namespace
}  // namespace gspmd
