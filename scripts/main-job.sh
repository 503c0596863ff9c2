#!/usr/bin/env bash
# The main job: a GShard mixture-of-experts transformer (top-2 gating, experts on every other
# layer) written by `gspmd model`, propagated and partitioned for 8 devices on a 2 (data) x 4
# (expert) mesh, learns a synthetic copy task on 8 simulated devices. Every step is checked
# against the same step on one device; the job prints loss, tokens dropped and time per step
# and the communication per step by collective kind, and ends with a one-line verdict.
set -uo pipefail
cd "$(dirname "$0")/.."
gspmd="${GSPMD_BINARY:-build/gspmd}"
steps="${GSPMD_STEPS:-150}"
out_dir="${1:-$(mktemp -d /tmp/gspmd-main-job.XXXXXX)}"

if [ -z "${GSPMD_BINARY:-}" ] && [ ! -x "$gspmd" ]; then
  # A fresh checkout: build the CLI alone (tests and benchmarks are scripts/build.sh's).
  echo "== building $gspmd (the CLI only; scripts/build.sh builds the tests and benchmarks too) =="
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
  cmake --build build --target gspmd || exit 1
  echo
fi
if [ ! -x "$gspmd" ]; then
  echo "error: $gspmd not found (expected a built CLI; run: bash scripts/build.sh)" >&2
  exit 1
fi
mkdir -p "$out_dir"
model="$out_dir/gshard_moe.hlo"
start_ns=$(date +%s%N)

echo "== gspmd model gshard_moe -> $model =="
"$gspmd" model gshard_moe --set layers=4 --set d_model=64 --set head_dim=8 --set d_ff=128 \
  --set expert_hidden=128 --set experts=8 --set batch=16 --set groups=16 --set seq=16 --set vocab=16 \
  --mesh data=2,expert=4 -o "$model" || exit 1
echo

echo "== gspmd train: $steps steps on 8 devices, each checked against one device =="
"$gspmd" train "$model" --steps "$steps" --check --progress lines -o "$out_dir/last" | tee "$out_dir/train.log"
status=${PIPESTATUS[0]}
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
seconds=$(printf '%d.%01d' $((elapsed_ms / 1000)) $(((elapsed_ms % 1000) / 100)))
echo

loss_of() { awk -v step="$1" '$1 == "step" && index($2, step "/") == 1 { for (i = 1; i < NF; ++i) if ($i == "loss") print $(i + 1) }' "$out_dir/train.log"; }
first=$(loss_of 1)
last=$(loss_of "$steps")
if [ "$status" -ne 0 ] || [ -z "$first" ] || [ -z "$last" ]; then
  echo "verdict: FAIL: the training run stopped (exit $status) after ${seconds} s; see $out_dir/train.log"
  exit 1
fi
percent=$(awk -v a="$last" -v b="$first" 'BEGIN { printf "%.1f", 100 * a / b }')
if awk -v a="$last" -v b="$first" 'BEGIN { exit !(a <= 0.25 * b) }'; then
  echo "verdict: PASS: the GShard MoE learned the copy task on 8 devices in $steps steps (loss $first -> $last," \
       "$percent% of the first), every step matched one device, ${seconds} s"
  exit 0
fi
echo "verdict: FAIL: loss $first -> $last is $percent% of the first (expected at most 25%), ${seconds} s"
exit 1
