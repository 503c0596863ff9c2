# Precompiled headers (GSPMD_PCH): the standard library, GoogleTest, CLI11, nlohmann-json and
# the IR headers nearly every file includes are parsed once per target instead of once per
# file, which takes about a third off a clean build on CI's 2 cores (docs/performance.md, h).
# Each file still includes what it uses: configure with -DGSPMD_PCH=OFF to check that.
set(GSPMD_PCH_STANDARD
  <algorithm> <cmath> <cstdint> <cstdio> <cstring> <functional> <map> <memory> <optional>
  <set> <span> <sstream> <string> <string_view> <unordered_map> <utility> <vector>)
set(GSPMD_PCH_PROJECT
  "${CMAKE_SOURCE_DIR}/src/ir/module.h"
  "${CMAKE_SOURCE_DIR}/src/sharding/sharding.h"
  "${CMAKE_SOURCE_DIR}/src/support/diagnostic.h")

function(gspmd_precompile_headers target)
  if(NOT GSPMD_PCH)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${GSPMD_PCH_STANDARD} ${ARGN} ${GSPMD_PCH_PROJECT})
endfunction()
