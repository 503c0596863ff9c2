// Literal: a concrete value of a Shape (dense row-major array data, or a tuple of literals).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace gspmd {

// A value. Array data is stored densely in row-major (logical) order whatever the shape's
// layout says; pred is stored as one byte per element (0 or 1).
//
//   Literal x(Shape(ElementType::kF32, {2, 3}));   // zero-initialized
//   x.data<float>()[4] = 1.0f;                      // element [1,1]
class Literal {
 public:
  Literal() = default;
  explicit Literal(Shape shape);  // zero-filled; tuples get zero-filled elements

  static Literal Tuple(std::vector<Literal> elements);
  template <typename T>
  static Literal Scalar(ElementType type, T value) {
    Literal literal(Shape(type, {}));
    literal.SetFromDouble(0, static_cast<double>(value));
    return literal;
  }
  // An array of the given shape filled from values (converted to the element type).
  static Literal FromDoubles(const Shape& shape, std::span<const double> values);
  static Literal FromInts(const Shape& shape, std::span<const int64_t> values);

  const Shape& shape() const { return shape_; }
  ElementType element_type() const { return shape_.element_type(); }
  int64_t element_count() const { return shape_.element_count(); }
  int64_t byte_size() const { return static_cast<int64_t>(bytes_.size()); }

  template <typename T>
  T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  uint8_t* raw() { return bytes_.data(); }
  const uint8_t* raw() const { return bytes_.data(); }

  // Element access through double / int64 (slow; for constants, tests and indices).
  double GetAsDouble(int64_t linear_index) const;
  int64_t GetAsInt64(int64_t linear_index) const;
  void SetFromDouble(int64_t linear_index, double value);
  void SetFromInt64(int64_t linear_index, int64_t value);

  std::vector<Literal>& tuple_elements() { return tuple_elements_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_elements_; }

  // Same shape (ignoring layout) and identical bytes.
  bool BitwiseEquals(const Literal& other) const;
  // Converts every element to another element type (as HLO convert does).
  Literal Convert(ElementType type) const;
  // Same data viewed with other dims (element count must match).
  Literal Reshape(const std::vector<int64_t>& dims) const;

 private:
  Shape shape_;
  std::vector<uint8_t> bytes_;
  std::vector<Literal> tuple_elements_;
};

// HLO convert semantics between element types: float->int saturates and NaN becomes 0;
// anything->pred is "!= 0".
void ConvertElements(ElementType from, const void* src, ElementType to, void* dst, int64_t count);

}  // namespace gspmd
