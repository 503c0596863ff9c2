// Topology: one slice of a chip's network (the levels of its ChipSpec at concrete sizes) and
// where each partition of a program runs on it.
//
//   tpu-v3, 128 partitions, default placement "core,x,y":
//     levels core (switch of 2) and ici (8x8 torus of chips, no wraparound: 8 < 32);
//     partition p runs on core p % 2 of chip (x, y) = ((p / 2) % 8, p / 16).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulate/chip_spec.h"
#include "support/diagnostic.h"

namespace gspmd::simulate {

// One dimension of the slice: a torus dimension or a switch level.
struct PhysicalDim {
  std::string name;   // "core", "x", "y", "nvlink", "ib"
  int64_t level = 0;  // index into ChipSpec::levels
  bool torus = false;
  int64_t extent = 1;  // nodes along it in this slice
  bool wraps = false;  // torus: wraparound links close each ring
};

class Topology {
 public:
  // `shape_text` gives the outermost level's shape ("8x8" chips, "16" nodes); "" picks the
  // smallest of the chip's slices (or node count) that holds `num_partitions`.
  // `placement_text` lists the dim names from the fastest-varying digit of the partition id
  // to the slowest ("" = innermost level first, dims in order: "core,x,y"). UserError when
  // the program's partitions do not fit the slice, or for a malformed shape or placement.
  static Topology Build(const ChipSpec& chip, int64_t num_partitions, const std::string& shape_text = "",
                        const std::string& placement_text = "");

  const std::vector<NetworkLevel>& levels() const { return levels_; }
  const std::vector<PhysicalDim>& dims() const { return dims_; }
  const std::vector<std::string>& placement() const { return placement_; }
  int64_t num_partitions() const { return num_partitions_; }
  int64_t slice_devices() const { return slice_devices_; }

  // The partition's coordinate along every dim (dims() order).
  const int64_t* Coordinates(int64_t partition) const {
    GSPMD_CHECK(partition >= 0 && partition < num_partitions_, "partition ", partition, " is not among the ",
                num_partitions_, " of the topology");
    return &coordinates_[static_cast<size_t>(partition) * dims_.size()];
  }

  // How many partitions share one node of `level` and so its links (1 for the innermost).
  int64_t Sharing(int64_t level) const { return sharing_.at(level); }

  // Per-device bandwidth, one direction, of one link along `dim` (torus) or of the switch port.
  double LinkBandwidth(int64_t dim) const;

  // "2 cores x 8x8 ici torus (no wraparound), 128 of 128 devices, placement core,x,y".
  std::string Describe() const;
  // The outermost level's shape, "8x8".
  std::string ShapeText() const;

 private:
  std::vector<NetworkLevel> levels_;
  std::vector<PhysicalDim> dims_;
  std::vector<std::string> placement_;
  std::vector<int64_t> coordinates_;  // num_partitions x dims
  std::vector<int64_t> sharing_;      // per level
  int64_t num_partitions_ = 0;
  int64_t slice_devices_ = 0;
  std::string chip_name_;
};

}  // namespace gspmd::simulate
