// MLIR attribute values as the StableHLO reader sees them: integers, floats, strings, arrays,
// dictionaries, dense<...> elements (decoded on demand), array<i64: ...>, symbol references
// and dialect attributes (#stablehlo.gather<...>, #sdy.sharding<...>, kept as their text and
// read by the op that uses them). Also the typed accessors the op converters use, which
// accept every spelling StableHLO versions print (dense<[1, 2]> : tensor<2xi64>,
// array<i64: 1, 2>, [1, 2]).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/stablehlo/cursor.h"
#include "frontend/stablehlo/types.h"
#include "ir/literal.h"
#include "ir/shape.h"

namespace gspmd::stablehlo {

struct NamedAttr;

struct Attr {
  enum class Kind : uint8_t {
    kUnit,      // a key without a value, or `unit`
    kBool,      // true / false
    kInt,       // 3 : i64
    kFloat,     // 1.5 : f32
    kString,    // "text" (decoded into `str`)
    kSymbol,    // @name (in `str`)
    kIntList,   // array<i64: 1, 2>, or a list the pretty syntax wrote ([1, 2]); in `ints`
    kArray,     // [a, b, ...] of attributes
    kDict,      // {a = 1, b}
    kDense,     // dense<...> : type (body kept as text, decoded by DenseLiteral/DenseInts)
    kDialect,   // #name<body> or #name (name in `str`, body text between the brackets)
    kEnum,      // a bare word the pretty syntax wrote (DEFAULT, LT, SIGNED)
    kType,      // a type used as an attribute
  };
  Kind kind = Kind::kUnit;
  size_t pos = 0;           // where the value starts (for errors)
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string str;
  std::string_view body;    // kDense / kDialect: the text inside the brackets
  size_t body_pos = 0;      // offset of `body` in the file
  std::vector<int64_t> ints;
  std::vector<Attr> elements;
  std::vector<NamedAttr> fields;
  Shape type;               // kDense, kType, and kInt/kFloat when typed

  const Attr* Field(std::string_view name) const;  // kDict
};

struct NamedAttr {
  std::string_view name;
  size_t pos = 0;
  Attr value;
};

// `#name = value` definitions at the top of a file: name -> offset of the value text.
using AttrAliases = std::map<std::string, size_t, std::less<>>;

struct ParseEnv {
  const AttrAliases* attr_aliases = nullptr;
  const TypeAliases* type_aliases = nullptr;
};

// One attribute value at the cursor.
Attr ParseAttr(Cursor& cursor, const ParseEnv& env);
// "{name = value, flag, ...}" (the '{' at the cursor), appended to `out`.
void ParseAttrDict(Cursor& cursor, const ParseEnv& env, std::vector<NamedAttr>& out);
// A list of integers "[1, 2, 3]" (the '[' at the cursor).
std::vector<int64_t> ParseIntList(Cursor& cursor, std::string_view what);

// ---- Reading attribute values (errors name `what`, e.g. "broadcast_dimensions") ----

// Integers of a kIntList, an array of integers, or a rank-0/1 integer dense attribute.
std::vector<int64_t> AttrInts(Cursor& cursor, const Attr& attr, std::string_view what);
// A 2-D integer dense attribute (padding, replica_groups, source_target_pairs) as rows;
// rank-1 of size 0 gives no rows.
std::vector<std::vector<int64_t>> AttrIntRows(Cursor& cursor, const Attr& attr, std::string_view what);
int64_t AttrInt(Cursor& cursor, const Attr& attr, std::string_view what);
bool AttrBool(Cursor& cursor, const Attr& attr, std::string_view what);
// A booleans list (array<i1: true, false>, dense<[true]>, [false, true]).
std::vector<bool> AttrBools(Cursor& cursor, const Attr& attr, std::string_view what);
const std::string& AttrString(Cursor& cursor, const Attr& attr, std::string_view what);
// The value word of an enum: `DEFAULT` (pretty), #stablehlo<precision DEFAULT>,
// #stablehlo.precision<DEFAULT>.
std::string_view AttrEnum(Cursor& cursor, const Attr& attr, std::string_view what);

// The literal of a dense<...> attribute of an array type: splats, nested lists, and hex
// data "0x..." (raw little-endian elements, or one element meaning a splat). Elements
// must fit the element type; list nesting must match the shape.
Literal DenseLiteral(Cursor& cursor, const Attr& attr);

// Integers "name = value, ..." inside a dialect attribute body such as
// #stablehlo.gather<offset_dims = [2], index_vector_dim = 2>: calls field(name, cursor) for
// each; the callback reads the value at the cursor.
template <typename Fn>
void ForEachBodyField(Cursor& cursor, const Attr& attr, Fn&& field);

template <typename Fn>
void ForEachBodyField(Cursor& outer, const Attr& attr, Fn&& field) {
  Cursor cursor(outer.text().substr(0, attr.body_pos + attr.body.size()), outer.filename());
  cursor.set_pos(attr.body_pos);
  if (cursor.AtEnd()) return;
  do {
    cursor.SkipSpace();
    size_t name_pos = cursor.pos();
    std::string_view name = cursor.ReadBareId("a field name");
    cursor.Expect('=', "'=' after the field name");
    field(name, name_pos, cursor);
  } while (cursor.TryConsume(','));
  if (!cursor.AtEnd()) cursor.ErrorExpected("',' or the end of the attribute");
}

}  // namespace gspmd::stablehlo
