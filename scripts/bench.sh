#!/usr/bin/env bash
# Runs every benchmark binary in build/benchmarks/ (Release build) and keeps JSON results in
# build/bench-results/. Extra arguments go to each binary, e.g. --benchmark_filter=Dot.
# GSPMD_BENCH=bench_partition runs only that binary (bench_interp_dot, bench_allreduce,
# bench_partition: partition time of transformer_train_32l on 8 vs 2048 devices;
# bench_mpi_collectives, bench_mpi_train: run under mpirun -np 8).
set -euo pipefail
cd "$(dirname "$0")/.."
bench_dir="${GSPMD_BUILD_DIR:-build}/benchmarks"
results="${GSPMD_BUILD_DIR:-build}/bench-results"
if [ ! -f "${GSPMD_BUILD_DIR:-build}/build.ninja" ]; then
  echo "error: ${GSPMD_BUILD_DIR:-build} is not configured (expected a Release build; run: bash scripts/build.sh)" >&2
  exit 1
fi
cmake --build "${GSPMD_BUILD_DIR:-build}" --target gspmd_benchmarks
mkdir -p "$results"
found=0
for binary in "$bench_dir"/*; do
  [ -f "$binary" ] && [ -x "$binary" ] || continue
  name=$(basename "$binary")
  if [ -n "${GSPMD_BENCH:-}" ] && [ "$name" != "$GSPMD_BENCH" ]; then continue; fi
  found=1
  echo "== $name =="
  launcher=()
  # bench_mpi_*: MPI programs, 8 ranks (oversubscribed and unbound on a small machine; root
  # allowed for this command only, as CI runs as root).
  if [[ "$name" == bench_mpi_* ]]; then
    launcher=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe --bind-to none -np 8)
  fi
  "${launcher[@]}" "$binary" --benchmark_out="$results/$name.json" --benchmark_out_format=json "$@"
done
[ "$found" -eq 1 ] || echo "no benchmark binaries in $bench_dir"
