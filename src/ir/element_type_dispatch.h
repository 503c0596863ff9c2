// Template dispatch from an ElementType value to its C++ storage type.
#pragma once

#include "support/diagnostic.h"

namespace gspmd {

template <typename Fn>
decltype(auto) DispatchElementType(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::kPred: return fn.template operator()<bool>();
    case ElementType::kS8: return fn.template operator()<int8_t>();
    case ElementType::kS16: return fn.template operator()<int16_t>();
    case ElementType::kS32: return fn.template operator()<int32_t>();
    case ElementType::kS64: return fn.template operator()<int64_t>();
    case ElementType::kU8: return fn.template operator()<uint8_t>();
    case ElementType::kU16: return fn.template operator()<uint16_t>();
    case ElementType::kU32: return fn.template operator()<uint32_t>();
    case ElementType::kU64: return fn.template operator()<uint64_t>();
    case ElementType::kF16: return fn.template operator()<Half>();
    case ElementType::kBF16: return fn.template operator()<BFloat16>();
    case ElementType::kF32: return fn.template operator()<float>();
    case ElementType::kF64: return fn.template operator()<double>();
    case ElementType::kC64: case ElementType::kC128:
      throw UserError(StrCat("element type ", ElementTypeName(type),
                             " is not supported by this operation (complex values can be parsed, printed, "
                             "partitioned and moved, but not computed on)"));
    case ElementType::kS1: case ElementType::kS2: case ElementType::kS4: case ElementType::kU1:
    case ElementType::kU2: case ElementType::kU4: case ElementType::kF8E5M2: case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3B11FNUZ: case ElementType::kF8E5M2FNUZ: case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E4M3: case ElementType::kF8E3M4: case ElementType::kF4E2M1FN: case ElementType::kF8E8M0FNU:
      throw UserError(StrCat("element type ", ElementTypeName(type),
                             " is not supported by this operation (it can be parsed, printed, partitioned, "
                             "moved and converted, but not computed on)"));
    default: break;
  }
  InternalError(__FILE__, __LINE__, "DispatchElementType on a non-array element type");
}

}  // namespace gspmd
