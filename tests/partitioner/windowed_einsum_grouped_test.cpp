// Grouped windowed loops (WindowedEinsumCandidate::group): the operand all-gathered among its
// `group` minor devices first, then a loop round rings of the rest passing windows of `group`
// shards. Same numbers as off (bit-identical for free and batch windows; contracting windows
// exact on integers, within 1e-5 otherwise), one loop of N / group trips, the pre-gather the only
// all-gathers left, and ring pairs inside the devices that share the pre-gather's position.
#include "windowed_einsum_test_util.h"

namespace gspmd::partition_test::windowed_test {
namespace {

// Auto with a check that takes exactly one grouping, direction and unrolling.
struct LoopShape {
  int64_t group;
  bool bidirectional;
  bool unrolled;
};

WindowedEinsumOptions Taking(const LoopShape& want, std::vector<WindowedEinsumCandidate>* seen = nullptr) {
  WindowedEinsumOptions options;
  options.cost_check = [want, seen](const WindowedEinsumCandidate& c) {
    if (seen != nullptr) seen->push_back(c);
    return c.group == want.group && c.bidirectional == want.bidirectional && c.unrolled == want.unrolled;
  };
  return options;
}

std::string Name(const LoopShape& s) {
  return "group " + std::to_string(s.group) + (s.bidirectional ? " bidirectional" : "") + (s.unrolled ? " unrolled" : "");
}

// The shapes of loop a ring of n devices can take grouped.
std::vector<LoopShape> GroupedShapes(int64_t n) {
  std::vector<LoopShape> shapes;
  for (int64_t group = 2; n / group >= 2; group *= 2) {
    shapes.push_back({group, false, false});
    shapes.push_back({group, false, true});
    if (n / group >= 4) shapes.push_back({group, true, false});
  }
  return shapes;
}

// Devices d and e of a ring over an axis of stride `stride` and size n, grouped by `group`: the
// same pre-gather position and the same other digits; their index along the ring's axis.
RingAxes GroupedRing(int64_t stride, int64_t n, int64_t group) {
  RingAxes axes;
  axes.same_group = [=](int64_t s, int64_t t) {
    const int64_t s_axis = s / stride % n, t_axis = t / stride % n;
    return s_axis % group == t_axis % group && s - s_axis * stride == t - t_axis * stride;
  };
  axes.axis_index = [=](int64_t d) { return d / stride % n / group; };
  return axes;
}

// One loop of n / group trips (ExpectLoop, or the unrolled loop; n devices along the windowed
// axis), and before it the pre-gather: all-gathers whose group sizes multiply to `group` (the
// reshard planner gathers a 4-way piece as two 2-way steps, the same bytes), each group inside
// one pre-gather group of the `devices`.
void ExpectGrouped(const Partitioned& p, int64_t n, const LoopShape& s, const RingAxes& axes, int64_t devices = 0) {
  const int64_t ring = n / s.group;
  if (s.unrolled)
    ExpectUnrolledLoop(p, ring, axes);
  else
    ExpectLoop(p, ring, s.bidirectional, axes);
  std::vector<const Instruction*> gathers = InstructionsWith(*p.module, Opcode::kAllGather);
  ASSERT_FALSE(gathers.empty()) << p.text;
  int64_t product = 1;
  for (const Instruction* gather : gathers) {
    const std::vector<std::vector<int64_t>> groups = gather->replica_groups().Groups(devices > 0 ? devices : n);
    ASSERT_FALSE(groups.empty()) << p.text;
    product *= static_cast<int64_t>(groups[0].size());
    for (const std::vector<int64_t>& group : groups)
      for (int64_t device : group)
        EXPECT_EQ(axes.axis_index(device), axes.axis_index(group[0])) << gather->name() << "\n" << p.text;
  }
  EXPECT_EQ(product, s.group) << p.text;
}

std::string BatchModule(int64_t n) {
  return DotModule(n, {2 * n, 3, 4}, Split(3, 0, n), {2 * n, 4, 16}, "{replicated}", {2 * n, 3, 16}, "{replicated}",
                   kBatchMatmul);
}

TEST(WindowedEinsumGrouped, FreeAndBatchWindowsAreBitIdentical) {
  for (int64_t n : {4, 8, 16, 32})
    for (const LoopShape& s : GroupedShapes(n)) {
      SCOPED_TRACE(n);
      SCOPED_TRACE(Name(s));
      Partitioned free = ExpectSameAsOffWith(FreeDimModule(n, 2 * n), /*exact=*/true, false, Taking(s));
      ExpectGrouped(free, n, s, GroupedRing(1, n, s.group));
      Partitioned batch = ExpectSameAsOffWith(BatchModule(n), /*exact=*/true, false, Taking(s));
      ExpectGrouped(batch, n, s, GroupedRing(1, n, s.group));
    }
}

TEST(WindowedEinsumGrouped, ContractingWindowsAreExactOnIntegersAndCloseOnFloats) {
  for (int64_t n : {4, 8, 16})
    for (const LoopShape& s : GroupedShapes(n)) {
      SCOPED_TRACE(n);
      SCOPED_TRACE(Name(s));
      Partitioned p = ExpectSameAsOffWith(ContractingModule(n), /*exact=*/true, /*integers=*/true, Taking(s));
      ExpectGrouped(p, n, s, GroupedRing(1, n, s.group));
      ExpectSameAsOffWith(ContractingModule(n), /*exact=*/false, /*integers=*/false, Taking(s));
    }
}

// On a 4 x 4 mesh (device = 4i + j), the rows of x split over one axis and w's columns over the
// other: the pre-gather and the ring stay inside the windowed axis, the major one (stride 4) or
// the minor one.
TEST(WindowedEinsumGrouped, TwoDimensionalMeshesGroupWithinTheWindowedAxis) {
  const std::string major_axis = "<=[16] last_tile_dim_replicate}";
  const std::string minor_axis = "<=[4,4]T(1,0) last_tile_dim_replicate}";
  for (bool window_major : {true, false})
    for (const LoopShape& s : GroupedShapes(4)) {
      SCOPED_TRACE(window_major ? "major" : "minor");
      SCOPED_TRACE(Name(s));
      const std::string rows = std::string("{devices=[4,1,4]") + (window_major ? major_axis : minor_axis);
      const std::string columns = std::string("{devices=[1,4,4]") + (window_major ? minor_axis : major_axis);
      const std::string hlo = DotModule(16, {16, 4}, rows, {4, 128}, columns, {16, 128}, columns, kMatmul);
      Partitioned p = ExpectSameAsOffWith(hlo, /*exact=*/true, false, Taking(s));
      ExpectGrouped(p, 4, s, GroupedRing(window_major ? 4 : 1, 4, s.group), 16);
    }
}

// Uneven windows (rows 6 over 4 devices) are not grouped: the check sees plain loops only.
TEST(WindowedEinsumGrouped, UnevenWindowsAreOfferedPlainOnly) {
  std::vector<WindowedEinsumCandidate> seen;
  Partitioned p = PartitionWithOptions(FreeDimModule(4, 6), Taking({2, false, false}, &seen));
  ExpectNotWindowed(p);
  ASSERT_FALSE(seen.empty());
  for (const WindowedEinsumCandidate& c : seen) EXPECT_EQ(c.group, 1);
}

// What the check sees: each grouping after the plain loop, as the same loop with a shorter
// ring, a pre-gather and the whole collective's groups, and every other grouping of the same
// direction and unrolling as an alternative.
TEST(WindowedEinsumGrouped, TheCheckSeesEachGroupingWithItsAlternatives) {
  std::vector<WindowedEinsumCandidate> seen;
  ExpectNotWindowed(PartitionWithOptions(FreeDimModule(8, 16), Taking({0, false, false}, &seen)));
  std::vector<std::pair<int64_t, bool>> order;  // (group, unrolled) of the unidirectional offers
  for (const WindowedEinsumCandidate& c : seen) {
    if (c.bidirectional) continue;
    order.emplace_back(c.group, c.unrolled);
    EXPECT_EQ(c.devices * c.group, 8);
    EXPECT_EQ(c.collective_bytes, 16 * 4 * 4);  // the gathered x
    EXPECT_EQ(c.alternatives.size(), 2u);       // groups 1, 2, 4 of this unrolling
    for (const WindowedEinsumCandidate& alternative : c.alternatives) {
      EXPECT_EQ(alternative.unrolled, c.unrolled);
      EXPECT_NE(alternative.group, c.group);
    }
    if (c.group == 1) {
      EXPECT_TRUE(c.pre_gather_groups.empty());
      EXPECT_EQ(c.window_bytes_per_trip, (c.unrolled ? 2 : 1) * 2 * 4 * 4);
      continue;
    }
    EXPECT_EQ(c.window_bytes_per_trip, (c.unrolled ? 2 : 1) * c.group * 2 * 4 * 4);  // group shards a window
    EXPECT_EQ(c.pre_gather_bytes, c.group * 2 * 4 * 4);
    ASSERT_EQ(c.pre_gather_groups.size(), static_cast<size_t>(8 / c.group));
    EXPECT_EQ(c.pre_gather_groups[0], c.group == 2 ? (std::vector<int64_t>{0, 1}) : (std::vector<int64_t>{0, 1, 2, 3}));
    ASSERT_EQ(c.collective_groups.size(), 1u);
    EXPECT_EQ(c.collective_groups[0].size(), 8u);
    for (const std::vector<int64_t>& ring : c.rings)
      for (int64_t device : ring) EXPECT_EQ(device % c.group, ring[0] % c.group);
  }
  const std::vector<std::pair<int64_t, bool>> expected = {{1, true}, {2, true}, {4, true},
                                                          {1, false}, {2, false}, {4, false}};
  EXPECT_EQ(order, expected);
}

// The trip cap counts the replaced collective's devices, not the grouped ring's.
TEST(WindowedEinsumGrouped, TheTripCapCountsTheWholeCollective) {
  WindowedEinsumOptions options = Taking({2, false, false});
  options.max_trips = 4;
  ExpectNotWindowed(PartitionWithOptions(FreeDimModule(8, 16), options));
}

}  // namespace
}  // namespace gspmd::partition_test::windowed_test
