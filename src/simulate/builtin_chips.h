// The chip descriptions shipped in data/chips, compiled into gspmd (the generated
// builtin_chips.cpp) so that `--chip tpu-v3` works wherever the binary is.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace gspmd::simulate {

// (name, JSON text) of every data/chips/NAME.json, sorted by name.
const std::vector<std::pair<std::string_view, std::string_view>>& BuiltinChipTexts();

}  // namespace gspmd::simulate
