#!/usr/bin/env bash
# Runs the test suite twice: the Release build in build/ (through ctest), then an
# AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/ (the test binary directly).
# Set GSPMD_SKIP_SANITIZERS=1 to run only the first part. With GSPMD_RUN_FUZZ=1 the libFuzzer
# targets then run for 60 s each (scripts/fuzz.sh; GSPMD_FUZZ_SECONDS sets the time).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${GSPMD_JOBS:-$(nproc)}"

if [ ! -f build/build.ninja ]; then
  bash scripts/build.sh
fi
cmake --build build
echo "== ctest (Release, build/) =="
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${GSPMD_SKIP_SANITIZERS:-0}" = "1" ]; then
  echo "== sanitizer build skipped (GSPMD_SKIP_SANITIZERS=1) =="
  exit 0
fi

echo "== ASan/UBSan build (build-asan/) =="
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DGSPMD_SANITIZE=ON \
  -DGSPMD_BUILD_BENCHMARKS=OFF
cmake --build build-asan --target gspmd_tests gspmd
# Tests too slow under the sanitizers to fit CI's time budget; they run in the Release pass above.
slow_tests="${GSPMD_ASAN_EXCLUDE:-}"
# The MPI tests always run in the Release pass only: they start 4-8 sanitized processes per
# case on 2 cores (minutes each), and OpenMPI's own allocations at MPI_Init/MPI_Finalize make
# LeakSanitizer fail every rank.
mpi_tests="Mpi*:Corpus/MpiCorpus*"
slow_tests="${slow_tests:+$slow_tests:}$mpi_tests"
filter="*-$slow_tests"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
echo "== gspmd_tests under ASan/UBSan (filter: $filter) =="
build-asan/tests/gspmd_tests --gtest_filter="$filter" --gtest_brief=1

# The libFuzzer pass (a third, clang-built copy of the library) is opt-in until its CI time is
# measured: GSPMD_RUN_FUZZ=1 runs it here; scripts/fuzz.sh runs it on its own.
if [ "${GSPMD_RUN_FUZZ:-0}" = "1" ]; then
  echo "== libFuzzer targets (build-fuzz/, ${GSPMD_FUZZ_SECONDS:-60} s each) =="
  bash scripts/fuzz.sh
  echo "== all tests passed (Release, ASan/UBSan, fuzzing) =="
else
  echo "== all tests passed (Release and ASan/UBSan; fuzzing: GSPMD_RUN_FUZZ=1 or scripts/fuzz.sh) =="
fi
