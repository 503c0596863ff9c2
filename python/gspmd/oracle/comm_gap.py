"""Where our communication exceeds XLA's: per seed and export, both partitioned programs kept and each collective listed with its bytes.

    python3 python/gspmd/oracle/comm_gap.py --seeds 14010,13335 [--out DIR] [--exports shardy,gspmd]
    python3 python/gspmd/oracle/comm_gap.py --from-log /tmp/soak2.log --limit 40 --out DIR

For each program the script writes DIR/SEED/EXPORT/{stablehlo.mlir, ours.hlo, xla.hlo, collectives.txt}
and prints, for both sides, every collective (computation, name, kind, shape, group size, bytes per
device by `gspmd report`'s ring model, per execution: a loop body's collectives are marked, not
multiplied out) and the report's totals. With --from-log, the seeds are those a soak log lists
with ours above XLA (`  EXPORT: ... (comm OURS/XLA)`), in log order.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Optional

if __package__ in (None, ""):                     # run as a script: import this folder as `oracle`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "oracle"

from . import hlo_text  # noqa: E402
from .excess import collectives, explain_excess  # noqa: E402


def _root_operands(text: str) -> list[str]:
    """The names the entry root tuple takes (one name when the root is not a tuple)."""
    entry = text.find("\nENTRY ")
    for line in text[entry:].splitlines():
        if line.lstrip().startswith("ROOT "):
            m = re.search(r"\s(?:tuple)\((.*?)\)(?:,|$)", line)
            if not m:
                return [line.split("=")[0].replace("ROOT", "").strip().lstrip("%")]
            return [a.strip().split(" ")[-1].lstrip("%") for a in m.group(1).split(",")]
    return []


def _unannotated_results(mlir: str) -> list[bool]:
    """Per result of @main: whether the user left its sharding free (no sharding attribute)."""
    m = re.search(r"func\.func public @main\(.*?\)\s*->\s*\((.*?)\)\s*\{\n", mlir, re.S)
    if not m:
        m2 = re.search(r"func\.func public @main\(.*?\)\s*->\s*(tensor<[^>]*>(?: \{[^}]*\})?)", mlir, re.S)
        parts = [m2.group(1)] if m2 else []
    else:
        parts = re.split(r",\s*(?=tensor<)", m.group(1))
    return ["sharding" not in p for p in parts]


def hints(ours: str, xla: str, mlir: str, devices: int) -> list[str]:
    """Likely causes, read off the two programs (a starting point for reading them, not a verdict)."""
    found = []
    co, cx = collectives(ours, devices), collectives(xla, devices)
    if co and not cx:
        found.append("xla-none")
    gathered = {c.name for c in co if c.kind == "all-gather" and c.computation.startswith("main")}
    free = _unannotated_results(mlir)
    for k, name in enumerate(_root_operands(ours)):
        if name in gathered and k < len(free) and free[k]:
            found.append(f"free-result-{k}-gathered")
    keys = {}
    for c in co:
        keys.setdefault((c.kind, c.shape, c.group), []).append(c.computation)
    for (kind, shape, _), where in keys.items():
        if len(where) > 1 and sum(1 for c in cx if (c.kind, c.shape) == (kind, shape)) < len(where):
            found.append(f"repeated-{kind}-{shape}-in-{'+'.join(sorted(set(where)))}")
    called = sorted({c.computation for c in co if not c.computation.startswith("main")})
    if called:
        found.append("in-called-" + "+".join(called))
    return found


def output_flags(xla_hlo: str) -> str:
    """JAX's per-result allow_spmd_sharding_propagation_to_output, as XLA's program header states
    it ("false,true,false"), or ''."""
    m = re.search(r"allow_spmd_sharding_propagation_to_output=\{([a-z,]*)\}", xla_hlo[:5000])
    return m.group(1) if m else ""


def _comm_with_flags(backend, ref, flags: str) -> float:
    """Our bytes when gspmd may choose the shardings of the results JAX lets XLA choose."""
    with tempfile.TemporaryDirectory(prefix="gspmd_gap_") as tmp:
        program = os.path.join(tmp, "stablehlo.mlir")
        out = os.path.join(tmp, "ours.hlo")
        pathlib.Path(program).write_text(ref.mlir)
        done = subprocess.run([backend.binary, "partition", program, "--devices", str(ref.devices),
                               "--propagate-to-outputs", flags, "-o", out], capture_output=True, text=True)
        if done.returncode != 0:
            return -1
        report = _report(backend, pathlib.Path(out).read_text())
    return report["comm_bytes_per_device"] if report else -1


def _report(backend, text: str) -> Optional[dict]:
    r = backend.report(text)
    return r.value if r.ok else None


def gap_of(spec, export: str, backend, jax, out: Optional[str]) -> str:
    """The listing of one program in one export (and its files under `out`)."""
    from .check import InvalidProgram, reference_from_jax

    try:
        ref = reference_from_jax(spec, export, jax)
    except InvalidProgram as e:
        return f"seed {spec.seed} {export}: invalid ({e})\n"
    with tempfile.TemporaryDirectory(prefix="gspmd_gap_") as tmp:
        program = os.path.join(tmp, "stablehlo.mlir")
        pathlib.Path(program).write_text(ref.mlir)
        part = backend.partition(program, ref.devices)
    if not part.ok:
        return f"seed {spec.seed} {export}: partition {part.status}: {part.message}\n"
    ours = part.value
    xla, _ = hlo_text.rewrite_for_reading(ref.xla_hlo)
    ro, rx = _report(backend, ours), _report(backend, xla)
    co, cx = ro["comm_bytes_per_device"] if ro else -1, rx["comm_bytes_per_device"] if rx else -1
    lines = [f"seed {spec.seed} {export}: comm {co:.0f}/{cx:.0f}  {spec.summary()}",
             "  hints: " + (", ".join(hints(ours, xla, ref.mlir, ref.devices)) or "-"),
             "  reason: " + explain_excess(ours, xla, ref.devices)]
    for who, text, report in (("ours", ours, ro), ("xla", xla, rx)):
        kinds = report.get("comm_bytes_by_kind", {}) if report else {}
        lines.append(f"  {who}: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(kinds.items())))
        for c in collectives(text, ref.devices):
            lines.append("    " + c.line())
    free = output_flags(ref.xla_hlo)
    if free and "true" in free:
        lines.insert(1, f"  with JAX's output flags ({free}): ours {_comm_with_flags(backend, ref, free):.0f}")
    listing = "\n".join(lines) + "\n"
    if out:
        folder = pathlib.Path(out) / str(spec.seed) / export
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "stablehlo.mlir").write_text(ref.mlir)
        (folder / "ours.hlo").write_text(ours)
        (folder / "xla.hlo").write_text(xla)
        (folder / "collectives.txt").write_text(listing)
    return listing


def hints_of_saved(folder: str) -> str:
    """The hints line of a program kept by an earlier run (DIR/SEED/EXPORT), without JAX."""
    path = pathlib.Path(folder)
    ours = (path / "ours.hlo").read_text()
    m = re.search(r"num_partitions=(\d+)", ours)
    devices = int(m.group(1)) if m else 1
    return ", ".join(hints(ours, (path / "xla.hlo").read_text(), (path / "stablehlo.mlir").read_text(), devices)) or "-"


def seeds_from_log(path: str) -> list[tuple[int, str]]:
    """(seed, export) of every export a soak log lists with ours above XLA."""
    found, seed = [], None
    for line in open(path):
        m = re.match(r"seed (\d+):", line)
        if m:
            seed = int(m.group(1))
            continue
        m = re.match(r"\s+(\w+): .*\(comm (\d+)/(\d+)\)\s*$", line)
        if m and seed is not None and int(m.group(2)) > int(m.group(3)):
            found.append((seed, m.group(1)))
    return found


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", help="comma-separated seeds, or START:END")
    p.add_argument("--from-log", help="a soak log: the exports it lists with ours above XLA")
    p.add_argument("--limit", type=int, default=0, help="with --from-log: at most this many exports")
    p.add_argument("--exports", default="shardy,gspmd")
    p.add_argument("--devices", type=int, default=8)
    p.add_argument("--out", help="keep the programs here")
    p.add_argument("--hints", help="print the hints of the programs kept under this folder (no JAX)")
    args = p.parse_args(argv)
    if args.hints:
        for folder in sorted(pathlib.Path(args.hints).glob("*/*/ours.hlo")):
            print(f"{folder.parent.parent.name} {folder.parent.name}: {hints_of_saved(str(folder.parent))}")
        return 0
    exports = [e for e in args.exports.split(",") if e]
    todo: list[tuple[int, str]] = []
    if args.from_log:
        todo = [(s, e) for s, e in seeds_from_log(args.from_log) if e in exports]
        if args.limit:
            todo = todo[:args.limit]
    elif args.seeds and ":" in args.seeds:
        a, b = args.seeds.split(":")
        todo = [(s, e) for s in range(int(a), int(b)) for e in exports]
    elif args.seeds:
        todo = [(int(s), e) for s in args.seeds.split(",") for e in exports]
    else:
        p.error("give --seeds or --from-log")

    from .__main__ import _start_jax
    from .backend import CliBackend
    from .generate import generate

    jax = _start_jax(args.devices)
    backend = CliBackend()
    for seed, export in todo:
        print(gap_of(generate(seed, args.devices), export, backend, jax, args.out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
