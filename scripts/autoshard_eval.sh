#!/usr/bin/env bash
# Runs `gspmd autoshard` on the papers' models at full size, written with no annotations
# (`gspmd model --set sharding=none`), and prints per case the found plan's simulated step time
# beside the best standard recipe autoshard priced (same simulator, chip and precision), whether
# it fits, the solve time and the peak resident memory of the search. One case at a time.
#   bash scripts/autoshard_eval.sh [CASES] [LIMIT]
# CASES: dense (the dense-1t shape at 128, 512 and 2048 cores, f32 and mixed bf16), moe (the
# six GShard presets on their own meshes), depth (dense-1t on 2048 devices at 12, 36 and 128
# layers), or all (default); LIMIT: --time-limit in seconds (default 60). GSPMD selects the
# binary (default build/gspmd).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cases="${1:-all}"
limit="${2:-60}"
gspmd="${GSPMD:-$here/build/gspmd}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# run NAME DEVICES MODEL_ARGS... -- AUTOSHARD_ARGS...
run() {
  local name="$1" devices="$2"
  shift 2
  local model_args=() autoshard_args=()
  while [ "$1" != "--" ]; do model_args+=("$1"); shift; done
  shift
  autoshard_args=("$@")
  "$gspmd" model "${model_args[@]}" --set sharding=none -o "$work/step.hlo"
  /usr/bin/time -f '%M' -o "$work/rss" "$gspmd" autoshard "$work/step.hlo" --devices "$devices" \
    --time-limit "$limit" --json "${autoshard_args[@]}" >"$work/out.json" 2>"$work/err" || {
    printf '%-34s error: %s\n' "$name" "$(tail -1 "$work/err")"
    return 0
  }
  python3 - "$name" "$work/out.json" "$(cat "$work/rss")" <<'PY'
import json, sys
name, path, rss_kib = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(path))
recipes = [r for r in d["recipes"] if "step_time_s" in r and r["fits_memory"]]
best = min(recipes, key=lambda r: r["step_time_s"]) if recipes else None
ratio = f'{d["step_time_s"] / best["step_time_s"]:.3f}' if best else "-"
recipe = f'{best["recipe"].replace("sharding=", "").replace(" opt_state_sharding=", "/")} {best["mesh"]} {best["step_time_s"]:.3f}' if best else "(none fits)"
searched = sum(1 for m in d["meshes"] if m["evaluations"] > 0)
remat = " remat=layer" if d.get("remat") == "layer" else ""
print(f'| {name} | {d["mesh"]}{remat} | {d["step_time_s"]:.3f} s | {100 * d["mfu"]:.1f}% | {d["peak_bytes_per_device"] / 2**30:.2f} GiB '
      f'| {"yes" if d["fits_memory"] else "no"} | {recipe} s | {ratio} | {d["solve_time_s"]:.1f} s | {searched}/{len(d["meshes"])} '
      f'| {d["evaluations"]} | {rss_kib / 2**20:.2f} GB |')
PY
}

echo "| case | mesh | step | MFU | peak | fits | best recipe (priced by autoshard) | ratio | solve | meshes searched | plans | RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
if [ "$cases" = all ] || [ "$cases" = dense ]; then
  for precision in f32 bf16; do
    extra=()
    if [ "$precision" = bf16 ]; then extra=(--mixed-precision bf16); fi
    run "dense 128 cores, 8 layers, $precision" 128 --preset dense-1t --set layers=8 --set batch=64 --mesh x=8,y=16 -- "${extra[@]}"
    run "dense 512 cores, 32 layers, $precision" 512 --preset dense-1t --set layers=32 --set batch=128 --mesh x=16,y=32 -- "${extra[@]}"
    run "dense 2048 cores, 128 layers, $precision" 2048 --preset dense-1t -- "${extra[@]}"
  done
fi
if [ "$cases" = all ] || [ "$cases" = moe ]; then
  for preset in gshard-128e-12l gshard-128e-36l gshard-512e-12l gshard-512e-36l gshard-2048e-12l gshard-2048e-36l; do
    experts="${preset#gshard-}"
    experts="${experts%%e-*}"
    run "$preset" "$experts" --preset "$preset" -- --mesh "data=1,expert=$experts"
  done
fi
if [ "$cases" = all ] || [ "$cases" = depth ]; then
  for layers in 12 36 128; do
    run "dense 2048 cores, $layers layers, x=32,y=64" 2048 --preset dense-1t --set layers=$layers -- --mesh x=32,y=64
  done
fi
