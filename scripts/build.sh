#!/usr/bin/env bash
# Configures (CMake, Ninja, Release) into build/ and builds what the Release pass of
# scripts/test.sh needs: the library, the CLI, the MPI tests and the Python module. The other
# tests run in the sanitizer build (scripts/test.sh builds it) and scripts/bench.sh builds the
# benchmarks; GSPMD_BUILD_ALL=1 builds everything here (build/tests/gspmd_tests too), as
# `ninja -C build` does.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${GSPMD_BUILD_DIR:-build}"
# The Python package's extension module is built here too when .venv/ (scripts/install-python.sh)
# has nanobind: it links the same library, compiled once.
python_args=()
if [ -x .venv/bin/python ]; then
  python_args=(-DPython_EXECUTABLE="$PWD/.venv/bin/python")
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${python_args[@]}"
if [ "${GSPMD_BUILD_ALL:-0}" = "1" ]; then
  cmake --build "$build_dir" -- ${GSPMD_JOBS:+-j "$GSPMD_JOBS"}
  echo "built $build_dir/gspmd, $build_dir/tests/gspmd_tests, $build_dir/tests/gspmd_mpi_tests and the benchmarks"
else
  cmake --build "$build_dir" --target gspmd_release_suite -- ${GSPMD_JOBS:+-j "$GSPMD_JOBS"}
  echo "built $build_dir/gspmd, $build_dir/tests/gspmd_mpi_tests and $build_dir/python/gspmd (when .venv/ exists)"
fi
