// MLIR locations (loc(...)) as HLO metadata: the op_name of the outermost name location and
// the file and line of the first file location, e.g.
//   loc("jit(f)/dot_general"(#loc3))   with   #loc3 = loc("model.py":12:4)
// gives metadata={op_name="jit(f)/dot_general" source_file="model.py" source_line=12}.
// Location aliases (#loc3 = loc(...)) are printed after the module, so locations are
// recorded while reading and resolved at the end.
#pragma once

#include <cstddef>
#include <map>
#include <string_view>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "frontend/stablehlo/cursor.h"
#include "ir/instruction.h"

namespace gspmd::stablehlo {

class Locations {
 public:
  // #name = loc(...): `offset` is where the text inside loc( starts.
  void AddAlias(std::string name, size_t offset) { aliases_[std::move(name)] = offset; }
  // `instruction` takes the metadata of the location whose text (inside loc(...)) is `text`
  // at `offset`.
  void Attach(Instruction* instruction, std::string_view text, size_t offset) {
    pending_.push_back({instruction, text, offset});
  }
  // Sets every attached instruction's metadata (instructions that already have metadata
  // keep it). Malformed locations are errors at their text.
  void Resolve(const Cursor& file);

 private:
  struct Info {
    std::string op_name;
    std::string file;
    int64_t line = 0;
  };
  Info Read(Cursor& cursor, int depth);
  Info ReadAlias(const Cursor& file, size_t name_pos, const std::string& name, int depth);

  std::map<std::string, size_t, std::less<>> aliases_;
  struct Pending {
    Instruction* instruction;
    std::string_view text;
    size_t offset;
  };
  std::vector<Pending> pending_;
  // By location text: JAX writes loc(#loc12) for many ops.
  std::unordered_map<std::string_view, std::string> metadata_by_text_;
};

}  // namespace gspmd::stablehlo
