// TileAssignment: an N-D array of device ids, stored either as an explicit list or in XLA's
// compact iota form ("[2,4]<=[8]", "[4,2]<=[2,4]T(1,0)").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gspmd {

// An array of device ids with shape dims(). The iota form means
//   arange(product(reshape_dims)).reshape(reshape_dims).transpose(transpose_perm).reshape(dims)
// and is kept as such (the array is materialized lazily), so that shardings over thousands of
// devices stay small. Example: dims [4,2], reshape_dims [2,4], perm [1,0] gives
//   [[0,4],[1,5],[2,6],[3,7]].
class TileAssignment {
 public:
  TileAssignment() = default;
  // Explicit devices, row-major over dims.
  TileAssignment(std::vector<int64_t> dims, std::vector<int64_t> devices);
  // Iota form. An empty perm means identity; empty reshape_dims means {product(dims)}.
  static TileAssignment Iota(std::vector<int64_t> dims, std::vector<int64_t> reshape_dims = {},
                             std::vector<int64_t> transpose_perm = {});

  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t num_dims() const { return static_cast<int64_t>(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_.at(i); }
  int64_t num_elements() const;

  // The device at a multi-index / at a row-major linear index.
  int64_t DeviceAt(const std::vector<int64_t>& index) const;
  int64_t DeviceAtLinear(int64_t linear) const;
  // The multi-index at which a device appears (the first, if it appears more than once).
  std::optional<std::vector<int64_t>> IndexOf(int64_t device) const;
  // All devices, row-major.
  const std::vector<int64_t>& Devices() const;

  bool is_iota() const { return is_iota_; }
  const std::vector<int64_t>& iota_reshape_dims() const { return reshape_dims_; }
  const std::vector<int64_t>& iota_transpose_perm() const { return transpose_perm_; }

  // Same shape and same devices in the same places (whatever the storage form).
  bool operator==(const TileAssignment& other) const;

  // The same devices viewed with other dims (element count must match).
  TileAssignment Reshape(std::vector<int64_t> new_dims) const;
  // Permutes dims: result dim i is this dim perm[i].
  TileAssignment Transpose(const std::vector<int64_t>& perm) const;
  // The same array with the devices of each row along the last dim sorted ascending (XLA's
  // canonical form for partial replication); stays iota when it can.
  TileAssignment SortedAlongLastDim() const;
  // Largest device id + 1 (0 when empty).
  int64_t MaxDevicePlusOne() const;

  // XLA text without the "devices=" prefix: "[2,4]<=[8]", "[4,2]<=[2,4]T(1,0)" or
  // "[8,1]7,6,5,4,3,2,1,0".
  std::string ToString() const;

 private:
  // The device array, materialized eagerly in the constructors (so concurrent const reads are
  // safe) and shared, immutable, between copies; iota arrays are cached by their canonical
  // (reshape_dims, perm), so that copying or rebuilding a sharding over thousands of devices
  // does not copy thousands of ids.
  struct Storage {
    std::vector<int64_t> devices;  // row-major
    // device id -> row-major position (-1: absent); empty when ids are too sparse to index.
    std::vector<int64_t> device_positions;
    int64_t max_device_plus_one = 0;
  };
  static std::shared_ptr<const Storage> MakeStorage(std::vector<int64_t> devices);
  // The (cached) storage of the canonical iota (reshape_dims, perm).
  static std::shared_ptr<const Storage> IotaStorage(const std::vector<int64_t>& reshape_dims,
                                                    const std::vector<int64_t>& perm);

  std::vector<int64_t> dims_;
  bool is_iota_ = false;
  std::vector<int64_t> reshape_dims_;
  std::vector<int64_t> transpose_perm_;
  std::shared_ptr<const Storage> storage_;
};

}  // namespace gspmd
