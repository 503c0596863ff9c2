#!/usr/bin/env bash
# Configures (CMake, Ninja, Release) into build/ and builds what the Release pass of
# scripts/test.sh needs: the library, the CLI, the MPI tests and the benchmarks. The other
# tests run in the sanitizer build (scripts/test.sh builds it); GSPMD_BUILD_ALL=1 also builds
# them here (build/tests/gspmd_tests), as `ninja -C build` does.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${GSPMD_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
if [ "${GSPMD_BUILD_ALL:-0}" = "1" ]; then
  cmake --build "$build_dir" -- ${GSPMD_JOBS:+-j "$GSPMD_JOBS"}
  echo "built $build_dir/gspmd, $build_dir/tests/gspmd_tests, $build_dir/tests/gspmd_mpi_tests and the benchmarks"
else
  cmake --build "$build_dir" --target gspmd_release_suite -- ${GSPMD_JOBS:+-j "$GSPMD_JOBS"}
  echo "built $build_dir/gspmd, $build_dir/tests/gspmd_mpi_tests and the benchmarks"
fi
