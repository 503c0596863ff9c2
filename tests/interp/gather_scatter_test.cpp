// Tests of the interpreter's gather and scatter kernels: hand-computed cases (embedding lookup,
// clamping, out-of-bounds skipping, replace, variadic) and random dimension numbers (batching
// dims, index_vector_dim anywhere including the implicit trailing one) against naive loops.
#include <algorithm>
#include <numeric>

#include "kernel_test_util.h"

namespace gspmd::kernel_test {
namespace {

TEST(GatherTest, EmbeddingLookup) {
  std::string text = R"(HloModule m
ENTRY e {
  table = f32[4,2] parameter(0)
  ids = s32[3] parameter(1)
  ROOT g = f32[3,2] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
}
)";
  Literal result = RunHlo(text, {Array(ElementType::kF32, {4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}),
                                 Ints(ElementType::kS32, {3}, {2, 0, 3})});
  ExpectValues(result, {20, 21, 0, 1, 30, 31});
}

TEST(GatherTest, StartIndicesAreClampedIntoBounds) {
  std::string text = R"(HloModule m
ENTRY e {
  x = s32[5] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = s32[3,2] gather(x, i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2}
}
)";
  Literal result = RunHlo(text, {Ints(ElementType::kS32, {5}, {0, 1, 2, 3, 4}), Ints(ElementType::kS32, {3, 1}, {-7, 4, 2})});
  ExpectValues(result, {0, 1, 3, 4, 2, 3});
}

TEST(GatherTest, BatchingDims) {
  // For each batch b, pick operand[b, ids[b]].
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  ids = s32[2] parameter(1)
  ROOT g = f32[2] gather(x, ids), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}
}
)";
  Literal result = RunHlo(text, {Array(ElementType::kF32, {2, 3}, {0, 1, 2, 10, 11, 12}), Ints(ElementType::kS32, {2}, {2, 1})});
  ExpectValues(result, {2, 11});
}

TEST(GatherTest, IndexVectorLengthMismatchIsUserError) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[4,2] parameter(0)
  i = s32[3,2] parameter(1)
  ROOT g = f32[3,2] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
}
)";
  EXPECT_THROW(RunHlo(text, {Literal(Shape(ElementType::kF32, {4, 2})), Literal(Shape(ElementType::kS32, {3, 2}))}), UserError);
}

std::string AddComputation(const std::string& type) {
  return "add {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n  ROOT r = " + type + "[] add(a, b)\n}\n";
}

TEST(ScatterTest, AddWithDuplicatesAndOutOfBoundsSkipped) {
  std::string text = "HloModule m\n" + AddComputation("f32") + R"(ENTRY e {
  x = f32[5] parameter(0)
  i = s32[4] parameter(1)
  u = f32[4,2] parameter(2)
  ROOT s = f32[5] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)";
  // Windows of 2 starting at 0, 3, 0 and 4 (the last does not fit: skipped whole).
  Literal result = RunHlo(text, {Array(ElementType::kF32, {5}, {1, 1, 1, 1, 1}), Ints(ElementType::kS32, {4}, {0, 3, 0, 4}),
                                 Array(ElementType::kF32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ExpectValues(result, {7, 9, 1, 4, 5});
}

TEST(ScatterTest, ReplaceComputation) {
  std::string text = R"(HloModule m
assign {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  x = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  u = s32[2] parameter(2)
  ROOT s = s32[2,3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=assign
}
)";
  Literal result = RunHlo(text, {Ints(ElementType::kS32, {2, 3}, {0, 0, 0, 0, 0, 0}), Ints(ElementType::kS32, {2, 2}, {1, 2, 0, 1}),
                                 Ints(ElementType::kS32, {2}, {7, 8})});
  ExpectValues(result, {0, 8, 0, 0, 0, 7});
}

TEST(ScatterTest, VariadicScatterKeepsMaxAndItsIndex) {
  std::string text = R"(HloModule m
combine {
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
  x = f32[2] parameter(0)
  xi = s32[2] parameter(1)
  idx = s32[3,1] parameter(2)
  u = f32[3] parameter(3)
  ui = s32[3] parameter(4)
  ROOT s = (f32[2], s32[2]) scatter(x, xi, idx, u, ui), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
}
)";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(
      text, {Array(ElementType::kF32, {2}, {0, 0}), Ints(ElementType::kS32, {2}, {-1, -1}), Ints(ElementType::kS32, {3, 1}, {1, 1, 0}),
             Array(ElementType::kF32, {3}, {5, 9, 3}), Ints(ElementType::kS32, {3}, {10, 11, 12})}));
  ASSERT_EQ(leaves.size(), 2u);
  ExpectValues(leaves[0], {3, 9});
  ExpectValues(leaves[1], {12, 11});
}

// ---- random dimension numbers ----

// Shared shape of a random gather or scatter: operand dims and their roles, index vectors.
struct RandomIndexing {
  std::vector<int64_t> operand_dims;
  std::vector<int64_t> batching_operand_dims;  // operand_batching_dims / input_batching_dims
  std::vector<int64_t> dropped_dims;           // collapsed_slice_dims / inserted_window_dims
  std::vector<int64_t> index_map;              // start_index_map / scatter_dims_to_operand_dims
  std::vector<int64_t> window_sizes;           // slice / update window size of every operand dim
  std::vector<int64_t> indices_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> batching_indices_dims;  // start_indices_batching_dims / scatter_indices_...
  std::vector<int64_t> index_batch_dims;       // indices dims other than index_vector_dim
  std::vector<int64_t> window_positions;       // offset_dims / update_window_dims
  std::vector<int64_t> result_dims;            // gather output dims / scatter update dims
};

RandomIndexing MakeRandomIndexing(std::mt19937& rng) {
  auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  RandomIndexing r;
  int rank = pick(1, 3);
  for (int d = 0; d < rank; ++d) r.operand_dims.push_back(pick(1, 4));
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  int batching = rank > 1 ? pick(0, 1) : 0;
  for (int i = 0; i < batching; ++i) r.batching_operand_dims.push_back(order[i]);
  for (int i = batching; i < rank; ++i) {
    if (pick(0, 2) == 0) r.dropped_dims.push_back(order[i]);
    if (pick(0, 1) == 0) r.index_map.push_back(order[i]);
  }
  std::sort(r.dropped_dims.begin(), r.dropped_dims.end());
  std::shuffle(r.index_map.begin(), r.index_map.end(), rng);
  for (int d = 0; d < rank; ++d) {
    bool unit = std::count(r.dropped_dims.begin(), r.dropped_dims.end(), d) ||
                std::count(r.batching_operand_dims.begin(), r.batching_operand_dims.end(), d);
    r.window_sizes.push_back(unit ? 1 : pick(1, static_cast<int>(r.operand_dims[d])));
  }
  // Index batch dims: a few free ones plus one per batching dim (same size as the operand's).
  std::vector<int64_t> batch_sizes;
  std::vector<int> is_batching;
  int free_dims = pick(0, 2);
  for (int i = 0; i < free_dims; ++i) {
    batch_sizes.push_back(pick(1, 3));
    is_batching.push_back(-1);
  }
  for (int i = 0; i < batching; ++i) {
    int at = pick(0, static_cast<int>(batch_sizes.size()));
    batch_sizes.insert(batch_sizes.begin() + at, r.operand_dims[r.batching_operand_dims[i]]);
    is_batching.insert(is_batching.begin() + at, i);
  }
  const int64_t vector_length = static_cast<int64_t>(r.index_map.size());
  bool implicit = vector_length == 1 && pick(0, 1) == 0;
  r.index_vector_dim = implicit ? static_cast<int64_t>(batch_sizes.size()) : pick(0, static_cast<int>(batch_sizes.size()));
  r.indices_dims = batch_sizes;
  if (!implicit) r.indices_dims.insert(r.indices_dims.begin() + r.index_vector_dim, vector_length);
  r.batching_indices_dims.assign(static_cast<size_t>(batching), 0);
  for (size_t i = 0; i < batch_sizes.size(); ++i) {
    int64_t dim = static_cast<int64_t>(i) + (!implicit && static_cast<int64_t>(i) >= r.index_vector_dim ? 1 : 0);
    r.index_batch_dims.push_back(dim);
    if (is_batching[i] >= 0) r.batching_indices_dims[is_batching[i]] = dim;
  }
  // Window dims interleaved with batch dims in the result.
  std::vector<int64_t> window_dims;
  for (int d = 0; d < rank; ++d)
    if (!std::count(r.dropped_dims.begin(), r.dropped_dims.end(), d) &&
        !std::count(r.batching_operand_dims.begin(), r.batching_operand_dims.end(), d))
      window_dims.push_back(d);
  const int64_t result_rank = static_cast<int64_t>(batch_sizes.size() + window_dims.size());
  std::vector<int64_t> positions(static_cast<size_t>(result_rank));
  std::iota(positions.begin(), positions.end(), 0);
  std::shuffle(positions.begin(), positions.end(), rng);
  r.window_positions.assign(positions.begin(), positions.begin() + static_cast<int64_t>(window_dims.size()));
  std::sort(r.window_positions.begin(), r.window_positions.end());
  r.result_dims.assign(static_cast<size_t>(result_rank), 0);
  for (size_t i = 0; i < window_dims.size(); ++i) r.result_dims[r.window_positions[i]] = r.window_sizes[window_dims[i]];
  for (int64_t d = 0, b = 0; d < result_rank; ++d)
    if (!std::count(r.window_positions.begin(), r.window_positions.end(), d)) r.result_dims[d] = batch_sizes[b++];
  return r;
}

// Random start indices, some out of range.
Literal RandomIndices(const RandomIndexing& r, std::mt19937& rng) {
  Literal indices(Shape(ElementType::kS32, r.indices_dims));
  for (int64_t i = 0; i < indices.element_count(); ++i) indices.SetFromInt64(i, std::uniform_int_distribution<int>(-1, 4)(rng));
  return indices;
}

// Walks one result (gather output / scatter update) element: its batch index, the start
// index vector it reads, and its window index.
struct ElementRoles {
  std::vector<int64_t> batch, vector, window;
};

ElementRoles Roles(const RandomIndexing& r, const Literal& indices, const std::vector<int64_t>& result_index) {
  ElementRoles roles;
  for (size_t d = 0; d < result_index.size(); ++d) {
    if (std::count(r.window_positions.begin(), r.window_positions.end(), static_cast<int64_t>(d)))
      roles.window.push_back(result_index[d]);
    else
      roles.batch.push_back(result_index[d]);
  }
  bool implicit = r.index_vector_dim == static_cast<int64_t>(r.indices_dims.size());
  std::vector<int64_t> at(r.indices_dims.size());
  for (size_t i = 0; i < r.index_batch_dims.size(); ++i) at[r.index_batch_dims[i]] = roles.batch[i];
  for (size_t j = 0; j < r.index_map.size(); ++j) {
    if (!implicit) at[r.index_vector_dim] = static_cast<int64_t>(j);
    roles.vector.push_back(indices.GetAsInt64(Flatten(at, r.indices_dims)));
  }
  return roles;
}

// Operand start from the roles (gather clamps; scatter leaves it as is).
std::vector<int64_t> Start(const RandomIndexing& r, const ElementRoles& roles, bool clamp) {
  std::vector<int64_t> start(r.operand_dims.size(), 0);
  for (size_t j = 0; j < r.index_map.size(); ++j) {
    int64_t d = r.index_map[j];
    start[d] = clamp ? std::clamp<int64_t>(roles.vector[j], 0, r.operand_dims[d] - r.window_sizes[d]) : roles.vector[j];
  }
  for (size_t i = 0; i < r.batching_operand_dims.size(); ++i) {
    int64_t position = std::find(r.index_batch_dims.begin(), r.index_batch_dims.end(), r.batching_indices_dims[i]) -
                       r.index_batch_dims.begin();
    start[r.batching_operand_dims[i]] = roles.batch[position];
  }
  return start;
}

// Full operand index of a window element.
std::vector<int64_t> OperandIndex(const RandomIndexing& r, const std::vector<int64_t>& start, const ElementRoles& roles) {
  std::vector<int64_t> index = start;
  size_t w = 0;
  for (size_t d = 0; d < r.operand_dims.size(); ++d) {
    if (std::count(r.dropped_dims.begin(), r.dropped_dims.end(), static_cast<int64_t>(d)) ||
        std::count(r.batching_operand_dims.begin(), r.batching_operand_dims.end(), static_cast<int64_t>(d)))
      continue;
    index[d] += roles.window[w++];
  }
  return index;
}

TEST(GatherTest, RandomDimensionNumbersMatchNaiveLoop) {
  std::mt19937 rng(51);
  for (int trial = 0; trial < 200; ++trial) {
    RandomIndexing r = MakeRandomIndexing(rng);
    std::string text = "HloModule m\nENTRY e {\n  x = " + ShapeText(ElementType::kF32, r.operand_dims) +
                       " parameter(0)\n  i = " + ShapeText(ElementType::kS32, r.indices_dims) + " parameter(1)\n  ROOT g = " +
                       ShapeText(ElementType::kF32, r.result_dims) + " gather(x, i), offset_dims={" + Join(r.window_positions) +
                       "}, collapsed_slice_dims={" + Join(r.dropped_dims) + "}, start_index_map={" + Join(r.index_map) +
                       "}, operand_batching_dims={" + Join(r.batching_operand_dims) + "}, start_indices_batching_dims={" +
                       Join(r.batching_indices_dims) + "}, index_vector_dim=" + std::to_string(r.index_vector_dim) +
                       ", slice_sizes={" + Join(r.window_sizes) + "}\n}\n";
    SCOPED_TRACE(text);
    Literal operand = RandomLiteral(Shape(ElementType::kF32, r.operand_dims), rng, -50, 50);
    Literal indices = RandomIndices(r, rng);
    std::vector<double> expected;
    for (int64_t o = 0; o < Shape(ElementType::kF32, r.result_dims).element_count(); ++o) {
      ElementRoles roles = Roles(r, indices, Unflatten(o, r.result_dims));
      std::vector<int64_t> index = OperandIndex(r, Start(r, roles, true), roles);
      expected.push_back(operand.GetAsDouble(Flatten(index, r.operand_dims)));
    }
    ExpectValues(RunHlo(text, {operand, indices}), expected);
  }
}

// combine(a, b) = 2a + b: order-dependent, so duplicates check the application order too.
const char* kScatterGeneric = "combine {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  two = f32[] constant(2)\n"
                              "  t = f32[] multiply(a, two)\n  ROOT r = f32[] add(t, b)\n}\n";

TEST(ScatterTest, RandomDimensionNumbersMatchNaiveLoop) {
  std::mt19937 rng(52);
  for (int trial = 0; trial < 200; ++trial) {
    RandomIndexing r = MakeRandomIndexing(rng);
    bool generic = trial % 2 == 1;
    std::string text = "HloModule m\n" + (generic ? std::string(kScatterGeneric) : "combine {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n") +
                       "ENTRY e {\n  x = " + ShapeText(ElementType::kF32, r.operand_dims) + " parameter(0)\n  i = " +
                       ShapeText(ElementType::kS32, r.indices_dims) + " parameter(1)\n  u = " +
                       ShapeText(ElementType::kF32, r.result_dims) + " parameter(2)\n  ROOT s = " +
                       ShapeText(ElementType::kF32, r.operand_dims) + " scatter(x, i, u), update_window_dims={" +
                       Join(r.window_positions) + "}, inserted_window_dims={" + Join(r.dropped_dims) +
                       "}, scatter_dims_to_operand_dims={" + Join(r.index_map) + "}, input_batching_dims={" +
                       Join(r.batching_operand_dims) + "}, scatter_indices_batching_dims={" + Join(r.batching_indices_dims) +
                       "}, index_vector_dim=" + std::to_string(r.index_vector_dim) + ", to_apply=combine\n}\n";
    SCOPED_TRACE(text);
    Literal operand = RandomLiteral(Shape(ElementType::kF32, r.operand_dims), rng, -3, 3);
    Literal indices = RandomIndices(r, rng);
    Literal updates = RandomLiteral(Shape(ElementType::kF32, r.result_dims), rng, -3, 3);
    std::vector<double> expected = Doubles(operand);
    // Index vectors outer, window elements inner; a window that does not fit is skipped.
    std::vector<int64_t> batch_sizes, window_sizes, window_result_dims;
    for (size_t d = 0; d < r.result_dims.size(); ++d)
      (std::count(r.window_positions.begin(), r.window_positions.end(), static_cast<int64_t>(d)) ? window_sizes : batch_sizes)
          .push_back(r.result_dims[d]);
    int64_t batches = 1, windows = 1;
    for (int64_t s : batch_sizes) batches *= s;
    for (int64_t s : window_sizes) windows *= s;
    for (int64_t b = 0; b < batches; ++b) {
      std::vector<int64_t> batch_index = Unflatten(b, batch_sizes);
      for (int64_t w = 0; w < windows; ++w) {
        std::vector<int64_t> window_index = Unflatten(w, window_sizes), update_index;
        size_t bi = 0, wi = 0;
        for (size_t d = 0; d < r.result_dims.size(); ++d)
          update_index.push_back(std::count(r.window_positions.begin(), r.window_positions.end(), static_cast<int64_t>(d))
                                     ? window_index[wi++] : batch_index[bi++]);
        ElementRoles roles = Roles(r, indices, update_index);
        std::vector<int64_t> start = Start(r, roles, false);
        bool fits = true;
        for (size_t d = 0; d < start.size(); ++d)
          fits = fits && start[d] >= 0 && start[d] + r.window_sizes[d] <= r.operand_dims[d];
        if (!fits) continue;
        double& target = expected[Flatten(OperandIndex(r, start, roles), r.operand_dims)];
        double update = updates.GetAsDouble(Flatten(update_index, r.result_dims));
        target = generic ? 2 * target + update : target + update;
      }
    }
    ExpectValues(RunHlo(text, {operand, indices, updates}), expected);
  }
}

}  // namespace
}  // namespace gspmd::kernel_test
