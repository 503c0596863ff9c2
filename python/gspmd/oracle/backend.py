"""How the oracle asks gspmd to run, partition and count a program: the CLI (a process per step,
so a crash is seen as one) or the Python package in this process.

A backend has four methods, each returning an :class:`Outcome` whose status is ``ok``,
``refused`` (gspmd said no: exit code 1 with an error, or a gspmd.Error) or ``crash`` (any other
exit code, a signal, a timeout)::

    backend = CliBackend()                      # $GSPMD_BINARY, else build/gspmd of this checkout
    backend.run("f.mlir", [x, w], devices=8)    # Outcome(ok, value=[out0, out1])
    backend.partition("f.mlir", devices=8)      # Outcome(ok, value=per-device HLO text)
    backend.eval("f.mlir", [x, w])              # the interpreter on one device: Outcome(ok, value=[...])
    backend.report(hlo_text)                    # Outcome(ok, value={"comm_bytes_per_device": ...})
"""

from __future__ import annotations

import json
import ast
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["Outcome", "CliBackend", "PackageBackend", "make_backend", "find_binary"]

REPO = pathlib.Path(__file__).resolve().parents[3]


@dataclass
class Outcome:
    status: str                 # ok, refused, crash
    message: str = ""
    value: Any = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def find_binary() -> Optional[str]:
    """$GSPMD_BINARY (or $GSPMD_CLI), else build/gspmd of this checkout, else `gspmd` on PATH."""
    for name in ("GSPMD_BINARY", "GSPMD_CLI"):
        if os.environ.get(name):
            return os.environ[name]
    built = REPO / "build" / "gspmd"
    if os.access(built, os.X_OK):
        return str(built)
    return shutil.which("gspmd")


def _first_error(stderr: str) -> str:
    lines = [l for l in stderr.splitlines() if l.strip()]
    errors = [l for l in lines if "error:" in l]
    return (errors or lines or ["(no message)"])[0].strip()


def load_npy(path: str) -> np.ndarray:
    """np.load, reading bf16 with ml_dtypes: gspmd's descr ('bfloat16'), and numpy's '|V2' (what
    np.save writes for an ml_dtypes.bfloat16 array, e.g. a reproducer's saved XLA outputs)."""
    try:
        array = np.load(path)
        if array.dtype.kind == "V" and array.dtype.itemsize == 2:
            import ml_dtypes

            array = array.view(ml_dtypes.bfloat16)
        return array
    except (TypeError, ValueError):
        import ml_dtypes

        # numpy's header readers refuse the 'bfloat16' descr (and its private one is gone in
        # numpy 2.4), so the header dict is read here: its length is 2 bytes in format 1.0,
        # 4 bytes in 2.0 and 3.0.
        with open(path, "rb") as f:
            major, _ = np.lib.format.read_magic(f)
            length = int.from_bytes(f.read(2 if major == 1 else 4), "little")
            header = ast.literal_eval(f.read(length).decode("latin1"))
            data = np.frombuffer(f.read(), dtype=ml_dtypes.bfloat16)
        return data.reshape(header["shape"], order="F" if header["fortran_order"] else "C")


class CliBackend:
    """gspmd through its command line: `gspmd run`, `gspmd partition`, `gspmd report --json`."""

    name = "cli"

    def __init__(self, binary: Optional[str] = None, timeout: float = 120.0, snapshot: bool = True,
                 wait: float = 600.0, windowed_einsum: Optional[str] = None):
        """With `snapshot`, runs a private copy of the binary, so a rebuild during a long run
        neither changes what is tested nor leaves a moment with no binary; a binary that is
        missing (being linked) is waited for up to `wait` seconds. `windowed_einsum` (auto, off,
        always) is passed to `gspmd run` and `gspmd partition` as --windowed-einsum."""
        source = binary or find_binary() or str(REPO / "build" / "gspmd")
        waited = 0.0
        while not os.access(source, os.X_OK) and waited < wait:
            if waited == 0:
                print(f"oracle: waiting for {source} (being rebuilt?)", file=sys.stderr, flush=True)
            time.sleep(5)
            waited += 5
        if not os.access(source, os.X_OK):
            raise FileNotFoundError(f"no gspmd binary at {source}: build it (scripts/build.sh) or set GSPMD_BINARY")
        self.source = source
        self.binary = source
        self.partition_args = ["--windowed-einsum", windowed_einsum] if windowed_einsum else []
        self.timeout = timeout
        if snapshot:
            self._copy = tempfile.TemporaryDirectory(prefix="gspmd_oracle_bin_")
            self.binary = os.path.join(self._copy.name, "gspmd")
            shutil.copy2(source, self.binary)

    def _call(self, args: Sequence[str]) -> tuple[Outcome, str]:
        try:
            done = subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return Outcome("crash", f"gspmd {args[0]} did not finish in {self.timeout:.0f} s"), ""
        if done.returncode == 0:
            return Outcome("ok"), done.stdout
        if done.returncode == 1:
            return Outcome("refused", _first_error(done.stderr)), done.stdout
        if done.returncode < 0:
            what = signal.Signals(-done.returncode).name
        else:
            what = f"exit code {done.returncode}"
        tail = _first_error(done.stderr) if done.stderr.strip() else ""
        return Outcome("crash", f"gspmd {args[0]}: {what}" + (f": {tail}" if tail else "")), done.stdout

    def _boundary_args(self, propagate_to_outputs: Optional[Sequence[bool]]) -> list[str]:
        if propagate_to_outputs is None:
            return []
        return ["--propagate-to-outputs", ",".join("true" if v else "false" for v in propagate_to_outputs)]

    def run(self, program: str, inputs: Sequence[np.ndarray], devices: int,
            propagate_to_outputs: Optional[Sequence[bool]] = None) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="gspmd_oracle_run_") as tmp:
            paths = []
            for k, a in enumerate(inputs):
                paths.append(os.path.join(tmp, f"in{k}.npy"))
                np.save(paths[-1], a)
            out_dir = os.path.join(tmp, "out")
            outcome, _ = self._call(["run", program, "--devices", str(devices), *self.partition_args,
                                       *self._boundary_args(propagate_to_outputs), "-i", *paths, "-o", out_dir])
            if not outcome.ok:
                return outcome
            count = len([n for n in os.listdir(out_dir) if n.endswith(".npy")])
            outcome.value = [load_npy(os.path.join(out_dir, f"out{k}.npy")) for k in range(count)]
            return outcome

    def eval(self, program: str, inputs: Sequence[np.ndarray]) -> Outcome:
        """The reference interpreter on one device (no partitioning): where a mismatch comes from."""
        with tempfile.TemporaryDirectory(prefix="gspmd_oracle_eval_") as tmp:
            paths = []
            for k, a in enumerate(inputs):
                paths.append(os.path.join(tmp, f"in{k}.npy"))
                np.save(paths[-1], a)
            out_dir = os.path.join(tmp, "out")
            outcome, _ = self._call(["eval", program, "-i", *paths, "-o", out_dir])
            if outcome.ok:
                count = len([n for n in os.listdir(out_dir) if n.endswith(".npy")])
                outcome.value = [load_npy(os.path.join(out_dir, f"out{k}.npy")) for k in range(count)]
            return outcome

    def partition(self, program: str, devices: int, propagate_to_outputs: Optional[Sequence[bool]] = None) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="gspmd_oracle_part_") as tmp:
            out = os.path.join(tmp, "per_device.hlo")
            outcome, _ = self._call(["partition", program, "--devices", str(devices), *self.partition_args,
                                     *self._boundary_args(propagate_to_outputs), "-o", out])
            if outcome.ok:
                outcome.value = pathlib.Path(out).read_text()
            return outcome

    def report(self, hlo_text: str) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="gspmd_oracle_report_") as tmp:
            path = os.path.join(tmp, "per_device.hlo")
            pathlib.Path(path).write_text(hlo_text)
            outcome, stdout = self._call(["report", path, "--json"])
            if outcome.ok:
                outcome.value = json.loads(stdout)
            return outcome


class PackageBackend:
    """gspmd in this process through the Python package (faster; a crash ends the oracle too)."""

    name = "package"

    def __init__(self):
        import gspmd  # noqa: F401  (the package proper, not this subpackage alone)

        self.gspmd = gspmd

    def _guard(self, fn) -> Outcome:
        try:
            return Outcome("ok", value=fn())
        except self.gspmd.Error as e:
            return Outcome("refused", _first_error(str(e)))
        except Exception as e:  # noqa: BLE001 - anything else is gspmd's bug, not a refusal
            return Outcome("crash", f"{type(e).__name__}: {e}")

    def run(self, program: str, inputs: Sequence[np.ndarray], devices: int,
            propagate_to_outputs: Optional[Sequence[bool]] = None) -> Outcome:
        if propagate_to_outputs is None:
            return self._guard(lambda: list(self.gspmd.load(program).run(*inputs, devices=devices)))
        return self._guard(lambda: list(self.gspmd.load(program).partition(
            devices=devices, propagate_to_outputs=list(propagate_to_outputs)).run(*inputs)))

    def eval(self, program: str, inputs: Sequence[np.ndarray]) -> Outcome:
        return self._guard(lambda: list(self.gspmd.load(program).eval(*inputs)))

    def partition(self, program: str, devices: int, propagate_to_outputs: Optional[Sequence[bool]] = None) -> Outcome:
        flags = None if propagate_to_outputs is None else list(propagate_to_outputs)
        return self._guard(lambda: str(self.gspmd.load(program).partition(devices=devices,
                                                                          propagate_to_outputs=flags).text()))

    def report(self, hlo_text: str) -> Outcome:
        return self._guard(lambda: self.gspmd.from_text(hlo_text, "<per-device>").report())


def make_backend(name: str) -> Any:
    if name == "cli":
        return CliBackend()
    if name == "package":
        return PackageBackend()
    raise ValueError(f"unknown backend '{name}' (cli or package)")
