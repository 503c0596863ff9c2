"""python3 -m gspmd.oracle: check generated programs against XLA, replay reproducers, make them tests.

    python3 -m gspmd.oracle --seeds 0:200 [--devices 8] [--out DIR]     # exit 0 iff all agree
    python3 -m gspmd.oracle --seeds 1000:                                # soak: until stopped
    python3 -m gspmd.oracle --replay DIR [DIR ...]                       # saved reproducers again
    python3 -m gspmd.oracle --add-test NAME DIR [--xfail REASON]         # DIR -> tests/data/oracle/NAME
    python3 -m gspmd.oracle --show SEED                                  # a program's spec and StableHLO

Also runs as a script (python3 python/gspmd/oracle/__main__.py ...) where the package is not built.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
from typing import Optional

if __package__ in (None, ""):                     # run as a script: import this folder as `oracle`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "oracle"


def _parse_seeds(text: str) -> tuple[int, Optional[int]]:
    start, sep, end = text.partition(":")
    if not sep:
        return int(text), int(text) + 1
    return int(start or 0), (int(end) if end else None)


def _arguments(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m gspmd.oracle", description=__doc__.splitlines()[0])
    p.add_argument("--seeds", help="START:END (END excluded), START: to run until stopped, or one seed")
    p.add_argument("--devices", type=int, default=8, help="devices of the simulated machine (default 8)")
    p.add_argument("--out", help="write a reproducer folder for each failure here")
    p.add_argument("--exports", default="shardy,gspmd", help="JAX export paths to check (default: shardy,gspmd)")
    p.add_argument("--backend", default="cli", choices=["cli", "package"],
                   help="gspmd through its CLI (default; crashes are seen as such) or the package in-process")
    p.add_argument("--minimize", action="store_true", help="shrink each failure before saving it (needs --out)")
    p.add_argument("--timeout", type=float, default=120, help="seconds before a gspmd command counts as hung")
    p.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    p.add_argument("--spec", help="check the program of a saved spec.json instead of --seeds")
    p.add_argument("--replay", nargs="+", metavar="DIR", help="check saved reproducer folders again (no JAX)")
    p.add_argument("--add-test", nargs=2, metavar=("NAME", "DIR"), help="copy a reproducer to tests/data/oracle/NAME")
    p.add_argument("--xfail", help="with --add-test: the test expects the failure (strict), for this reason")
    p.add_argument("--show", type=int, metavar="SEED", help="print the spec and the StableHLO of SEED")
    args = p.parse_args(argv)
    if sum(x is not None for x in (args.seeds, args.spec, args.replay, args.add_test, args.show)) != 1:
        p.error("give one of --seeds, --spec, --replay, --add-test, --show")
    if args.minimize and not args.out:
        p.error("--minimize needs --out DIR")
    return args


def _start_jax(devices: int):
    """JAX on `devices` CPU devices (XLA_FLAGS must say so before JAX starts)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={devices}").strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    if jax.device_count() < devices:
        sys.exit(f"error: JAX sees {jax.device_count()} devices, --devices {devices} needs as many "
                 f"(XLA_FLAGS={os.environ.get('XLA_FLAGS')})")
    return jax


class Tally:
    """Counts and lists what the run found; prints the contract's summary line."""

    def __init__(self):
        self.count = collections.Counter()
        self.comm_ok = 0
        self.failures: list[str] = []
        self.refusals: collections.Counter = collections.Counter()
        self.above: list[str] = []
        self.unknown_comm: collections.Counter = collections.Counter()
        self.invalid: list[str] = []
        self.notes: collections.Counter = collections.Counter()
        self.xla_inconsistent: list[str] = []

    def add(self, result, seconds: float) -> None:
        from .check import failure_kind

        if result.status == "invalid":
            self.invalid.append(f"seed {result.seed}: {result.worst.reason}")
            return
        self.count[result.status] += 1
        self.comm_ok += result.comm_ok
        for e in result.exports:
            if e.status in ("mismatch", "crash", "refused"):
                self.failures.append(f"seed {result.seed} {e.export}: {e.status}: {e.reason}")
            if e.status == "refused":
                self.refusals[failure_kind(e)] += 1
            if e.comm_known and not e.comm_ok:
                ratio = e.comm_ours / e.comm_xla if e.comm_xla else float("inf")
                self.above.append(f"seed {result.seed} {e.export}: {e.comm_ours:.0f} vs XLA's {e.comm_xla:.0f} "
                                  f"bytes ({ratio:.2f}x)")
            elif e.status == "equal" and not e.comm_known:
                why = next((n for n in e.notes if "unreadable" in n), "comm not counted")
                self.unknown_comm[re.sub(r"\S+\.hlo:", "FILE:", why)[:160]] += 1
            for n in e.notes:
                if n.startswith("XLA disagrees"):
                    self.xla_inconsistent.append(f"seed {result.seed} {e.export}: {n}")
                elif "unreadable" not in n and not n.startswith("["):
                    self.notes[n] += 1

    @property
    def total(self) -> int:
        return sum(self.count.values())

    def agreed(self) -> bool:
        return self.total == self.count["equal"]

    def summary(self) -> str:
        lines = []
        if self.failures:
            lines.append(f"failures ({len(self.failures)}):")
            lines += ["  " + f for f in self.failures]
        if self.refusals:
            lines.append("refusals by message:")
            lines += [f"  {n} x {m}" for m, n in self.refusals.most_common()]
        if self.above:
            lines.append(f"communication above XLA's ({len(self.above)}):")
            lines += ["  " + a for a in self.above]
        if self.unknown_comm:
            lines.append("equal programs whose communication was not compared:")
            lines += [f"  {n} x {m}" for m, n in self.unknown_comm.most_common()]
        if self.xla_inconsistent:
            lines.append(f"XLA's own exports disagreeing ({len(self.xla_inconsistent)}; not counted against gspmd):")
            lines += ["  " + x for x in self.xla_inconsistent]
        if self.notes:
            lines += [f"note: {n} x {m}" for m, n in self.notes.most_common()]
        if self.invalid:
            lines.append(f"not counted: {len(self.invalid)} programs JAX or XLA would not take (generator bugs):")
            lines += ["  " + i for i in self.invalid[:20]]
        c = self.count
        lines.append(f"{self.total} programs: {c['equal']} equal, {c['mismatch']} mismatches, {c['crash']} crashes, "
                     f"{c['refused']} refused, comm <= XLA on {self.comm_ok}")
        return "\n".join(lines)


def _check_seeds(args, jax, backend) -> int:
    from . import reduce
    from .check import check_program
    from .generate import ProgramSpec, generate

    exports = [e.strip() for e in args.exports.split(",") if e.strip()]
    if args.spec:
        with open(args.spec) as f:
            specs = iter([ProgramSpec.from_json(f.read())])
    else:
        start, end = _parse_seeds(args.seeds)
        seeds = range(start, end) if end is not None else _forever(start)
        specs = (generate(s, args.devices) for s in seeds)
    tally = Tally()
    began = time.time()
    try:
        for k, spec in enumerate(specs):
            t = time.time()
            result = check_program(spec, backend, exports, jax)
            tally.add(result, time.time() - t)
            failed = result.status not in ("equal", "invalid")
            if failed or not args.quiet:
                print(f"seed {spec.seed}: {result.status} [{time.time() - t:.1f}s] {spec.summary()}", flush=True)
                for e in result.exports:
                    print(f"  {e.line()}", flush=True)
            if failed and args.out:
                for e in result.exports:
                    if e.status in ("equal", "invalid"):
                        continue
                    if args.minimize:
                        small, check = reduce.minimize(spec, e.export, backend, jax, log=print)
                        e = check or e
                    folder = reduce.save(e, args.out)
                    print(f"  reproducer: {folder}", flush=True)
            if args.seeds and args.seeds.endswith(":") and (k + 1) % 50 == 0:
                print(f"--- after {time.time() - began:.0f} s: " + tally.summary().splitlines()[-1], flush=True)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    print(f"({time.time() - began:.0f} s)")
    print(tally.summary(), flush=True)
    return 0 if tally.agreed() else 1


def _forever(start: int):
    seed = start
    while True:
        yield seed
        seed += 1


def _replay(args, backend) -> int:
    from .check import Reference, check_reference

    tally = Tally()
    for folder in args.replay:
        ref = Reference.load(folder)
        result = check_reference(ref, backend)
        print(f"{folder}: {result.line()}", flush=True)
        from .check import ProgramCheck

        tally.add(ProgramCheck(ref.seed, ref.spec, [result]), 0)
    print(tally.summary())
    return 0 if tally.agreed() else 1


def _show(args, jax) -> int:
    from .check import InvalidProgram, reference_from_jax
    from .generate import generate

    spec = generate(args.show, args.devices)
    print(spec.to_json())
    try:
        ref = reference_from_jax(spec, args.exports.split(",")[0], jax)
    except InvalidProgram as e:
        print(f"invalid: {e}")
        return 1
    print(ref.mlir)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    if args.add_test:
        from .reduce import add_test

        dest = add_test(args.add_test[0], args.add_test[1], args.xfail)
        print(f"added {dest}")
        return 0
    from .backend import make_backend

    if args.backend == "cli":
        from .backend import CliBackend

        backend = CliBackend(timeout=args.timeout)
    else:
        backend = make_backend(args.backend)
    if args.replay:
        return _replay(args, backend)
    jax = _start_jax(args.devices)
    if args.show is not None:
        return _show(args, jax)
    return _check_seeds(args, jax, backend)


if __name__ == "__main__":
    sys.exit(main())
