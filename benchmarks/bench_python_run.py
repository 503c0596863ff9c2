"""Program.run from Python against the in-process run the CLI does, on an already-partitioned step.

Both sides run the same per-device program (partitioned once) on the same inputs, the C++ side
as `gspmd run --per-device --like` does it (bench_python_run.cpp: api::Run timed in-process, one
Google Benchmark repetition per run), the Python side as ``per_device.run(*arrays)``: numpy
arrays in, numpy arrays out. Rounds alternate between the two so both see the same machine; the
ratio of medians is the Python overhead. Beside wall time both sides report the process CPU time of
each run (every device thread's; Google Benchmark's process CPU time on the C++ side,
``time.process_time`` on the Python side), steadier than wall time on a shared machine.

    PYTHONPATH=build/python .venv/bin/python benchmarks/bench_python_run.py [--rounds 5] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import gspmd

REPO = pathlib.Path(__file__).resolve().parents[1]
_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
DEFAULT = REPO / "benchmarks" / "data" / "transformer_train_32l" / "pre.hlo"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", type=pathlib.Path, default=DEFAULT)
    parser.add_argument("--baseline", type=pathlib.Path, default=REPO / "build" / "benchmarks" / "bench_python_run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    program = gspmd.load(args.program)
    per_device = program.partition()
    rng = np.random.default_rng(0)
    arrays = [(rng.standard_normal(p.shape) * 0.02).astype(p.dtype) for p in program.parameters]
    print(f"{args.program}: {len(arrays)} inputs, {sum(a.nbytes for a in arrays) / 2**20:.1f} MiB; "
          f"{per_device.num_partitions} devices")

    python_times: list[float] = []
    cpp_times: list[float] = []
    python_cpu: list[float] = []
    cpp_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as inputs:
        for i, array in enumerate(arrays):
            np.save(f"{inputs}/in{i}.npy", array)
        per_device.run(*arrays)  # warm-up
        for round_ in range(args.rounds):
            env = dict(os.environ, GSPMD_BENCH_HLO=str(args.program), GSPMD_BENCH_INPUTS=inputs)
            result = subprocess.run([str(args.baseline), f"--benchmark_repetitions={args.repeats}",
                                     "--benchmark_format=json"], check=True, capture_output=True, text=True, env=env)
            entries = [entry for entry in json.loads(result.stdout)["benchmarks"] if entry.get("run_type") == "iteration"]
            cpp = [entry["real_time"] * _SECONDS[entry["time_unit"]] for entry in entries]
            cpp_cpu += [entry["cpu_time"] * _SECONDS[entry["time_unit"]] for entry in entries]
            py = []
            for _ in range(args.repeats):
                start, start_cpu = time.perf_counter(), time.process_time()
                per_device.run(*arrays)
                py.append(time.perf_counter() - start)
                python_cpu.append(time.process_time() - start_cpu)
            cpp_times += cpp
            python_times += py
            print(f"round {round_ + 1}: C++ median {statistics.median(cpp) * 1e3:.1f} ms, "
                  f"Python median {statistics.median(py) * 1e3:.1f} ms; CPU per run: C++ "
                  f"{statistics.median(cpp_cpu[-len(cpp):]) * 1e3:.1f} ms, "
                  f"Python {statistics.median(python_cpu[-len(py):]) * 1e3:.1f} ms")
    cpp_median = statistics.median(cpp_times)
    py_median = statistics.median(python_times)
    print(f"C++ (api::Run in-process): median {cpp_median * 1e3:.1f} ms, min {min(cpp_times) * 1e3:.1f} ms "
          f"over {len(cpp_times)} runs")
    print(f"Python (Program.run):      median {py_median * 1e3:.1f} ms, min {min(python_times) * 1e3:.1f} ms "
          f"over {len(python_times)} runs")
    print(f"ratio Python / C++: {py_median / cpp_median:.3f} (medians), {min(python_times) / min(cpp_times):.3f} (minima)")
    print(f"CPU per run: C++ median {statistics.median(cpp_cpu) * 1e3:.1f} ms, Python median "
          f"{statistics.median(python_cpu) * 1e3:.1f} ms, ratio {statistics.median(python_cpu) / statistics.median(cpp_cpu):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
