#!/usr/bin/env bash
# The main job: the one-layer transformer training step JAX handed to XLA (tests/data/corpus/
# gspmd/transformer_train_1l/pre.hlo, shardings only on parameters and results) is propagated,
# partitioned for 8 devices and run on 8 simulated devices; every output is checked against
# JAX's, and our communication is compared with XLA's own partitioned program.
set -euo pipefail
cd "$(dirname "$0")/.."
gspmd="${GSPMD_BINARY:-build/gspmd}"
case_dir="${GSPMD_CASE:-tests/data/corpus/gspmd/transformer_train_1l}"
out_dir="${1:-$(mktemp -d /tmp/gspmd-main-job.XXXXXX)}"
rtol="${GSPMD_RTOL:-1e-4}"

if [ ! -x "$gspmd" ]; then
  echo "error: $gspmd not found (expected a built CLI; run: bash scripts/build.sh)" >&2
  exit 1
fi
mkdir -p "$out_dir"

inputs=()
for i in $(seq 0 99); do
  [ -f "$case_dir/in$i.npy" ] || break
  inputs+=("$case_dir/in$i.npy")
done

echo "== gspmd partition: $case_dir/pre.hlo -> $out_dir/partitioned.hlo =="
"$gspmd" partition "$case_dir/pre.hlo" --devices 8 -o "$out_dir/partitioned.hlo"
ours=$("$gspmd" report "$out_dir/partitioned.hlo" --json | sed -n 's/.*"comm_bytes_per_device": *\([0-9.]*\).*/\1/p')
xla=$("$gspmd" report "$case_dir/partitioned.hlo" --json | sed -n 's/.*"comm_bytes_per_device": *\([0-9.]*\).*/\1/p')
echo "bytes sent per device: ours $ours, XLA $xla"
echo

echo "== gspmd run: $case_dir/pre.hlo on 8 devices (${#inputs[@]} inputs) =="
start_ns=$(date +%s%N)
"$gspmd" run "$case_dir/pre.hlo" --devices 8 -i "${inputs[@]}" -o "$out_dir" >/dev/null
end_ns=$(date +%s%N)
elapsed_ms=$(( (end_ns - start_ns) / 1000000 ))
printf 'propagated, partitioned and ran in %d.%03d s; outputs in %s\n\n' \
  $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) "$out_dir"

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
echo "summary: $passed passed, $failed failed; communication ours/XLA = $ours/$xla bytes per device"
[ "$failed" -eq 0 ]
awk -v a="$ours" -v b="$xla" 'BEGIN { exit !(a <= b) }' || { echo "error: we communicate more than XLA" >&2; exit 1; }
