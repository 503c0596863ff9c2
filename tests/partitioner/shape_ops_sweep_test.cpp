// Sweeps of slice, pad, concatenate, reverse and rotate configurations along a sharded dim
// (even and uneven sizes, 2-4 devices): no warnings, only collective-permutes, and the numbers
// of the unpartitioned program.
#include <string>
#include <tuple>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

std::string Tiled(int64_t tiles) { return "{devices=[" + std::to_string(tiles) + ",1]<=[" + std::to_string(tiles) + "]}"; }

std::string Shape2(int64_t rows) { return "f32[" + std::to_string(rows) + ",2]{1,0}"; }

// No warnings (Partition fails on them), only collective-permutes if asked, the same numbers.
void Check(const std::string& hlo, bool only_permutes = true) {
  SCOPED_TRACE(hlo);
  Partitioned p = Partition(hlo);
  if (only_permutes) EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kCollectivePermute)) << p.text;
  ExpectSameNumbers(p, {}, kDistinctNumbers);
}

TEST(ShapeOpsSweepTest, Slices) {
  for (int64_t tiles : {2, 3, 4}) {
    for (int64_t size : {5, 8, 13}) {
      for (auto [start, limit, stride] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
               {0, 1, 1}, {1, 4, 1}, {2, 5, 2}, {0, 5, 3}, {size - 3, size, 1}, {1, size - 1, 1}, {0, size, 2}}) {
        if (limit > size || start >= limit) continue;
        int64_t rows = (limit - start + stride - 1) / stride;
        Check("HloModule m, num_partitions=" + std::to_string(tiles) + "\nENTRY e {\n  %a = " + Shape2(size) +
              " parameter(0), sharding=" + Tiled(tiles) + "\n  ROOT %s = " + Shape2(rows) + " slice(%a), slice={[" +
              std::to_string(start) + ":" + std::to_string(limit) + ":" + std::to_string(stride) +
              "], [0:2]}, sharding=" + Tiled(tiles) + "\n}\n");
      }
    }
  }
}

TEST(ShapeOpsSweepTest, Pads) {
  for (int64_t tiles : {2, 3, 4}) {
    for (int64_t size : {5, 8}) {
      for (int64_t low : {-2, 0, 3}) {
        for (int64_t high : {-1, 0, 2}) {
          for (int64_t interior : {0, 1, 2}) {
            int64_t rows = low + high + size + (size - 1) * interior;
            if (rows <= 0) continue;
            Check("HloModule m, num_partitions=" + std::to_string(tiles) + "\nENTRY e {\n  %a = " + Shape2(size) +
                  " parameter(0), sharding=" + Tiled(tiles) + "\n  %v = f32[] constant(-5)\n  ROOT %p = " +
                  Shape2(rows) + " pad(%a, %v), padding=" + std::to_string(low) + "_" + std::to_string(high) + "_" +
                  std::to_string(interior) + "x0_0, sharding=" + Tiled(tiles) + "\n}\n");
          }
        }
      }
    }
  }
}

TEST(ShapeOpsSweepTest, Concatenates) {
  for (int64_t tiles : {2, 3, 4}) {
    for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{{3, 5}, {8, 8}, {1, 7, 4}, {2, 1}}) {
      std::string body, operands;
      int64_t total = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        body += "  %a" + std::to_string(i) + " = " + Shape2(sizes[i]) + " parameter(" + std::to_string(i) +
                "), sharding=" + Tiled(tiles) + "\n";
        operands += (i ? ", %a" : "%a") + std::to_string(i);
        total += sizes[i];
      }
      Check("HloModule m, num_partitions=" + std::to_string(tiles) + "\nENTRY e {\n" + body + "  ROOT %c = " +
            Shape2(total) + " concatenate(" + operands + "), dimensions={0}, sharding=" + Tiled(tiles) + "\n}\n");
    }
  }
}

TEST(ShapeOpsSweepTest, RotatesAndWrappedPads) {
  for (int64_t tiles : {2, 3, 4}) {
    for (int64_t size : {6, 8, 11}) {
      for (int64_t shift : {1, 3}) {
        std::string rows = std::to_string(size);
        std::string head = "HloModule m, num_partitions=" + std::to_string(tiles) + "\nENTRY e {\n  %a = " +
                           Shape2(size) + " parameter(0), sharding=" + Tiled(tiles) + "\n";
        std::string cut = std::to_string(size - shift);
        Check(head + "  %s0 = " + Shape2(shift) + " slice(%a), slice={[" + cut + ":" + rows +
              "], [0:2]}, sharding=" + Tiled(tiles) + "\n  %s1 = " + Shape2(size - shift) + " slice(%a), slice={[0:" +
              cut + "], [0:2]}, sharding=" + Tiled(tiles) + "\n  ROOT %c = " + Shape2(size) +
              " concatenate(%s0, %s1), dimensions={0}, sharding=" + Tiled(tiles) + "\n}\n");
        Check(head + "  %s0 = " + Shape2(shift) + " slice(%a), slice={[" + cut + ":" + rows +
              "], [0:2]}, sharding=" + Tiled(tiles) + "\n  %s1 = " + Shape2(1) +
              " slice(%a), slice={[0:1], [0:2]}, sharding=" + Tiled(tiles) + "\n  ROOT %c = " +
              Shape2(size + shift + 1) + " concatenate(%s0, %a, %s1), dimensions={0}, sharding=" + Tiled(tiles) +
              "\n}\n");
      }
    }
  }
}

TEST(ShapeOpsSweepTest, Reverses) {
  for (int64_t tiles : {2, 3, 4}) {
    for (int64_t size : {5, 8, 13}) {
      std::string mirrored = "{devices=[" + std::to_string(tiles) + ",1]";
      for (int64_t d = tiles - 1; d >= 0; --d) mirrored += std::to_string(d) + (d ? "," : "}");
      for (const std::string& result : {Tiled(tiles), mirrored}) {
        Check("HloModule m, num_partitions=" + std::to_string(tiles) + "\nENTRY e {\n  %a = " + Shape2(size) +
              " parameter(0), sharding=" + Tiled(tiles) + "\n  ROOT %r = " + Shape2(size) +
              " reverse(%a), dimensions={0}, sharding=" + result + "\n}\n");
      }
    }
  }
}

// A tiling of `dims` over 8 devices: tile counts per dim (product dividing 8), the rest of the
// devices as a replicated subgroup; `order` picks one of two device orders.
std::string Tiling(const std::vector<int64_t>& tiles, bool transposed) {
  int64_t product = 1;
  for (int64_t t : tiles) product *= t;
  std::vector<int64_t> dims = tiles;
  if (product < 8) dims.push_back(8 / product);
  std::string text = "{devices=[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  text += "]<=[8]";
  if (transposed && dims.size() >= 2) {
    // The same tile counts with the device digits in reverse significance.
    text = "{devices=[";
    for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
    text += "]<=[";
    for (size_t i = dims.size(); i-- > 0;) text += std::to_string(dims[i]) + (i ? "," : "");
    text += "]T(";
    for (size_t i = dims.size(); i-- > 0;) text += std::to_string(i) + (i ? "," : "");
    text += ")";
  }
  if (product < 8) text += " last_tile_dim_replicate";
  return text + "}";
}

std::string ArrayShape(const std::vector<int64_t>& dims) {
  std::string text = "f32[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  text += "]{";
  for (size_t i = dims.size(); i-- > 0;) text += std::to_string(i) + (i ? "," : "");
  return text + "}";
}

TEST(ShapeOpsSweepTest, ReshapesOnEightDevices) {
  struct Case {
    std::vector<int64_t> from, to;
  };
  const std::vector<Case> cases = {
      {{16}, {4, 4}}, {{8, 6}, {48}}, {{4, 6}, {2, 12}}, {{2, 4, 6}, {8, 6}}, {{12, 2}, {3, 8}},
      {{8}, {1, 8, 1}}, {{10, 4}, {40}}, {{4, 2, 3}, {4, 6}},
  };
  for (const Case& c : cases) {
    // Every tiling with power-of-two tile counts (product <= 8) on both sides, in two orders.
    auto tilings = [&](size_t rank) {
      std::vector<std::vector<int64_t>> all{{}};
      for (size_t d = 0; d < rank; ++d) {
        std::vector<std::vector<int64_t>> next;
        for (const auto& prefix : all)
          for (int64_t t : {1, 2, 4, 8}) {
            int64_t product = t;
            for (int64_t p : prefix) product *= p;
            if (product > 8) continue;
            auto extended = prefix;
            extended.push_back(t);
            next.push_back(extended);
          }
        all = next;
      }
      return all;
    };
    for (const auto& from_tiles : tilings(c.from.size())) {
      for (const auto& to_tiles : tilings(c.to.size())) {
        for (bool transposed : {false, true}) {
          Check("HloModule m, num_partitions=8\nENTRY e {\n  %x = " + ArrayShape(c.from) +
                " parameter(0), sharding=" + Tiling(from_tiles, transposed) + "\n  ROOT %r = " + ArrayShape(c.to) +
                " reshape(%x), sharding=" + Tiling(to_tiles, false) + "\n}\n",
                false);
        }
      }
    }
  }
}

TEST(ShapeOpsSweepTest, WindowedOpsOnTwoDimMeshes) {
  // Both dims split (4x2 and 2x4 meshes, and 2x2 with a replicated pair), uneven sizes.
  const std::vector<std::string> shardings = {"{devices=[4,2]<=[8]}", "{devices=[2,4]<=[4,2]T(1,0)}",
                                              "{devices=[2,2,2]<=[8] last_tile_dim_replicate}"};
  for (const std::string& sharding : shardings) {
    std::string head = "HloModule m, num_partitions=8\nENTRY e {\n  %a = f32[10,7]{1,0} parameter(0), sharding=" +
                       sharding + "\n  %b = f32[5,7]{1,0} parameter(1), sharding=" + sharding + "\n";
    Check(head + "  ROOT %s = f32[7,4]{1,0} slice(%a), slice={[2:9], [3:7]}, sharding=" + sharding + "\n}\n");
    Check(head + "  ROOT %s = f32[3,3]{1,0} slice(%a), slice={[1:10:3], [0:7:3]}, sharding=" + sharding + "\n}\n");
    Check(head + "  %z = f32[] constant(2)\n  ROOT %p = f32[14,9]{1,0} pad(%a, %z), padding=3_1x-1_3, sharding=" +
          sharding + "\n}\n");
    Check(head + "  ROOT %c = f32[15,7]{1,0} concatenate(%a, %b), dimensions={0}, sharding=" + sharding + "\n}\n");
    Check(head + "  ROOT %r = f32[10,7]{1,0} reverse(%a), dimensions={0,1}, sharding=" + sharding + "\n}\n");
  }
}

}  // namespace
}  // namespace gspmd::partition_test
