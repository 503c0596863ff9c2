// Shapes: an array shape (element type, dimensions, optional layout) or a tuple of shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/element_type.h"

namespace gspmd {

// Layout of an array: minor_to_major as printed in XLA ("{1,0}"). Anything after a ':' inside
// the braces (tiling, memory space) is kept verbatim in `extra` so it round-trips.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::string extra;
  bool operator==(const Layout& other) const = default;
};

// An array shape such as f32[16,32]{1,0}, or a tuple (f32[2], s32[]).
// Invariant: tuple shapes have element_type kTuple and no dims; array shapes have no
// tuple_shapes.
class Shape {
 public:
  Shape() = default;
  Shape(ElementType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();

  ElementType element_type() const { return element_type_; }
  void set_element_type(ElementType type) { element_type_ = type; }
  bool IsTuple() const { return element_type_ == ElementType::kTuple; }
  bool IsToken() const { return element_type_ == ElementType::kToken; }
  bool IsArray() const { return IsArrayType(element_type_); }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_.at(i); }
  void set_dim(int64_t i, int64_t size) { dims_.at(i) = size; }
  void set_dims(std::vector<int64_t> dims);

  // Bounded dynamic dimensions ("<=8") are kept as flags; sizes are the bounds.
  const std::vector<bool>& dynamic_dims() const { return dynamic_dims_; }
  void set_dynamic_dim(int64_t i, bool dynamic) { dynamic_dims_.at(i) = dynamic; }

  const std::optional<Layout>& layout() const { return layout_; }
  void set_layout(std::optional<Layout> layout) { layout_ = std::move(layout); }
  void ClearLayout();  // recursively, for tuples too
  void SetDefaultLayout();  // major-to-minor {rank-1,...,0}, recursively

  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_shapes_; }
  const Shape& tuple_shape(int64_t i) const { return tuple_shapes_.at(i); }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  // Product of dims (1 for scalars) and element_count * element size (summed over tuple
  // leaves). The verifier keeps shapes whose sizes overflow out of the passes; the Checked
  // forms say nullopt for them.
  int64_t element_count() const;
  int64_t byte_size() const;
  std::optional<int64_t> CheckedElementCount() const;
  std::optional<int64_t> CheckedByteSize() const;

  // Same element type and dims (and same structure for tuples); layouts are ignored.
  bool Compatible(const Shape& other) const;
  bool operator==(const Shape& other) const;

  // "f32[16,32]{1,0}"; with print_layout=false, "f32[16,32]".
  std::string ToString(bool print_layout = true) const;

 private:
  ElementType element_type_ = ElementType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_dims_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
};

// Row-major strides (in elements) of dims.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace gspmd
