#!/usr/bin/env bash
# Configures (CMake, Ninja, Release) into build/ and builds what the Release pass of
# scripts/test.sh needs: the library, the CLI and the MPI tests. The other tests run in the
# sanitizer build (scripts/test.sh builds it) and scripts/bench.sh builds the benchmarks;
# GSPMD_BUILD_ALL=1 builds everything here (build/tests/gspmd_tests too), as `ninja -C build` does.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${GSPMD_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
if [ "${GSPMD_BUILD_ALL:-0}" = "1" ]; then
  cmake --build "$build_dir" -- ${GSPMD_JOBS:+-j "$GSPMD_JOBS"}
  echo "built $build_dir/gspmd, $build_dir/tests/gspmd_tests, $build_dir/tests/gspmd_mpi_tests and the benchmarks"
else
  cmake --build "$build_dir" --target gspmd_release_suite -- ${GSPMD_JOBS:+-j "$GSPMD_JOBS"}
  echo "built $build_dir/gspmd and $build_dir/tests/gspmd_mpi_tests"
fi
