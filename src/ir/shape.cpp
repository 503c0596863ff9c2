// Shape construction, sizes, comparison and printing.
#include "ir/shape.h"

#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {

Shape::Shape(ElementType type, std::vector<int64_t> dims)
    : element_type_(type), dims_(std::move(dims)), dynamic_dims_(dims_.size(), false) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = ElementType::kTuple;
  shape.tuple_shapes_ = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.element_type_ = ElementType::kToken;
  return shape;
}

void Shape::set_dims(std::vector<int64_t> dims) {
  dims_ = std::move(dims);
  dynamic_dims_.assign(dims_.size(), false);
  if (layout_ && static_cast<int64_t>(layout_->minor_to_major.size()) != rank()) SetDefaultLayout();
}

void Shape::ClearLayout() {
  layout_.reset();
  for (Shape& element : tuple_shapes_) element.ClearLayout();
}

void Shape::SetDefaultLayout() {
  if (IsTuple()) {
    for (Shape& element : tuple_shapes_) element.SetDefaultLayout();
    return;
  }
  if (!IsArray()) return;
  Layout layout;
  for (int64_t i = rank() - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  layout_ = std::move(layout);
}

int64_t Shape::element_count() const {
  int64_t count = 1;
  for (int64_t d : dims_) count *= d;
  return count;
}

int64_t Shape::byte_size() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : tuple_shapes_) total += element.byte_size();
    return total;
  }
  return element_count() * ElementByteSize(element_type_);
}

std::optional<int64_t> Shape::CheckedElementCount() const {
  int64_t count = 1;
  for (int64_t d : dims_) {
    std::optional<int64_t> product = CheckedMul(count, d);
    if (!product || d < 0) return std::nullopt;
    count = *product;
  }
  return count;
}

std::optional<int64_t> Shape::CheckedByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : tuple_shapes_) {
      std::optional<int64_t> bytes = element.CheckedByteSize();
      if (!bytes) return std::nullopt;
      std::optional<int64_t> sum = CheckedAdd(total, *bytes);
      if (!sum) return std::nullopt;
      total = *sum;
    }
    return total;
  }
  std::optional<int64_t> count = CheckedElementCount();
  if (!count) return std::nullopt;
  return CheckedMul(*count, ElementByteSize(element_type_));
}

bool Shape::Compatible(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (IsTuple()) {
    if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i)
      if (!tuple_shapes_[i].Compatible(other.tuple_shapes_[i])) return false;
    return true;
  }
  return dims_ == other.dims_;
}

bool Shape::operator==(const Shape& other) const {
  return element_type_ == other.element_type_ && dims_ == other.dims_ &&
         dynamic_dims_ == other.dynamic_dims_ && layout_ == other.layout_ &&
         tuple_shapes_ == other.tuple_shapes_;
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i > 0) out += ", ";
      if (i > 0 && i % 5 == 0) out += "/*index=" + std::to_string(i) + "*/";
      out += tuple_shapes_[i].ToString(print_layout);
    }
    return out + ")";
  }
  std::string out(ElementTypeName(element_type_));
  if (IsToken()) return out + "[]";
  out += "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ",";
    if (dynamic_dims_[i]) out += "<=";
    out += std::to_string(dims_[i]);
  }
  out += "]";
  if (print_layout && layout_) {
    out += "{";
    for (size_t i = 0; i < layout_->minor_to_major.size(); ++i) {
      if (i > 0) out += ",";
      out += std::to_string(layout_->minor_to_major[i]);
    }
    if (!layout_->extra.empty()) out += ":" + layout_->extra;
    out += "}";
  }
  return out;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

}  // namespace gspmd
