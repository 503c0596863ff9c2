#!/usr/bin/env bash
# Runs the same CLI invocations (every subcommand on every corpus case, the HLO syntax tests and
# the benchmark programs) with two gspmd binaries and reports each byte difference in stdout,
# stderr, exit code or output files. For refactors that must not change what the CLI prints:
#   bash scripts/compare-cli-outputs.sh OLD/build/gspmd NEW/build/gspmd   (a worktree per side)
set -u
A=$(realpath "$1"); B=$(realpath "$2"); ROOT=$(cd "$(dirname "$0")/../tests/data" && pwd)
BENCH=$(cd "$(dirname "$0")/../benchmarks/data/transformer_train_32l" && pwd)
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
n=0; diffs=0
run() {  # name, args...
  local name=$1; shift
  for v in A B; do
    local bin=${!v}; local d=$WORK/run; rm -rf $d; mkdir -p $d
    (cd $d && timeout 300 $bin "${@//OUTDIR/$d/o}" > $d/stdout 2> $d/stderr; echo $? > $d/rc)
    rm -rf $WORK/out/$v/$name; mkdir -p $WORK/out/$v; mv $d $WORK/out/$v/$name
  done
  n=$((n+1))
  if ! diff -r $WORK/out/A/$name $WORK/out/B/$name > /dev/null; then diffs=$((diffs+1)); echo "DIFF: $name: $*"; diff -r $WORK/out/A/$name $WORK/out/B/$name | head -5; fi
}
for c in $ROOT/corpus/gspmd/* $ROOT/corpus/shardy/*; do
  k=$(basename $(dirname $c))_$(basename $c)
  ins=$(ls $c/in*.npy 2>/dev/null | sort -V)
  for f in pre.hlo stablehlo.mlir; do
    [ -f $c/$f ] || continue
    run $k.$f.parse parse $c/$f
    run $k.$f.partition partition $c/$f
    run $k.$f.explain partition $c/$f --propagate-only --explain
    run $k.$f.reportp report $c/$f --partition --json
    run $k.$f.show show $c/$f --color never
    run $k.$f.lint lint $c/$f --json
    run $k.$f.sim simulate $c/$f --chip tpu-v3 --json
    run $k.$f.eval eval $c/$f -i $ins -o OUTDIR
    run $k.$f.run run $c/$f --devices 8 -i $ins -o OUTDIR
  done
  [ -f $c/partitioned.hlo ] && run $k.report report $c/partitioned.hlo --json && run $k.showpd show $c/partitioned.hlo --color never && run $k.simpd simulate $c/partitioned.hlo --chip a100
  [ -f $c/partitioned.hlo ] && run $k.html report $c/pre.hlo --partition --html OUTDIR.html
done
for f in $ROOT/hlo_syntax/*; do run syntax.$(basename $f) parse $f; run syntax.$(basename $f).part partition $f; done
run model.moe model gshard_moe --mesh data=2,expert=4 -o OUTDIR.hlo
"$A" model --preset gshard-128e-12l -o "$WORK/preset.hlo" >/dev/null
run preset.sim simulate "$WORK/preset.hlo" --chip tpu-v3 --json
run preset.lint lint "$WORK/preset.hlo"
for f in pre.hlo propagated.hlo; do run bench.$f partition "$BENCH/$f"; done
run bench.report report "$BENCH/pre.hlo" --partition --json
run bench.sim simulate "$BENCH/pre.hlo" --chip tpu-v4 --json
run err.nofile partition /nonexistent.hlo
run err.badchip simulate $ROOT/corpus/gspmd/dp_matmul/pre.hlo --chip nochip
echo "$n invocations: $diffs differ"
