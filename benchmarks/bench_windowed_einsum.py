"""Windowed einsum against off in real runs (issue 26): a 2-D-sharded transformer layer, forward and backward, on 8 threads and under mpirun -np 8, beside the simulator's prediction.

The step is `gspmd model dense_lm` with one layer at d_model 512 (compute dominates) on the
mesh x=2,y=4, whose activation all-gathers before dots `--windowed-einsum always` turns into
loops. Each repetition runs `gspmd train --steps S --json` once per mode and backend, the
modes alternating (off, always, off, always, ...) so machine load falls on both alike; a run's
time is the median of its steps after the first. The table gives, per backend, the median over
repetitions of each mode and the ratio always / off, and the simulator's ratio for the same
program on benchmarks/data/host-8-on-2-cores.json (this machine as 8 devices on 2 cores). The
first step's losses of both modes must agree (relative 1e-5), so both time the same computation;
later steps may drift further apart, as training amplifies the rounding of sums taken in
another order (a contracting window's partial dots).

On a 2-core machine there is no core to spare for a transfer while the dots run: little of the
overlap the loop is for can happen here, and the record says so rather than tune for it.

    .venv/bin/python benchmarks/bench_windowed_einsum.py [--repeats N] [--steps S] [--no-mpi] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
CHIP = REPO / "benchmarks" / "data" / "host-8-on-2-cores.json"
MODEL = ["dense_lm", "--set", "layers=1", "--set", "d_model=512", "--set", "d_ff=2048", "--set", "head_dim=64",
         "--set", "seq=128", "--set", "vocab=512", "--mesh", "x=2,y=4"]
MODES = ("off", "always")


def gspmd_binary() -> str:
    for candidate in (os.environ.get("GSPMD_BINARY"), str(REPO / "build" / "gspmd"), shutil.which("gspmd")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("error: no gspmd binary (build it, or set GSPMD_BINARY)")


def train(binary: str, step: str, mode: str, steps: int, mpi: bool) -> tuple[float, list[float]]:
    """(median seconds of the steps after the first, the losses) of one `gspmd train` run."""
    command = [binary, "train", step, "--steps", str(steps), "--windowed-einsum", mode, "--json", "--progress", "quiet"]
    if mpi:
        command = ["mpirun", "--oversubscribe", "--bind-to", "none", "--allow-run-as-root", "-np", "8", *command,
                   "--backend", "mpi"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    record = json.loads(done.stdout[done.stdout.index("{"):])
    seconds = [s["seconds"] for s in record["per_step"]][1:]
    return statistics.median(seconds), [s["loss"] for s in record["per_step"]]


def predicted(binary: str, step: str, mode: str) -> float:
    done = subprocess.run([binary, "simulate", step, "--chip", str(CHIP), "--windowed-einsum", mode, "--json"],
                          capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout)["step_time_s"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="runs per mode and backend (default 3)")
    p.add_argument("--steps", type=int, default=4, help="steps per run, the first not timed (default 4)")
    p.add_argument("--no-mpi", action="store_true", help="threads only")
    p.add_argument("--out", help="also write the table (markdown) here")
    args = p.parse_args()
    binary = gspmd_binary()
    backends = ["threads"] + ([] if args.no_mpi or not shutil.which("mpirun") else ["mpi"])
    with tempfile.TemporaryDirectory(prefix="bench_windowed_") as tmp:
        step = os.path.join(tmp, "layer.hlo")
        subprocess.run([binary, "model", *MODEL, "-o", step], check=True, capture_output=True)
        times = {(b, m): [] for b in backends for m in MODES}
        losses = {}
        for _ in range(args.repeats):
            for backend in backends:
                for mode in MODES:
                    seconds, run_losses = train(binary, step, mode, args.steps, backend == "mpi")
                    times[(backend, mode)].append(seconds)
                    losses.setdefault(mode, run_losses)
        off, on = losses["off"], losses["always"]
        if not off or not on or abs(off[0] - on[0]) > 1e-5 * max(abs(off[0]), 1e-30):
            sys.exit(f"error: first-step losses differ between off and always: {off} against {on}")
        sim = {m: predicted(binary, step, m) for m in MODES}
    cores = os.cpu_count()
    lines = [f"| backend ({cores} cores) | off (s/step) | always (s/step) | always / off | simulated always / off |",
             "| --- | --- | --- | --- | --- |"]
    for backend in backends:
        a = statistics.median(times[(backend, "off")])
        b = statistics.median(times[(backend, "always")])
        lines.append(f"| {backend} x 8 | {a:.3f} | {b:.3f} | {b / a:.2f} | {sim['always'] / sim['off']:.2f} |")
    lines.append(f"\nsimulated step on {CHIP.stem}: off {sim['off'] * 1e3:.0f} ms, always {sim['always'] * 1e3:.0f} ms; "
                 f"{args.repeats} runs x {args.steps} steps per mode and backend; first-step losses equal")
    text = "\n".join(lines)
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
