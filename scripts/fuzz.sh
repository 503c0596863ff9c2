#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-asan/, the sanitizer build scripts/test.sh also
# runs the tests from: ASan + UBSan + coverage) and runs the targets side by side, seeded from
# tests/data, for GSPMD_FUZZ_SECONDS seconds (default 60: the CI run).
#
#   scripts/fuzz.sh                          # CI: all targets for 60 s
#   GSPMD_FUZZ_SECONDS=3600 GSPMD_FUZZ_JOBS=2 scripts/fuzz.sh npy_reader   # soak: an hour, 2 workers
#   scripts/fuzz.sh hlo_parser               # one target
#
# Inputs that crash, hang (> 10 s), leak or run out of memory (> 2 GB) are written to
# build-asan/artifacts/ and the script fails; add each one to tests/data/fuzz/<target>/ (the
# regression test replays them) once fixed. The corpus libFuzzer grows is kept in
# build-asan/corpus/<target>/ across runs. Totals (executions, per target) are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${GSPMD_FUZZ_SECONDS:-60}"
jobs="${GSPMD_FUZZ_JOBS:-1}"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(hlo_parser npy_reader partition)

bash scripts/configure-sanitized.sh
cmake --build build-asan --target "${targets[@]/#/fuzz_}"

mkdir -p build-asan/artifacts
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The targets run side by side (each takes its share of the cores for the same wall time).
prepare_and_run() {
  local target="$1"
  local corpus="build-asan/corpus/$target"
  mkdir -p "$corpus"
  local seeds dict
  case "$target" in
    npy_reader) seeds=(tests/data -name '*.npy') ; dict=() ;;
    *) seeds=(tests/data -name '*.hlo') ; dict=(-dict=fuzz/hlo.dict) ;;
  esac
  local seed_dir="build-asan/seeds/$target"
  rm -rf "$seed_dir" && mkdir -p "$seed_dir"
  find "${seeds[@]}" -size -64k -print0 | while IFS= read -r -d '' seed; do cp "$seed" "$seed_dir/$(echo "${seed#tests/data/}" | tr / _)"; done
  for found in tests/data/fuzz/"$target"/*; do [ -f "$found" ] && cp "$found" "$seed_dir/"; done
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
              -artifact_prefix=build-asan/artifacts/"$target"- "${dict[@]}")
  if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs" -ignore_crashes=0); fi
  build-asan/fuzz/fuzz_"$target" "${args[@]}" "$corpus" "$seed_dir" >"build-asan/fuzz_$target.log" 2>&1
}
pids=()
for target in "${targets[@]}"; do
  echo "== fuzz_$target: ${seconds} s, $jobs worker(s), log build-asan/fuzz_$target.log =="
  prepare_and_run "$target" &
  pids+=($!)
done
status=0
summary=()
for i in "${!targets[@]}"; do
  target="${targets[$i]}"
  log="build-asan/fuzz_$target.log"
  if ! wait "${pids[$i]}"; then
    echo "fuzz_$target FAILED; the input is in build-asan/artifacts/, the report in $log:"
    grep -m 20 -E "ERROR|SUMMARY|invariant|Test unit written|error:" "$log" || tail -20 "$log"
    status=1
  fi
  runs=$(grep -E "stat::number_of_executed_units" "$log" | awk '{s += $2} END {print s + 0}')
  summary+=("fuzz_$target: $runs executions")
done
printf '%s\n' "${summary[@]}"
exit $status
