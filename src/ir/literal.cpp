// Literal storage, element access and type conversion.
#include "ir/literal.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ir/narrow_types.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

template <typename T>
double ToDouble(T value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return static_cast<double>(static_cast<float>(value));
  else
    return static_cast<double>(value);
}

// Converts one value to To with XLA's convert semantics.
template <typename To, typename From>
To ConvertValue(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>)
      return static_cast<float>(value) != 0.0f;
    else
      return value != From(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(ToDouble(value)));
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(ToDouble(value));
  } else {  // integer target
    if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16> ||
                  std::is_floating_point_v<From>) {
      double d = ToDouble(value);
      if (std::isnan(d)) return To(0);
      if (d <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
      if (d >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
      return static_cast<To>(d);
    } else {
      return static_cast<To>(value);
    }
  }
}

}  // namespace

Literal::Literal(Shape shape) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& element : shape_.tuple_shapes()) tuple_elements_.emplace_back(element);
    return;
  }
  if (!shape_.IsArray()) return;
  std::optional<int64_t> bytes = shape_.CheckedByteSize();
  if (!bytes) GSPMD_USER_ERROR("cannot allocate ", shape_.ToString(false), ": its size overflows 64 bits");
  bytes_ = AllocateZeroed(static_cast<uint64_t>(*bytes), shape_.ToString(false));
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& element : elements) shapes.push_back(element.shape());
  Literal literal;
  literal.shape_ = Shape::Tuple(std::move(shapes));
  literal.tuple_elements_ = std::move(elements);
  return literal;
}

Literal Literal::FromDoubles(const Shape& shape, std::span<const double> values) {
  Literal literal(shape);
  GSPMD_CHECK(static_cast<int64_t>(values.size()) == literal.element_count(), "value count");
  for (size_t i = 0; i < values.size(); ++i) literal.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return literal;
}

Literal Literal::FromInts(const Shape& shape, std::span<const int64_t> values) {
  Literal literal(shape);
  GSPMD_CHECK(static_cast<int64_t>(values.size()) == literal.element_count(), "value count");
  for (size_t i = 0; i < values.size(); ++i) literal.SetFromInt64(static_cast<int64_t>(i), values[i]);
  return literal;
}

double Literal::GetAsDouble(int64_t i) const {
  // Complex values read and write their real part (imaginary part zero).
  if (element_type() == ElementType::kC64) return data<float>()[2 * i];
  if (element_type() == ElementType::kC128) return data<double>()[2 * i];
  if (IsStorageOnly(element_type())) return NarrowToDouble(element_type(), raw(), i);
  return DispatchElementType(element_type(), [&]<typename T>() { return ToDouble(data<T>()[i]); });
}

int64_t Literal::GetAsInt64(int64_t i) const {
  if (IsComplex(element_type()) || IsNarrowFloat(element_type())) return ConvertValue<int64_t>(GetAsDouble(i));
  if (IsNarrowInteger(element_type())) return static_cast<int64_t>(GetAsDouble(i));
  return DispatchElementType(element_type(), [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>)
      return static_cast<int64_t>(data<T>()[i]);
    else
      return ConvertValue<int64_t>(data<T>()[i]);
  });
}

void Literal::SetFromDouble(int64_t i, double value) {
  if (element_type() == ElementType::kC64) {
    data<float>()[2 * i] = static_cast<float>(value);
    data<float>()[2 * i + 1] = 0;
    return;
  }
  if (element_type() == ElementType::kC128) {
    data<double>()[2 * i] = value;
    data<double>()[2 * i + 1] = 0;
    return;
  }
  if (IsStorageOnly(element_type())) return NarrowFromDouble(element_type(), raw(), i, value);
  DispatchElementType(element_type(), [&]<typename T>() { data<T>()[i] = ConvertValue<T>(value); });
}

void Literal::SetFromInt64(int64_t i, int64_t value) {
  if (IsComplex(element_type()) || IsStorageOnly(element_type())) return SetFromDouble(i, static_cast<double>(value));
  DispatchElementType(element_type(), [&]<typename T>() { data<T>()[i] = ConvertValue<T>(value); });
}

bool Literal::BitwiseEquals(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (shape_.IsTuple()) {
    for (size_t i = 0; i < tuple_elements_.size(); ++i)
      if (!tuple_elements_[i].BitwiseEquals(other.tuple_elements_[i])) return false;
    return true;
  }
  return bytes_ == other.bytes_;
}

Literal Literal::Convert(ElementType type) const {
  Shape shape = shape_;
  shape.set_element_type(type);
  Literal result(shape);
  ConvertElements(element_type(), raw(), type, result.raw(), element_count());
  return result;
}

Literal Literal::Reshape(const std::vector<int64_t>& dims) const {
  Literal result = *this;
  result.shape_.set_dims(dims);
  GSPMD_CHECK(result.element_count() == element_count(), "reshape changes element count");
  return result;
}

void ConvertElements(ElementType from, const void* src, ElementType to, void* dst, int64_t count) {
  // Storage-only types go through double (exact for every value they hold).
  if (IsStorageOnly(from) || IsStorageOnly(to)) {
    if (from == to) {
      std::memcpy(dst, src, static_cast<size_t>(count));
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      double value = 0;
      if (IsStorageOnly(from)) {
        value = NarrowToDouble(from, static_cast<const uint8_t*>(src), i);
      } else {
        ConvertElements(from, static_cast<const uint8_t*>(src) + i * ElementByteSize(from), ElementType::kF64,
                        &value, 1);
      }
      if (IsStorageOnly(to)) {
        NarrowFromDouble(to, static_cast<uint8_t*>(dst), i, value);
      } else {
        ConvertElements(ElementType::kF64, &value, to, static_cast<uint8_t*>(dst) + i * ElementByteSize(to), 1);
      }
    }
    return;
  }
  // Complex: c64 <-> c128 part by part, real -> complex with a zero imaginary part, complex ->
  // real keeps the real part.
  if (IsComplex(from) || IsComplex(to)) {
    ElementType from_part = IsComplex(from) ? ComplexComponentType(from) : from;
    ElementType to_part = IsComplex(to) ? ComplexComponentType(to) : to;
    int64_t from_step = IsComplex(from) ? 2 : 1, to_step = IsComplex(to) ? 2 : 1;
    int64_t from_size = ElementByteSize(from_part), to_size = ElementByteSize(to_part);
    const uint8_t* in = static_cast<const uint8_t*>(src);
    uint8_t* out = static_cast<uint8_t*>(dst);
    if (IsComplex(to)) std::memset(out, 0, static_cast<size_t>(count * to_step * to_size));
    for (int64_t i = 0; i < count; ++i) {
      int64_t parts = IsComplex(from) && IsComplex(to) ? 2 : 1;
      for (int64_t k = 0; k < parts; ++k)
        ConvertElements(from_part, in + (i * from_step + k) * from_size, to_part, out + (i * to_step + k) * to_size, 1);
    }
    return;
  }
  DispatchElementType(from, [&]<typename From>() {
    const From* in = static_cast<const From*>(src);
    DispatchElementType(to, [&]<typename To>() {
      To* out = static_cast<To*>(dst);
      if constexpr (std::is_same_v<From, To>) {
        std::memcpy(out, in, sizeof(To) * static_cast<size_t>(count));
      } else {
        for (int64_t i = 0; i < count; ++i) out[i] = ConvertValue<To>(in[i]);
      }
    });
  });
}

}  // namespace gspmd
