// StrCat: text and integers take the direct path, everything else prints as `ostream <<` does.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

template <typename... Parts>
std::string Streamed(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

TEST(StrCat, TextAndIntegersPrintAsStreamed) {
  const std::string name = "dot.3";
  const std::string_view view = "f32[4,8]";
  const char* null_text = nullptr;
  EXPECT_EQ(StrCat("%", name, " has ", view, ": ", 3, ' ', -7L, " ", 12u, " ", std::numeric_limits<int64_t>::min(),
                   " ", std::numeric_limits<uint64_t>::max(), null_text),
            Streamed("%", name, " has ", view, ": ", 3, ' ', -7L, " ", 12u, " ", std::numeric_limits<int64_t>::min(),
                     " ", std::numeric_limits<uint64_t>::max()));
  EXPECT_EQ(StrCat(), "");
}

TEST(StrCat, OtherPartsGoThroughTheStream) {
  const int8_t small = 65;  // prints as the character 'A', as ostream does
  EXPECT_EQ(StrCat("x", small, true, 1.5, 0.1f, 1e30), Streamed("x", small, true, 1.5, 0.1f, 1e30));
  EXPECT_EQ(StrCat(1.0 / 3), "0.333333");
}

}  // namespace
}  // namespace gspmd
