#!/usr/bin/env bash
# Configures build-asan/: clang, Debug at -O1, AddressSanitizer + UndefinedBehaviorSanitizer and
# libFuzzer's coverage instrumentation (GSPMD_FUZZ=ON), without the Python module (its tests run
# in Release). scripts/test.sh runs the tests from it and scripts/fuzz.sh the fuzz targets. Extra
# CMake arguments are passed through.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build-asan/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DGSPMD_FUZZ=ON -DGSPMD_BUILD_BENCHMARKS=OFF \
    -DGSPMD_BUILD_PYTHON=OFF "$@"
fi
