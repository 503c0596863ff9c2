"""python3 -m gspmd.oracle: check generated programs against XLA, replay reproducers, make them tests.

    python3 -m gspmd.oracle --seeds 0:200 [--devices 8] [--out DIR]     # exit 0 iff all agree
    python3 -m gspmd.oracle --seeds 1000:                                # soak: until stopped
    python3 -m gspmd.oracle --replay DIR [DIR ...]                       # saved reproducers again
    python3 -m gspmd.oracle --add-test NAME DIR [--xfail REASON]         # DIR -> tests/data/oracle/NAME
    python3 -m gspmd.oracle --show SEED                                  # a program's spec and StableHLO

The programs run in a worker process (JAX and XLA stay loaded from one program to the next); if
XLA itself aborts on a program, the worker dies, the program is listed as XLA's crash and a new
worker goes on from the next seed. Also runs as a script (python3 python/gspmd/oracle/__main__.py
...) where the package is not built.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Optional

if __package__ in (None, ""):                     # run as a script: import this folder as `oracle`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "oracle"

from .tally import Tally  # noqa: E402

RESULT = "@@result "
START = "@@start "
STAGE = "@@stage "


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
    p.add_argument("--windowed-einsum", choices=["auto", "off", "always"],
                   help="passed to gspmd run and partition (cli backend): e.g. always, to check every "
                        "windowed-einsum loop against XLA's numbers")
    p.add_argument("--minimize", action="store_true", help="shrink each failure before saving it (needs --out)")
    p.add_argument("--timeout", type=float, default=120, help="seconds before a gspmd command counts as hung")
    p.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    p.add_argument("--spec", help="check the program of a saved spec.json instead of --seeds")
    p.add_argument("--replay", nargs="+", metavar="DIR", help="check saved reproducer folders again (no JAX)")
    p.add_argument("--add-test", nargs=2, metavar=("NAME", "DIR"), help="copy a reproducer to tests/data/oracle/NAME")
    p.add_argument("--xfail", help="with --add-test: the test expects the failure (strict), for this reason")
    p.add_argument("--show", type=int, metavar="SEED", help="print the spec and the StableHLO of SEED")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if sum(x is not None for x in (args.seeds, args.spec, args.replay, args.add_test, args.show)) != 1:
        p.error("give one of --seeds, --spec, --replay, --add-test, --show")
    if args.minimize and not args.out:
        p.error("--minimize needs --out DIR")
    if args.seeds:
        try:
            _parse_seeds(args.seeds)
        except ValueError:
            p.error(f"--seeds {args.seeds}: expected START:END, START: or SEED")
    return args


def _start_jax(devices: int):
    """JAX on `devices` CPU devices (XLA_FLAGS must say so before JAX starts)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={devices}").strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")      # XLA's GSPMD deprecation warning, once per compile
    import jax

    if jax.device_count() < devices:
        sys.exit(f"error: JAX sees {jax.device_count()} devices, --devices {devices} needs as many "
                 f"(XLA_FLAGS={os.environ.get('XLA_FLAGS')})")
    return jax


def _backend(args):
    from .backend import CliBackend, make_backend

    if args.backend == "cli":
        return CliBackend(timeout=args.timeout, windowed_einsum=args.windowed_einsum)
    if args.windowed_einsum:
        sys.exit("error: --windowed-einsum needs the cli backend")
    return make_backend(args.backend)


# ---------------------------------------------------------------------------------------------
# The worker: checks programs, one result line each.

def _forever(start: int):
    seed = start
    while True:
        yield seed
        seed += 1


def _work(args) -> int:
    from . import check, reduce
    from .check import check_program
    from .generate import ProgramSpec, generate

    if args.backend == "package":                   # gspmd runs in this process: say when
        check.stage_hook = lambda name: print(f"{STAGE}{name}", flush=True)

    jax = _start_jax(args.devices)
    backend = _backend(args)
    exports = [e.strip() for e in args.exports.split(",") if e.strip()]
    if args.spec:
        with open(args.spec) as f:
            specs = iter([ProgramSpec.from_json(f.read())])
    else:
        start, end = _parse_seeds(args.seeds)
        specs = (generate(s, args.devices) for s in (range(start, end) if end is not None else _forever(start)))
    for spec in specs:
        print(f"{START}{spec.seed}", flush=True)
        t = time.time()
        result = check_program(spec, backend, exports, jax)
        data = result.to_dict()
        data["seconds"] = round(time.time() - t, 2)
        if args.out and result.status not in ("equal", "invalid"):
            data["reproducers"] = []
            for e in result.exports:
                if e.status in ("equal", "invalid"):
                    continue
                if args.minimize:
                    _, smaller = reduce.minimize(spec, e.export, backend, jax, log=lambda s: print(s, flush=True))
                    e = smaller or e
                data["reproducers"].append(str(reduce.save(e, args.out)))
        print(RESULT + json.dumps(data), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# The supervisor: runs workers, restarts them past a program XLA aborted on, prints the summary.

def _print_result(data: dict, quiet: bool) -> None:
    failed = data["status"] not in ("equal", "invalid")
    if quiet and not failed:
        return
    print(f"seed {data['seed']}: {data['status']} [{data.get('seconds', 0):.1f}s] {data['summary']}", flush=True)
    for e in data["exports"]:
        print(f"  {e['line']}", flush=True)
    for folder in data.get("reproducers", []):
        print(f"  reproducer: {folder}", flush=True)


def _worker_command(args, seeds: Optional[str]) -> list[str]:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--devices", str(args.devices),
           "--exports", args.exports, "--backend", args.backend, "--timeout", str(args.timeout)]
    cmd += ["--seeds", seeds] if seeds is not None else ["--spec", args.spec]
    if args.out:
        cmd += ["--out", args.out]
    if args.minimize:
        cmd.append("--minimize")
    if args.windowed_einsum:
        cmd += ["--windowed-einsum", args.windowed_einsum]
    return cmd


def _supervise(args) -> int:
    tally = Tally()
    start, end = _parse_seeds(args.seeds) if args.seeds else (None, None)
    soak = bool(args.seeds) and end is None
    began = time.time()
    next_seed = start
    proc = None
    try:
        while True:
            seeds = None if args.spec else f"{next_seed}:{'' if end is None else end}"
            with tempfile.TemporaryFile(mode="w+") as errors:
                proc = subprocess.Popen(_worker_command(args, seeds), stdout=subprocess.PIPE, stderr=errors, text=True)
                current, stage = None, "xla"
                for line in proc.stdout:
                    if line.startswith(START):
                        current, stage = int(line[len(START):]), "xla"
                    elif line.startswith(STAGE):
                        stage = line[len(STAGE):].strip()
                    elif line.startswith(RESULT):
                        data = json.loads(line[len(RESULT):])
                        tally.add(data)
                        _print_result(data, args.quiet)
                        current = None
                        next_seed = (data["seed"] or 0) + 1
                        if soak and tally.total % 50 == 0 and tally.total:
                            print(f"--- after {time.time() - began:.0f} s: {tally.last_line()}", flush=True)
                    else:
                        print(line, end="", flush=True)
                code = proc.wait()
                proc = None
                errors.seek(0)
                stderr = errors.read()
            if current is not None and code > 0:            # a Python error: the oracle's own bug
                print(stderr[-3000:], file=sys.stderr)
                print(f"error: the oracle's worker failed on seed {current} (exit code {code})", file=sys.stderr)
                print(tally.summary(), flush=True)
                return 2
            if current is not None:                         # killed by a signal while on a program
                if stage == "gspmd":
                    tally.add_gspmd_crash(current, f"{_death(code)} in gspmd (in-process): {_last_lines(stderr, 1)}")
                else:
                    tally.add_xla_crash(current, code, stderr)
                print(f"seed {current}: the worker died in {stage} ({_death(code)}): {_last_lines(stderr, 1)}",
                      flush=True)
                if args.spec:
                    break
                next_seed = current + 1
                if end is not None and next_seed >= end:
                    break
                continue
            if code != 0:
                print(stderr[-3000:], file=sys.stderr)
                print(f"error: the oracle's worker failed ({_death(code)}) before checking a program", file=sys.stderr)
                return 2
            break
    except KeyboardInterrupt:
        if proc is not None:
            proc.kill()
        print("stopped", flush=True)
    from .generate import GENERATOR_VERSION

    print(f"({time.time() - began:.0f} s; generator version {GENERATOR_VERSION})")
    print(tally.summary(), flush=True)
    return 0 if tally.agreed() else 1


def _death(code: int) -> str:
    if code < 0:
        return signal.Signals(-code).name
    return f"exit code {code}"


def _last_lines(text: str, count: int) -> str:
    lines = [l for l in text.splitlines() if l.strip() and "GSPMD sharding propagation is going to be" not in l]
    checks = [l for l in lines if "Check failed" in l or "F0" in l[:3]]
    return " | ".join((checks or lines)[-count:])[:300]


# ---------------------------------------------------------------------------------------------

def _replay(args) -> int:
    from .check import ProgramCheck, Reference, check_reference

    backend = _backend(args)
    tally = Tally()
    for folder in args.replay:
        ref = Reference.load(folder)
        result = check_reference(ref, backend)
        print(f"{folder}: {result.line()}", flush=True)
        tally.add(ProgramCheck(ref.seed, ref.spec, [result]).to_dict())
    print(tally.summary())
    return 0 if tally.agreed() else 1


def _show(args) -> int:
    from .check import InvalidProgram, reference_from_jax
    from .generate import generate

    jax = _start_jax(args.devices)
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

        print(f"added {add_test(args.add_test[0], args.add_test[1], args.xfail)}")
        return 0
    if args.replay:
        return _replay(args)
    if args.show is not None:
        return _show(args)
    if args.worker:
        return _work(args)
    return _supervise(args)


if __name__ == "__main__":
    sys.exit(main())
