#!/usr/bin/env bash
# Runs the whole test suite, then the fuzzers. Every test runs once:
#  1. Release (build/): the MPI tests (gspmd_mpi_tests; they start mpirun, 4-8 ranks a case),
#     then the Python package's tests (pytest tests/python, on build/python/gspmd).
#  2. clang AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/): every other test
#     (gspmd_tests), spread over one GoogleTest shard per core at a time.
#  3. the libFuzzer targets of the sanitizer build, side by side for 60 s (scripts/fuzz.sh;
#     GSPMD_FUZZ_SECONDS sets the time).
# GSPMD_SKIP_SANITIZERS=1 runs only the first part and gspmd_tests in Release instead;
# GSPMD_SKIP_FUZZ=1 leaves out the last. `ctest --test-dir build` (after `ninja -C build`)
# runs both test binaries in Release.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${GSPMD_JOBS:-$(nproc)}"

if [ ! -f build/build.ninja ]; then
  bash scripts/build.sh
fi
# The Python package's tests, on the module build/ holds (scripts/install-python.sh makes .venv/);
# JAX is required there, so the tests that compare with XLA run rather than skip.
run_python_tests() {
  if [ ! -x .venv/bin/python ]; then
    echo "== Python tests: skipped (no .venv/: scripts/install-deps.sh runs scripts/install-python.sh) =="
    return 0
  fi
  if ! ls build/python/gspmd/_gspmd*.so >/dev/null 2>&1; then
    echo "build/python/gspmd has no extension module: configure build/ with .venv/ (rm build/CMakeCache.txt; scripts/build.sh)"
    return 1
  fi
  echo "== Python tests (pytest tests/python, build/python/gspmd) =="
  PYTHONPATH="$PWD/build/python" GSPMD_REQUIRE_JAX=1 GSPMD_CLI="$PWD/build/gspmd" \
    .venv/bin/python -m pytest tests/python -q -p no:cacheprovider
}
if [ "${GSPMD_SKIP_SANITIZERS:-0}" = "1" ]; then
  cmake --build build
  echo "== ctest (Release, build/, every test; sanitizers skipped: GSPMD_SKIP_SANITIZERS=1) =="
  ctest --test-dir build --output-on-failure -j "$jobs"
  run_python_tests
  exit 0
fi
cmake --build build --target gspmd_release_suite
echo "== MPI tests (Release, build/) =="
ctest --test-dir build --output-on-failure -j "$jobs" -L '^gspmd_mpi_tests$'
run_python_tests


echo "== ASan/UBSan + libFuzzer build (clang, build-asan/) =="
# One clang build serves both: the test binary under AddressSanitizer and UBSan, and the
# libFuzzer targets (GSPMD_FUZZ=ON implies the sanitizers; scripts/fuzz.sh).
bash scripts/configure-sanitized.sh
cmake --build build-asan --target gspmd_tests gspmd fuzz_hlo_parser fuzz_npy_reader fuzz_partition
# Tests left out of the sanitizer pass (GSPMD_ASAN_EXCLUDE='Suite.Test:Other.*'): none by default.
filter="*${GSPMD_ASAN_EXCLUDE:+-$GSPMD_ASAN_EXCLUDE}"
# malloc_context_size: ASan records the stack of every allocation, 30 frames by default; 10 is
# plenty to tell which allocation a report is about and takes 15% off the sanitized tests.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:malloc_context_size=10}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# GoogleTest's sharding splits the tests into 6 x cores shards (a few slow tests would leave one
# of only `cores` shards running alone: with 3 x cores the last shard, holding several of the
# ~30 s autoshard tests, ran alone for 4 minutes), run `cores` at a time; the tests already run
# side by side under ctest -j. Each shard's output goes to its log, shown when it fails.
shards=$((6 * jobs))
echo "== gspmd_tests under ASan/UBSan: $shards shards, $jobs at a time (filter: $filter) =="
rm -f build-asan/asan_shard_*.log build-asan/asan_shard_*.rc
run_shard() {
  GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$1" \
    build-asan/tests/gspmd_tests --gtest_filter="$filter" --gtest_brief=1 >"build-asan/asan_shard_$1.log" 2>&1
  echo $? >"build-asan/asan_shard_$1.rc"
}
for ((shard = 0; shard < shards; ++shard)); do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_shard "$shard" &
done
wait
asan_status=0
for ((shard = 0; shard < shards; ++shard)); do
  if [ "$(cat "build-asan/asan_shard_$shard.rc" 2>/dev/null)" = "0" ]; then
    grep -E '^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \]' "build-asan/asan_shard_$shard.log" | tr '\n' ' '
    echo
  else
    echo "ASan/UBSan shard $shard FAILED (build-asan/asan_shard_$shard.log):"
    tail -n 150 "build-asan/asan_shard_$shard.log"
    asan_status=1
  fi
done
[ "$asan_status" -eq 0 ] || exit 1

# A short libFuzzer run of every target (GSPMD_FUZZ_SECONDS each, 60 by default); soak runs
# are documented in scripts/fuzz.sh. GSPMD_SKIP_FUZZ=1 leaves it out.
if [ "${GSPMD_SKIP_FUZZ:-0}" = "1" ]; then
  echo "== all tests passed (Release and ASan/UBSan; fuzzing skipped: GSPMD_SKIP_FUZZ=1) =="
else
  echo "== libFuzzer targets (build-asan/, side by side for ${GSPMD_FUZZ_SECONDS:-60} s) =="
  bash scripts/fuzz.sh
  echo "== all tests passed (Release, ASan/UBSan, fuzzing) =="
fi
