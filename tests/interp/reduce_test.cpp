// Tests of the interpreter's reduction kernels: reduce (typed fast paths over every dim subset,
// NaN, integer wrap-around, pred, bf16; variadic and generic reducers; empty inputs; errors),
// reduce-window (random windows against a naive loop, variadic), select-and-scatter, and
// compiled scalar computations checked against the Evaluator.
#include <limits>

#include "kernel_test_util.h"
#include "runtime/interp/kernel_call.h"

namespace gspmd::kernel_test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A reducer computation named `name` applying `op` to two scalars of `type`.
std::string Reducer(const std::string& name, const std::string& type, const std::string& op) {
  return name + " {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n  ROOT r = " + type +
         "[] " + op + "(a, b)\n}\n";
}

// ENTRY reducing x (input_shape) with init (a constant) over dims into out_shape.
std::string ReduceModule(const std::string& type, const std::string& op, const std::string& input_shape,
                         const std::string& init, const std::string& out_shape, const std::string& dims) {
  return "HloModule m\n" + Reducer("red", type, op) + "ENTRY e {\n  x = " + input_shape +
         " parameter(0)\n  z = " + type + "[] constant(" + init + ")\n  ROOT r = " + out_shape +
         " reduce(x, z), dimensions={" + dims + "}, to_apply=red\n}\n";
}

TEST(ReduceTest, SumRows) {
  Literal result = RunHlo(ReduceModule("f32", "add", "f32[2,3]", "0", "f32[2]", "1"),
                       {Array(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ExpectValues(result, {6, 15});
}

TEST(ReduceTest, SumColumnsWithInit) {
  Literal result = RunHlo(ReduceModule("f32", "add", "f32[2,3]", "10", "f32[3]", "0"),
                       {Array(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ExpectValues(result, {15, 17, 19});
}

// Every subset of dims of a rank-4 input, for several ops and types, against a naive loop.
TEST(ReduceTest, EveryDimSubsetMatchesNaiveLoop) {
  std::vector<int64_t> dims = {3, 1, 4, 5};
  struct Case {
    std::string type, op;
    ElementType element_type;
  };
  std::vector<Case> cases = {{"f32", "add", ElementType::kF32},     {"f32", "maximum", ElementType::kF32},
                             {"s32", "add", ElementType::kS32},     {"s32", "minimum", ElementType::kS32},
                             {"f64", "multiply", ElementType::kF64}, {"s64", "xor", ElementType::kS64}};
  std::mt19937 rng(5);
  for (const Case& c : cases) {
    Literal input = RandomLiteral(Shape(c.element_type, dims), rng, -3, 3);
    for (int mask = 0; mask < 16; ++mask) {
      std::vector<int64_t> reduced, kept;
      for (int64_t d = 0; d < 4; ++d) (mask & (1 << d) ? reduced : kept).push_back(d);
      std::vector<int64_t> out_dims;
      for (int64_t d : kept) out_dims.push_back(dims[d]);
      double init = c.op == "multiply" ? 1 : c.op == "maximum" ? -100 : c.op == "minimum" ? 100 : 0;
      std::vector<double> expected(static_cast<size_t>(Shape(c.element_type, out_dims).element_count()), init);
      for (int64_t i = 0; i < input.element_count(); ++i) {
        std::vector<int64_t> index = Unflatten(i, dims), out_index;
        for (int64_t d : kept) out_index.push_back(index[d]);
        double& acc = expected[Flatten(out_index, out_dims)];
        double x = input.GetAsDouble(i);
        if (c.op == "add") acc += x;
        if (c.op == "multiply") acc *= x;
        if (c.op == "maximum") acc = std::max(acc, x);
        if (c.op == "minimum") acc = std::min(acc, x);
        if (c.op == "xor") acc = static_cast<double>(static_cast<int64_t>(acc) ^ static_cast<int64_t>(x));
      }
      std::string text = ReduceModule(c.type, c.op, ShapeText(c.element_type, dims), std::to_string(static_cast<int>(init)),
                                      ShapeText(c.element_type, out_dims), Join(reduced));
      SCOPED_TRACE(text);
      ExpectValues(RunHlo(text, {input}), expected);
    }
  }
}

TEST(ReduceTest, MaxPropagatesNaN) {
  Literal result = RunHlo(ReduceModule("f32", "maximum", "f32[2,3]", "-inf", "f32[2]", "1"),
                       {Array(ElementType::kF32, {2, 3}, {1, kNaN, 3, 4, 5, 6})});
  ExpectValues(result, {kNaN, 6});
}

TEST(ReduceTest, IntegerSumWrapsAround) {
  Literal result = RunHlo(ReduceModule("s32", "add", "s32[2]", "0", "s32[]", "0"),
                       {Ints(ElementType::kS32, {2}, {std::numeric_limits<int32_t>::max(), 2})});
  ExpectValues(result, {static_cast<double>(std::numeric_limits<int32_t>::min() + 1)});
}

TEST(ReduceTest, PredAndOr) {
  Literal input = Ints(ElementType::kPred, {2, 3}, {1, 1, 1, 0, 1, 0});
  ExpectValues(RunHlo(ReduceModule("pred", "and", "pred[2,3]", "true", "pred[2]", "1"), {input}), {1, 0});
  ExpectValues(RunHlo(ReduceModule("pred", "or", "pred[2,3]", "false", "pred[3]", "0"), {input}), {1, 1, 1});
}

TEST(ReduceTest, Bf16SumAccumulatesInF32) {
  // Summed in bf16 one by one, 1024 ones would stop at 256.
  Literal input(Shape(ElementType::kBF16, {1024}));
  for (int64_t i = 0; i < 1024; ++i) input.SetFromDouble(i, 1.0);
  ExpectValues(RunHlo(ReduceModule("bf16", "add", "bf16[1024]", "0", "bf16[]", "0"), {input}), {1024});
}

TEST(ReduceTest, LongF32SumIsAccurate) {
  Literal input(Shape(ElementType::kF32, {3, 100000}));
  for (int64_t i = 0; i < input.element_count(); ++i) input.data<float>()[i] = 0.1f;
  Literal result = RunHlo(ReduceModule("f32", "add", "f32[3,100000]", "0", "f32[3]", "1"), {input});
  ExpectValues(result, {10000, 10000, 10000}, 10000 * 1e-4);
}

TEST(ReduceTest, EmptyInputGivesInit) {
  Literal result = RunHlo(ReduceModule("f32", "add", "f32[0,3]", "7", "f32[3]", "0"), {Literal(Shape(ElementType::kF32, {0, 3}))});
  ExpectValues(result, {7, 7, 7});
}

TEST(ReduceTest, GenericReducerRunsInOrder) {
  // subtract is not a recognized reducer: the evaluator is called element by element.
  Literal result = RunHlo(ReduceModule("f32", "subtract", "f32[2,3]", "10", "f32[2]", "1"),
                       {Array(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ExpectValues(result, {4, -5});
}

TEST(ReduceTest, VariadicArgmax) {
  std::string text = R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  ge = pred[] compare(v0, v1), direction=GE
  v = f32[] select(ge, v0, v1)
  i = s32[] select(ge, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
}
)";
  Literal result = RunHlo(text, {Array(ElementType::kF32, {2, 4}, {3, 9, 9, 1, -1, -5, -2, -7})});
  std::vector<Literal> leaves = FlattenTuple(std::move(result));
  ASSERT_EQ(leaves.size(), 2u);
  ExpectValues(leaves[0], {9, -1});
  ExpectValues(leaves[1], {1, 0});
}

TEST(ReduceTest, OutOfRangeDimensionIsUserError) {
  EXPECT_THROW(RunHlo(ReduceModule("f32", "add", "f32[2,3]", "0", "f32[2]", "2"), {Literal(Shape(ElementType::kF32, {2, 3}))}),
               UserError);
}

TEST(ReduceTest, WrongResultShapeIsUserError) {
  EXPECT_THROW(RunHlo(ReduceModule("f32", "add", "f32[2,3]", "0", "f32[3]", "1"), {Literal(Shape(ElementType::kF32, {2, 3}))}),
               UserError);
}

// ---- reduce-window ----

TEST(ReduceWindowTest, CumulativeSumLikeJax) {
  std::string text = "HloModule m\n" + Reducer("red", "s32", "add") + R"(ENTRY e {
  x = s32[2,4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[2,4] reduce-window(x, z), window={size=1x4 pad=0_0x3_0}, to_apply=red
}
)";
  Literal result = RunHlo(text, {Ints(ElementType::kS32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ExpectValues(result, {1, 3, 6, 10, 5, 11, 18, 26});
}

TEST(ReduceWindowTest, MaxPoolWithStride) {
  std::string text = "HloModule m\n" + Reducer("red", "f32", "maximum") + R"(ENTRY e {
  x = f32[4,4] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=red
}
)";
  Literal result = RunHlo(text, {Array(ElementType::kF32, {4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})});
  ExpectValues(result, {6, 8, 14, 16});
}

struct RandomWindow {
  std::vector<int64_t> in_dims, out_dims;
  Window window;
};

RandomWindow MakeRandomWindow(std::mt19937& rng) {
  auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  RandomWindow r;
  int rank = pick(1, 3);
  for (int d = 0; d < rank; ++d) {
    WindowDim w;
    w.size = pick(1, 3);
    w.stride = pick(1, 3);
    w.padding_low = pick(0, 2);
    w.padding_high = pick(0, 2);
    w.base_dilation = pick(1, 2);
    w.window_dilation = pick(1, 2);
    int64_t in = pick(1, 5);
    int64_t padded = (in - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
    int64_t extent = (w.size - 1) * w.window_dilation + 1;
    if (padded < extent) w.padding_high += extent - padded;
    padded = (in - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
    r.in_dims.push_back(in);
    r.out_dims.push_back((padded - extent) / w.stride + 1);
    r.window.push_back(w);
  }
  return r;
}

std::string WindowAttribute(const Window& window) {
  auto field = [&](auto get) {
    std::string out;
    for (size_t i = 0; i < window.size(); ++i) out += (i ? "x" : "") + get(window[i]);
    return out;
  };
  return "window={size=" + field([](const WindowDim& w) { return std::to_string(w.size); }) +
         " stride=" + field([](const WindowDim& w) { return std::to_string(w.stride); }) +
         " pad=" + field([](const WindowDim& w) { return std::to_string(w.padding_low) + "_" + std::to_string(w.padding_high); }) +
         " lhs_dilate=" + field([](const WindowDim& w) { return std::to_string(w.base_dilation); }) +
         " rhs_dilate=" + field([](const WindowDim& w) { return std::to_string(w.window_dilation); }) + "}";
}

// Input linear indices read by the window of output element `out` (padding and holes skipped).
std::vector<int64_t> WindowInputs(const RandomWindow& r, int64_t out) {
  std::vector<int64_t> out_index = Unflatten(out, r.out_dims), sizes, result;
  for (const WindowDim& w : r.window) sizes.push_back(w.size);
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  for (int64_t k = 0; k < count; ++k) {
    std::vector<int64_t> window_index = Unflatten(k, sizes), in_index;
    bool inside = true;
    for (size_t d = 0; d < sizes.size(); ++d) {
      const WindowDim& w = r.window[d];
      int64_t position = out_index[d] * w.stride + window_index[d] * w.window_dilation - w.padding_low;
      if (position < 0 || position % w.base_dilation != 0 || position / w.base_dilation >= r.in_dims[d]) inside = false;
      in_index.push_back(position / w.base_dilation);
    }
    if (inside) result.push_back(Flatten(in_index, r.in_dims));
  }
  return result;
}

TEST(ReduceWindowTest, RandomWindowsMatchNaiveLoop) {
  std::mt19937 rng(31);
  struct Case {
    std::string type, op;
    ElementType element_type;
    double init;
  };
  std::vector<Case> cases = {{"f32", "add", ElementType::kF32, 0}, {"f32", "maximum", ElementType::kF32, -100},
                             {"s32", "add", ElementType::kS32, 5}, {"bf16", "add", ElementType::kBF16, 0}};
  for (const Case& c : cases) {
    for (int trial = 0; trial < 30; ++trial) {
      RandomWindow r = MakeRandomWindow(rng);
      std::string text = "HloModule m\n" + Reducer("red", c.type, c.op) + "ENTRY e {\n  x = " +
                         ShapeText(c.element_type, r.in_dims) + " parameter(0)\n  z = " + c.type + "[] constant(" +
                         std::to_string(static_cast<int>(c.init)) + ")\n  ROOT r = " + ShapeText(c.element_type, r.out_dims) +
                         " reduce-window(x, z), " + WindowAttribute(r.window) + ", to_apply=red\n}\n";
      SCOPED_TRACE(text);
      Literal input = RandomLiteral(Shape(c.element_type, r.in_dims), rng, -9, 9);
      std::vector<double> expected;
      for (int64_t o = 0; o < Shape(c.element_type, r.out_dims).element_count(); ++o) {
        double acc = c.init;
        for (int64_t i : WindowInputs(r, o)) acc = c.op == "add" ? acc + input.GetAsDouble(i) : std::max(acc, input.GetAsDouble(i));
        expected.push_back(acc);
      }
      ExpectValues(RunHlo(text, {input}), expected);
    }
  }
}

TEST(ReduceWindowTest, VariadicArgmaxOverWindows) {
  std::string text = R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  ge = pred[] compare(v0, v1), direction=GE
  v = f32[] select(ge, v0, v1)
  i = s32[] select(ge, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[6] parameter(0)
  idx = s32[6] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  minus = s32[] constant(-1)
  ROOT r = (f32[3], s32[3]) reduce-window(x, idx, ninf, minus), window={size=3 stride=2 pad=1_0}, to_apply=argmax
}
)";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Array(ElementType::kF32, {6}, {4, 1, 7, 7, 2, 9})}));
  ASSERT_EQ(leaves.size(), 2u);
  ExpectValues(leaves[0], {4, 7, 9});
  ExpectValues(leaves[1], {0, 2, 5});
}

// ---- select-and-scatter ----

std::string SelectAndScatterModule(const std::string& select_body, const std::string& operand_shape,
                                   const std::string& source_shape, const std::string& window) {
  return "HloModule m\nselect {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n" + select_body + "}\n" +
         Reducer("scatter", "f32", "add") + "ENTRY e {\n  x = " + operand_shape + " parameter(0)\n  s = " +
         source_shape + " parameter(1)\n  z = f32[] constant(0)\n  ROOT r = " + operand_shape +
         " select-and-scatter(x, s, z), " + window + ", select=select, scatter=scatter\n}\n";
}

const char* kSelectGe = "  ROOT ge = pred[] compare(a, b), direction=GE\n";
// GE written so that the kernel cannot recognize it: the evaluator is called per element.
const char* kSelectGeGeneric = "  na = f32[] negate(a)\n  nb = f32[] negate(b)\n  ROOT le = pred[] compare(na, nb), direction=LE\n";

TEST(SelectAndScatterTest, MaxPoolGradient) {
  std::string text = SelectAndScatterModule(kSelectGe, "f32[4,4]", "f32[2,2]", "window={size=2x2 stride=2x2}");
  Literal operand = Array(ElementType::kF32, {4, 4}, {1, 5, 3, 4, 2, 0, 8, 1, 9, 9, 0, 0, 1, 2, 0, 7});
  Literal result = RunHlo(text, {operand, Array(ElementType::kF32, {2, 2}, {10, 20, 30, 40})});
  // Window maxima: 5 at (0,1); 8 at (1,2); first 9 at (2,0); 7 at (3,3).
  ExpectValues(result, {0, 10, 0, 0, 0, 0, 20, 0, 30, 0, 0, 0, 0, 0, 0, 40});
}

TEST(SelectAndScatterTest, OverlappingWindowsWithPaddingFastAndGenericAgree) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 10; ++trial) {
    std::string window = "window={size=3x2 stride=1x2 pad=1_1x0_1}";
    std::string fast = SelectAndScatterModule(kSelectGe, "f32[4,5]", "f32[4,3]", window);
    std::string generic = SelectAndScatterModule(kSelectGeGeneric, "f32[4,5]", "f32[4,3]", window);
    Literal operand = RandomLiteral(Shape(ElementType::kF32, {4, 5}), rng, 0, 3);  // many ties
    Literal source = RandomLiteral(Shape(ElementType::kF32, {4, 3}), rng, 1, 9);
    // Naive: first maximum in row-major window order gets the source value.
    std::vector<double> expected(20, 0.0);
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        int64_t best = -1;
        for (int64_t di = 0; di < 3; ++di) {
          for (int64_t dj = 0; dj < 2; ++dj) {
            int64_t r = i + di - 1, c = j * 2 + dj;
            if (r < 0 || r >= 4 || c >= 5) continue;
            if (best < 0 || !(operand.GetAsDouble(best) >= operand.GetAsDouble(r * 5 + c))) best = r * 5 + c;
          }
        }
        expected[best] += source.GetAsDouble(i * 3 + j);
      }
    }
    ExpectValues(RunHlo(fast, {operand, source}), expected);
    ExpectValues(RunHlo(generic, {operand, source}), expected);
  }
}

// Overlapping windows (size 2, stride 1) on an operand padded low with -inf, as in the gradient of a
// padded max reduce_window. The oracle soak's seed 30351 mismatch (4 devices, bf16) is XLA:CPU's,
// not ours: jax 0.10.2 partitioning such a select-and-scatter along the windowed dim (GSPMD and
// Shardy alike) drops or misplaces source values in the first shard, even with f32 and no ties:
// on 2 devices this operand gives 0 2 0 4 after the slice, while XLA on one device, the
// sequential first-maximum rule and we give 1 5 0 4; the seed's result agrees with ours to 1e-4
// once its select-and-scatter is pinned replicated. Windows over -inf 1 5 2 7: max 1 at 1 takes
// source 1, max 5 at 2 takes 2 and 3, max 7 at 4 takes 4.
TEST(SelectAndScatterTest, PaddedOverlappingWindowsWhereXlaCpuPartitionedDiffers) {
  std::string text = R"(HloModule m
select {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}
scatter {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  s = f32[4] parameter(1)
  ninf = f32[] constant(-inf)
  p = f32[5] pad(x, ninf), padding=1_0
  z = f32[] constant(0)
  ROOT r = f32[5] select-and-scatter(p, s, z), window={size=2 stride=1}, select=select, scatter=scatter
}
)";
  Literal result = RunHlo(text, {Array(ElementType::kF32, {4}, {1, 5, 2, 7}), Array(ElementType::kF32, {4}, {1, 2, 3, 4})});
  ExpectValues(result, {0, 1, 5, 0, 4});
}

// The same without the pad: XLA:CPU on 2 devices gives 0 0 0 3 (source 1 and 2 lost); one device
// and we give 0 3 0 3 (5 at 1 is the maximum of the first two windows, 7 at 3 of the third).
TEST(SelectAndScatterTest, OverlappingWindowsWhereXlaCpuPartitionedDiffers) {
  std::string text = SelectAndScatterModule(kSelectGe, "f32[4]", "f32[3]", "window={size=2 stride=1}");
  Literal result = RunHlo(text, {Array(ElementType::kF32, {4}, {1, 5, 2, 7}), Array(ElementType::kF32, {3}, {1, 2, 3})});
  ExpectValues(result, {0, 3, 0, 3});
}

TEST(SelectAndScatterTest, SourceShapeMismatchIsUserError) {
  std::string text = SelectAndScatterModule(kSelectGe, "f32[4,4]", "f32[3,3]", "window={size=2x2 stride=2x2}");
  EXPECT_THROW(RunHlo(text, {Literal(Shape(ElementType::kF32, {4, 4})), Literal(Shape(ElementType::kF32, {3, 3}))}),
               UserError);
}

// ---- compiled scalar computations ----

// A computation applying every op the scalar program supports on `type` to (a, b).
std::string AllOpsComputation(const std::string& type, ElementType element_type) {
  std::vector<std::string> lines, roots, shapes;
  auto add = [&](const std::string& name, const std::string& shape, const std::string& text) {
    lines.push_back("  " + name + " = " + shape + " " + text);
    roots.push_back(name);
    shapes.push_back(shape);
  };
  const std::string t = type + "[]";
  bool is_pred = element_type == ElementType::kPred, is_float = IsFloatingPoint(element_type);
  std::vector<std::string> binary = is_pred ? std::vector<std::string>{"and", "or", "xor"}
                                  : is_float ? std::vector<std::string>{"add", "subtract", "multiply", "divide", "maximum", "minimum"}
                                             : std::vector<std::string>{"add", "subtract", "multiply", "divide", "maximum", "minimum", "and", "or", "xor"};
  std::vector<std::string> unary = is_pred ? std::vector<std::string>{"not"}
                                 : is_float ? std::vector<std::string>{"negate", "abs"}
                                            : std::vector<std::string>{"negate", "abs", "not"};
  for (const std::string& op : binary) add(op + "_r", t, op + "(a, b)");
  for (const std::string& op : unary) add(op + "_r", t, op + "(a)");
  for (const char* direction : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    add(std::string("cmp_") + direction, "pred[]", std::string("compare(a, b), direction=") + direction);
    if (is_float) add(std::string("tot_") + direction, "pred[]", std::string("compare(a, b), direction=") + direction + ", type=TOTALORDER");
  }
  add("sel", t, "select(cmp_LT, a, b)");
  for (const char* target : {"f32", "bf16", "f64", "s32", "u8", "s64", "pred"}) add(std::string("cvt_") + target, std::string(target) + "[]", "convert(a)");
  std::string text = "HloModule m\ncomp {\n  a = " + t + " parameter(0)\n  b = " + t + " parameter(1)\n";
  for (const std::string& line : lines) text += line + "\n";
  text += "  ROOT t = (";
  for (size_t i = 0; i < shapes.size(); ++i) text += (i ? ", " : "") + shapes[i];
  text += ") tuple(";
  for (size_t i = 0; i < roots.size(); ++i) text += (i ? ", " : "") + roots[i];
  text += ")\n}\nENTRY e {\n  x = " + t + " parameter(0)\n  ROOT y = " + t + " copy(x)\n}\n";
  return text;
}

// Interesting values of a type: zeros, extremes, NaN, infinities, and random ones.
Literal InterestingValue(ElementType type, std::mt19937& rng) {
  Literal value(Shape(type, {}));
  std::uniform_int_distribution<int> choice(0, 9);
  int c = choice(rng);
  if (IsFloatingPoint(type)) {
    const double specials[] = {0.0, -0.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), kNaN, 1.5, -300.25};
    if (c < 7) value.SetFromDouble(0, specials[c]);
    else value.SetFromDouble(0, std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
    return value;
  }
  std::uniform_int_distribution<uint64_t> bits;
  uint64_t raw = c == 0 ? 0 : c == 1 ? ~uint64_t{0} : c == 2 ? uint64_t{1} << 63 : c == 3 ? uint64_t{1} : bits(rng);
  // Truncation to the type's width (or 0/1 for pred).
  std::memcpy(value.raw(), &raw, static_cast<size_t>(ElementByteSize(type)));
  if (type == ElementType::kPred) value.raw()[0] &= 1;
  if (c == 2 && ElementByteSize(type) < 8) value.SetFromInt64(0, IsSignedInteger(type) ? -(int64_t{1} << (ElementByteSize(type) * 8 - 1)) : 0);
  return value;
}

bool SameValue(const uint8_t* a, const uint8_t* b, ElementType type) {
  if (std::memcmp(a, b, static_cast<size_t>(ElementByteSize(type))) == 0) return true;
  if (!IsFloatingPoint(type)) return false;
  Literal x(Shape(type, {})), y(Shape(type, {}));
  std::memcpy(x.raw(), a, static_cast<size_t>(ElementByteSize(type)));
  std::memcpy(y.raw(), b, static_cast<size_t>(ElementByteSize(type)));
  return std::isnan(x.GetAsDouble(0)) && std::isnan(y.GetAsDouble(0));
}

TEST(ScalarProgramTest, CompiledComputationsMatchTheEvaluator) {
  std::mt19937 rng(71);
  struct TypeCase {
    std::string name;
    ElementType type;
  };
  std::vector<TypeCase> types = {{"f32", ElementType::kF32}, {"bf16", ElementType::kBF16}, {"f16", ElementType::kF16},
                                 {"f64", ElementType::kF64}, {"s8", ElementType::kS8},     {"s32", ElementType::kS32},
                                 {"s64", ElementType::kS64}, {"u8", ElementType::kU8},     {"u32", ElementType::kU32},
                                 {"pred", ElementType::kPred}};
  for (const TypeCase& tc : types) {
    std::string text = AllOpsComputation(tc.name, tc.type);
    SCOPED_TRACE(text);
    std::unique_ptr<Module> module = ParseModule(text);
    const Computation& comp = *module->FindComputation("comp");
    Evaluator evaluator(*module);
    std::vector<ElementType> params = {tc.type, tc.type}, results;
    for (const Instruction* operand : comp.root()->operands()) results.push_back(operand->shape().element_type());
    kernel::ScalarCaller compiled(evaluator, comp, *comp.root(), params, results);
    ASSERT_TRUE(compiled.compiled());
    for (int trial = 0; trial < 300; ++trial) {
      Literal a = InterestingValue(tc.type, rng), b = InterestingValue(tc.type, rng);
      compiled.SetArgument(0, a.raw());
      compiled.SetArgument(1, b.raw());
      compiled.Call();
      const Literal* arguments[] = {&a, &b};
      std::vector<Literal> expected = FlattenTuple(evaluator.Call(comp, arguments));
      ASSERT_EQ(expected.size(), results.size());
      for (size_t i = 0; i < results.size(); ++i)
        EXPECT_TRUE(SameValue(static_cast<const uint8_t*>(compiled.Result(static_cast<int64_t>(i))), expected[i].raw(), results[i]))
            << "result " << i << " (" << comp.root()->operand(static_cast<int64_t>(i))->name() << ") for a=" << a.GetAsDouble(0)
            << " b=" << b.GetAsDouble(0);
    }
  }
}

TEST(ScalarProgramTest, UnsupportedOpsFallBackToTheEvaluator) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
comp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  e = f32[] exponential(a)
  ROOT r = f32[] add(e, b)
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] copy(x)
}
)");
  const Computation& comp = *module->FindComputation("comp");
  Evaluator evaluator(*module);
  std::vector<ElementType> types = {ElementType::kF32, ElementType::kF32}, result = {ElementType::kF32};
  kernel::ScalarCaller caller(evaluator, comp, *comp.root(), types, result);
  EXPECT_FALSE(caller.compiled());
  float a = 0, b = 2;
  caller.SetArgument(0, &a);
  caller.SetArgument(1, &b);
  caller.Call();
  EXPECT_EQ(*static_cast<const float*>(caller.Result(0)), 3.0f);
}

}  // namespace
}  // namespace gspmd::kernel_test
