#!/usr/bin/env bash
# The main job: runs XLA's partitioned one-layer transformer training step (tests/data/corpus/
# gspmd/transformer_train_1l) on 8 simulated devices and checks every output against JAX's.
set -euo pipefail
cd "$(dirname "$0")/.."
gspmd="${GSPMD_BINARY:-build/gspmd}"
case_dir="tests/data/corpus/gspmd/transformer_train_1l"
out_dir="${1:-$(mktemp -d /tmp/gspmd-main-job.XXXXXX)}"
rtol="${GSPMD_RTOL:-1e-4}"

if [ ! -x "$gspmd" ]; then
  echo "error: $gspmd not found (expected a built CLI; run: bash scripts/build.sh)" >&2
  exit 1
fi

inputs=()
for i in $(seq 0 99); do
  [ -f "$case_dir/in$i.npy" ] || break
  inputs+=("$case_dir/in$i.npy")
done

echo "== gspmd run --spmd: $case_dir/partitioned.hlo on 8 devices (${#inputs[@]} inputs) =="
start_ns=$(date +%s%N)
"$gspmd" run --spmd "$case_dir/partitioned.hlo" --like "$case_dir/propagated.hlo" --devices 8 \
  -i "${inputs[@]}" -o "$out_dir" >/dev/null
end_ns=$(date +%s%N)
elapsed_ms=$(( (end_ns - start_ns) / 1000000 ))
printf 'ran in %d.%03d s; outputs in %s\n\n' $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) "$out_dir"

echo "== outputs vs JAX/XLA reference (rtol $rtol) =="
passed=0
failed=0
for expected in "$case_dir"/out*.npy; do
  name=$(basename "$expected")
  if "$gspmd" compare "$out_dir/$name" "$expected" --rtol "$rtol"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo
echo "summary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
