#!/usr/bin/env bash
# Runs `gspmd autoshard --iopddl` on every IOPDDL instance at its contest time limit (one at a
# time) and prints cost / best submitted cost / ratio / time per instance, then the geometric
# mean of the ratios. Each answer is checked by `gspmd autoshard`'s own checker (the JSON
# line's "feasible").
#   bash scripts/iopddl_eval.sh [DIR] [SCALE]
# DIR holds asplos-2025-iopddl-*.json.gz and best.tsv (default ../shared/iopddl); SCALE
# multiplies every time limit (default 1; e.g. 0.25 while developing). GSPMD selects the
# binary (default build/gspmd); ANSWERS=DIR keeps each run's output as DIR/NAME.out.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$here/../shared/iopddl}"
scale="${2:-1}"
gspmd="${GSPMD:-$here/build/gspmd}"
printf '%-9s %16s %16s %8s %8s %7s %9s %s\n' instance cost best ratio limit_s time_s reduced feasible
tail -n +2 "$dir/best.tsv" | while IFS=$'\t' read -r name best team limit; do
  file="$dir/asplos-2025-iopddl-$name.json.gz"
  seconds=$(python3 -c "print($limit * $scale)")
  output=$("$gspmd" autoshard --iopddl "$file" --time-limit "$seconds" --json)
  json="${output%%$'\n'*}"
  if [ -n "${ANSWERS:-}" ]; then mkdir -p "$ANSWERS" && printf '%s\n' "$output" > "$ANSWERS/$name.out"; fi
  python3 - "$name" "$best" "$seconds" "$json" <<'PY'
import json, sys
name, best, limit, line = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
d = json.loads(line)
ratio = int(d["cost"]) / best
print(f'{name:<9} {d["cost"]:>16} {best:>16} {ratio:8.4f} {limit:8.1f} {d["seconds"]:7.1f} {d["reduced_nodes"]:9d} {d["feasible"]}')
PY
done | tee /tmp/iopddl_eval.$$.txt
python3 - /tmp/iopddl_eval.$$.txt <<'PY'
import math, sys
ratios = [float(line.split()[3]) for line in open(sys.argv[1]) if line.strip()]
print(f"geometric mean of cost / best: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.4f} over {len(ratios)} instances")
PY
rm -f /tmp/iopddl_eval.$$.txt
