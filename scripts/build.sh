#!/usr/bin/env bash
# Configures (CMake, Ninja, Release) into build/ and builds the library, the CLI, tests and benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${GSPMD_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -- ${GSPMD_JOBS:+-j "$GSPMD_JOBS"}
echo "built $build_dir/gspmd and $build_dir/tests/gspmd_tests"
