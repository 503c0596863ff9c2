"""The oracle's check: XLA compiles and runs a generated program, gspmd reads the same StableHLO,
partitions and runs it, and the two must agree on results, result shardings and communication.

What XLA did is kept as a :class:`Reference` (StableHLO text, inputs, XLA's outputs and compiled
program), which a reproducer folder stores, so a saved failure is checked again without JAX::

    ref = reference_from_jax(generate(17), "shardy")     # JAX lowers, compiles and runs it
    result = check_reference(ref, CliBackend())          # equal / mismatch / crash / refused
    Reference.load("tests/data/oracle/case")             # the same, from a folder

Equal means: the same number of results, each of the same shape and type; f32 results within
rtol 1e-5 (of the element, or of the result's largest magnitude, for the rounding of sums done in
another order) plus 1e-6, bf16 or through-bf16 results within 2^-6 likewise plus 1e-2, integers
and booleans exactly;
and every result whose sharding the user fixed (out_shardings) laid out as XLA laid it out.
Where our one-device interpreter shares an f32 difference, XLA's own run of the program widened
to f64 (xla_f64) decides whether it is XLA:CPU's rounding (see _closer_to_f64).
Communication (bytes sent per device, gspmd's one counter for both programs) is compared
separately: ours must be at most XLA's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from . import hlo_text, xla_f64
from .backend import load_npy
from .excess import explain_excess
from .generate import ProgramSpec, build

__all__ = ["Reference", "ExportCheck", "ProgramCheck", "InvalidProgram", "reference_from_jax",
           "check_reference", "check_program", "compare_arrays", "EXPORTS"]

EXPORTS = ("shardy", "gspmd")
F32_RTOL = 1e-5
BF16_RTOL = 2.0 ** -6
# Results that cancel to about zero (a gradient of 1e-8 where XLA and we sum O(1) terms in other
# orders): an absolute floor, for inputs of order 1 as the generator makes them.
F32_ATOL = 1e-6
BF16_ATOL = 1e-2
SEVERITY = {"crash": 4, "mismatch": 3, "refused": 2, "equal": 1, "invalid": 0}


# Called with "xla" or "gspmd" as each side starts: a worker process announces it, so that when
# the process dies its supervisor knows whose crash it was (gspmd's only in-process).
stage_hook = None


def _stage(name: str) -> None:
    if stage_hook is not None:
        stage_hook(name)


class InvalidProgram(Exception):
    """JAX or XLA would not take the generated program (a generator bug, or XLA's when it fails
    to compile or run what JAX lowered; then `lowered` holds the StableHLO and the inputs)."""

    def __init__(self, message: str, lowered: Optional[tuple] = None):
        super().__init__(message)
        self.lowered = lowered


@dataclass
class Reference:
    """What XLA did with one program in one export path."""
    export: str
    devices: int
    mlir: str
    inputs: list
    outputs: list
    lowp: list                              # result computed through bf16: compared at bf16's precision
    fixed: list                             # XLA's sharding text of each user-fixed result, else None
    xla_hlo: str                            # XLA's compiled per-device program
    seed: Optional[int] = None
    spec: Optional[ProgramSpec] = None
    f64_outputs: Optional[list] = None      # XLA's results of the program widened to f64 (xla_f64), once run

    def save(self, folder: str) -> None:
        os.makedirs(folder, exist_ok=True)
        path = pathlib.Path(folder)
        (path / "stablehlo.mlir").write_text(self.mlir)
        (path / "xla.hlo").write_text(self.xla_hlo)
        for k, a in enumerate(self.inputs):
            np.save(path / f"in{k}.npy", a)
        for k, a in enumerate(self.outputs):
            np.save(path / f"xla_out{k}.npy", a)
        for k, a in enumerate(self.f64_outputs or []):
            np.save(path / f"xla_f64_out{k}.npy", a)
        meta = {"seed": self.seed, "export": self.export, "devices": self.devices, "lowp": self.lowp,
                "fixed": self.fixed, "inputs": len(self.inputs), "outputs": len(self.outputs)}
        old = path / "meta.json"
        if old.exists():                                   # keep what --add-test wrote (xfail)
            meta = {**json.loads(old.read_text()), **meta}
        (path / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        if self.spec is not None:
            (path / "spec.json").write_text(self.spec.to_json() + "\n")

    @staticmethod
    def load(folder: str) -> "Reference":
        path = pathlib.Path(folder)
        meta = json.loads((path / "meta.json").read_text())
        spec = ProgramSpec.from_json((path / "spec.json").read_text()) if (path / "spec.json").exists() else None
        return Reference(export=meta["export"], devices=meta["devices"], mlir=(path / "stablehlo.mlir").read_text(),
                         inputs=[load_npy(str(path / f"in{k}.npy")) for k in range(meta["inputs"])],
                         outputs=[load_npy(str(path / f"xla_out{k}.npy")) for k in range(meta["outputs"])],
                         lowp=meta["lowp"], fixed=meta["fixed"], xla_hlo=(path / "xla.hlo").read_text(),
                         seed=meta.get("seed"), spec=spec,
                         f64_outputs=[load_npy(str(path / f"xla_f64_out{k}.npy")) for k in range(meta["outputs"])]
                         if (path / "xla_f64_out0.npy").exists() else None)


@dataclass
class ExportCheck:
    export: str
    status: str                             # equal, mismatch, crash, refused, invalid
    reason: str = ""
    comm_ours: Optional[float] = None
    comm_xla: Optional[float] = None
    kinds_ours: dict = field(default_factory=dict)      # bytes by collective kind
    kinds_xla: dict = field(default_factory=dict)
    comm_reason: str = ""                   # where ours exceeds XLA's (excess.explain_excess)
    notes: list = field(default_factory=list)
    reference: Optional[Reference] = None   # kept for a reproducer
    outputs: Optional[list] = None          # ours
    value_problems: list = field(default_factory=list)
    sharding_problems: list = field(default_factory=list)

    @property
    def comm_known(self) -> bool:
        return self.comm_ours is not None and self.comm_xla is not None

    @property
    def comm_ok(self) -> bool:
        return self.comm_known and self.comm_ours <= self.comm_xla

    def line(self) -> str:
        comm = f"comm {self.comm_ours:.0f}/{self.comm_xla:.0f}" if self.comm_known else "comm ?"
        return f"{self.export}: {self.status}{': ' + self.reason if self.reason else ''} ({comm})"


@dataclass
class ProgramCheck:
    seed: Optional[int]
    spec: Optional[ProgramSpec]
    exports: list

    @property
    def worst(self) -> ExportCheck:
        return max(self.exports, key=lambda e: SEVERITY[e.status])

    @property
    def status(self) -> str:
        return self.worst.status

    @property
    def comm_ok(self) -> bool:
        """Ours at most XLA's in every export that was counted (and at least one was)."""
        counted = [e for e in self.exports if e.comm_known]
        return bool(counted) and all(e.comm_ok for e in counted)

    def to_dict(self) -> dict:
        """What the summary needs, as JSON-able data (a worker process sends it to the oracle)."""
        return {"seed": self.seed, "status": self.status, "comm_ok": self.comm_ok,
                "summary": self.spec.summary() if self.spec else "",
                "exports": [{"export": e.export, "status": e.status, "reason": e.reason, "comm_ours": e.comm_ours,
                             "comm_xla": e.comm_xla, "kinds_ours": e.kinds_ours, "kinds_xla": e.kinds_xla,
                             "comm_reason": e.comm_reason,
                             "notes": list(e.notes), "line": e.line(),
                             "kind": failure_kind(e)} for e in self.exports]}


# ---------------------------------------------------------------------------------------------
# XLA's side.

def reference_from_jax(spec: ProgramSpec, export: str, jax: Any = None) -> Reference:
    """Lower `spec` through `export` (shardy or gspmd), compile and run it with XLA."""
    if jax is None:
        import jax
    if jax.device_count() < spec.devices:
        raise RuntimeError(f"JAX sees {jax.device_count()} devices, the program needs {spec.devices} "
                           f"(set XLA_FLAGS=--xla_force_host_platform_device_count before JAX starts)")
    _stage("xla")
    jax.config.update("jax_use_shardy_partitioner", export == "shardy")
    stage = "build"
    try:
        program = build(spec, jax)
        jitted = jax.jit(program.fn, in_shardings=program.in_shardings, out_shardings=program.out_shardings,
                         keep_unused=True)     # every input a parameter, as the inputs are given
        stage = "lower"
        lowered = jitted.lower(*program.args)
        mlir = lowered.as_text()
        stage = "XLA compile"
        compiled = lowered.compile()
        stage = "XLA run"
        placed = [jax.device_put(a, s) for a, s in zip(program.args, program.in_shardings)]
        results = compiled(*placed)
        outputs = [np.asarray(r) for r in results]
        shardings = list(compiled.output_shardings)
        fixed = [str(s._to_xla_hlo_sharding(o.ndim)) if f else None  # noqa: SLF001
                 for s, o, f in zip(shardings, outputs, program.trace.fixed)]
        xla_hlo = compiled.as_text()
    except Exception as e:  # noqa: BLE001 - whatever JAX or XLA refuses, the generator made it
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        lowered_program = (spec.devices, mlir, list(program.args)) if stage.startswith("XLA") else None
        raise InvalidProgram(f"{stage}: {type(e).__name__}: {first[:300]}", lowered_program) from e
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)
    return Reference(export=export, devices=spec.devices, mlir=mlir, inputs=list(program.args), outputs=outputs,
                     lowp=list(program.trace.lowp), fixed=fixed, xla_hlo=xla_hlo, seed=spec.seed, spec=spec)


# ---------------------------------------------------------------------------------------------
# Comparing.

def _float_kind(a: np.ndarray) -> bool:
    return np.issubdtype(a.dtype, np.floating) or a.dtype.name == "bfloat16"


def _close_elements(actual: np.ndarray, expected: np.ndarray, lowp: bool = False) -> np.ndarray:
    """Per element of two float arrays of one shape: equal as compare_arrays counts it."""
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    low = lowp or expected.dtype.name == "bfloat16"
    rtol, atol = (BF16_RTOL, BF16_ATOL) if low else (F32_RTOL, F32_ATOL)
    same_special = (np.isnan(a) & np.isnan(e)) | (np.isinf(e) & (a == e))
    finite = np.isfinite(e)
    scale = float(np.max(np.abs(e[finite]))) if finite.any() else 1.0
    with np.errstate(invalid="ignore"):
        close = np.abs(a - e) <= rtol * np.abs(e) + rtol * scale + atol
    return close | same_special


def compare_arrays(actual: np.ndarray, expected: np.ndarray, lowp: bool = False) -> str:
    """'' when equal as the module doc says, else what differs (one line)."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != XLA's {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"type {actual.dtype} != XLA's {expected.dtype}"
    if not _float_kind(expected):
        bad = actual != expected
        if not bad.any():
            return ""
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        return f"{int(bad.sum())} of {bad.size} elements differ, first at {at}: {actual[at]} != XLA's {expected[at]}"
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    low = lowp or expected.dtype.name == "bfloat16"
    rtol = BF16_RTOL if low else F32_RTOL
    finite = np.isfinite(e)
    scale = float(np.max(np.abs(e[finite]))) if finite.any() else 1.0
    bad = ~_close_elements(actual, expected, lowp)
    if not bad.any():
        return ""
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    with np.errstate(invalid="ignore"):
        gaps = np.where(bad & np.isfinite(a) & finite, np.abs(a - e), 0)
    err = float(gaps.max())  # over the finite elements; NaN and infinities are told by `first at`
    return (f"{int(bad.sum())} of {bad.size} elements beyond rtol {rtol:g} (max abs error {err:.3g}, "
            f"scale {scale:.3g}), first at {at}: {actual[at]} != XLA's {expected[at]}")


def _comm(report: dict) -> float:
    return float(report["comm_bytes_per_device"])


def check_reference(ref: Reference, backend: Any, f64_tie_break: bool = True) -> ExportCheck:
    """gspmd's side of one reference: run, partition, count, compare."""
    result = ExportCheck(ref.export, "equal", reference=ref)
    _stage("gspmd")
    with tempfile.TemporaryDirectory(prefix="gspmd_oracle_") as tmp:
        program = os.path.join(tmp, "stablehlo.mlir")
        pathlib.Path(program).write_text(ref.mlir)
        # The results XLA was free to lay out (JAX's out_shardings left unspecified): gspmd gets
        # the same freedom, as a user would give it with --propagate-to-outputs.
        free = hlo_text.output_propagation(ref.xla_hlo)
        run = backend.run(program, ref.inputs, ref.devices, propagate_to_outputs=free)
        if not run.ok:
            result.status, result.reason = run.status, f"run: {run.message}"
            return result
        part = backend.partition(program, ref.devices, propagate_to_outputs=free)
    if not part.ok:
        result.status, result.reason = part.status, f"partition: {part.message}"
        return result
    ours = backend.report(part.value)
    if not ours.ok:
        result.status, result.reason = ours.status, f"report of our program: {ours.message}"
        return result
    result.comm_ours = _comm(ours.value)
    if ".windowed_body (" in part.value:          # what --windowed-einsum always put to the test
        result.notes.append("windowed einsum: our program runs a dot as a windowed loop")
    result.kinds_ours = dict(ours.value.get("comm_bytes_by_kind", {}))
    xla_text, rewritten = hlo_text.rewrite_for_reading(ref.xla_hlo)
    if rewritten:
        result.notes.append("parser gap: XLA's replica groups mesh[...], device_ids=(...) {...} rewritten as explicit groups")
    xla = backend.report(xla_text)
    if xla.status == "crash":
        result.status, result.reason = "crash", f"report of XLA's program: {xla.message}"
        return result
    if xla.ok:
        result.comm_xla = _comm(xla.value)
        result.kinds_xla = dict(xla.value.get("comm_bytes_by_kind", {}))
        if result.comm_ours > result.comm_xla:
            result.comm_reason = explain_excess(part.value, xla_text, ref.devices)
    else:
        result.notes.append(f"XLA's program unreadable: {xla.message}")

    result.outputs = run.value
    result.value_problems = _compare_outputs(run.value, ref.outputs, ref.lowp)
    result.sharding_problems = _compare_shardings(part.value, ref)
    if result.value_problems:
        result.notes.append(_where_values_differ(ref, program_text=ref.mlir, ours=run.value, backend=backend))
        if f64_tie_break:
            _excuse_xla_rounding(result)
    _set_mismatch(result)
    return result


def _excuse_xla_rounding(result: ExportCheck) -> None:
    """The last tie-breaker (check_program tries XLA's other runs first): clears the value
    problems our one-device interpreter shares when XLA's f64 run sides with ours."""
    ref = result.reference
    if not result.value_problems or result.outputs is None or ref is None or NOT_PARTITIONING not in result.notes:
        return
    if _closer_to_f64(ref, result.outputs):
        result.notes.append(XLA_ROUNDING + ": " + "; ".join(result.value_problems))
        result.value_problems = []
        _set_mismatch(result)


def _set_mismatch(result: ExportCheck) -> None:
    problems = result.value_problems + result.sharding_problems
    if not problems:
        result.status, result.reason = "equal", ""
        return
    result.status = "mismatch"
    result.reason = "; ".join(problems[:3]) + (" ..." if len(problems) > 3 else "")
    where = [n for n in result.notes if n.startswith("[")]
    if result.value_problems and where:
        result.reason += " " + where[0]


NOT_PARTITIONING = "[the interpreter on one device gives ours too: not partitioning]"
XLA_ROUNDING = ("XLA's rounding: XLA's own run in f64 sides with ours, not with its f32 result "
                "(its approximate tanh or exp, made large by cancellation, a tie or a float-to-integer step)")
# How much closer to XLA's f64 result ours must be than XLA's f32 result, where ours is not
# within the f32 tolerance of it either (an ill-conditioned result: both f32 runs round, XLA's
# approximations more). The margin keeps a result of ours that lands merely nearer the truth
# than XLA's, on its other side, a mismatch. It was 4 until seed 141359 (the gradient of a
# 16-step scan through tanh: both runs far beyond the tolerance, ours 3.5 times nearer).
CLOSER = 3.0


def _max_error(a: np.ndarray, truth: np.ndarray) -> float:
    a, truth = a.astype(np.float64), truth.astype(np.float64)
    finite = np.isfinite(truth)
    if not finite.any():
        return 0.0
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.abs(a[finite] - truth[finite])))


def _closer_to_f64(ref: Reference, ours: list) -> bool:
    """The tie-breaker when our unpartitioned interpreter and XLA:CPU disagree on f32 results:
    XLA's run of the same program widened to f64 (xla_f64; stored in a reproducer, or computed
    when JAX is here). The difference is forgiven only when, on the elements where ours and
    XLA's differ, ours is within the f32 tolerance of XLA's f64 result or CLOSER times nearer to
    it than XLA's f32 result, and integers and booleans equal it, or match it at least half as
    often as XLA's f32 result does. A semantic difference, which XLA's f64 run shares with its f32
    run, stays a mismatch."""
    if ref.f64_outputs is None:
        if importlib.util.find_spec("jax") is None:
            return False
        ref.f64_outputs = xla_f64.outputs(ref.mlir, ref.inputs, ref.devices)
    wide = ref.f64_outputs
    if wide is None or len(wide) != len(ours) or len(ours) != len(ref.outputs):
        return False
    for k, (a, w, x) in enumerate(zip(ours, wide, ref.outputs)):
        low = bool(ref.lowp[k]) if k < len(ref.lowp) else False
        if w.shape != a.shape:
            return False
        if not compare_arrays(a, x, low):
            continue                                       # this result agrees already
        truth = w.astype(a.dtype)
        if not _float_kind(a):
            # Where ours and XLA's differ, ours must be XLA's f64 value (an argmax that XLA's
            # saturated tanh ties and ours does not); where they agree, the f64 run may differ
            # from both (a tie in f32 that f64 resolves).
            if a.shape != x.shape:
                return False
            differ = a != x
            ours_right = int(np.count_nonzero(a[differ] == truth[differ]))
            xla_right = int(np.count_nonzero(x[differ] == truth[differ]))
            if ours_right == int(np.count_nonzero(differ)):
                continue
            # Both f32 runs miss the f64 result somewhere: the order of values an ulp or two
            # apart (a top-k of nearly tied values after a loop of dots and tanh, seed 130503:
            # of 23 differing indices, 10 are ours and 12 XLA's f32 ones), which each f32 run
            # rounds its own way. Ours stands when it matches the f64 result there at least
            # half as often as XLA's f32 result does; a semantic difference, which XLA's f64 run
            # shares with its f32 run, leaves ours matching it nowhere.
            if ours_right == 0 or 2 * ours_right < xla_right:
                return False
            continue
        # Judged where ours and XLA's differ; elsewhere the f64 run may differ from both (a
        # float turned integer, or a tie, that f64 resolves and both f32 runs round alike).
        # An element within f32 tolerance of the f64 value (nan for nan, the same infinity) is
        # ours right; the rest must be finite on all three sides and ours CLOSER times nearer.
        a, x, w, truth = (np.ravel(v) for v in (a, x, w, truth))  # 0-d results index as 1-d
        differ = ~_close_elements(a, x, low)
        rest = differ.copy()
        rest[differ] = ~_close_elements(a[differ], truth[differ], low)
        if not rest.any():
            continue
        if not (np.isfinite(w[rest]).all() and np.isfinite(a[rest].astype(np.float64)).all()
                and np.isfinite(x[rest].astype(np.float64)).all()):
            return False
        if CLOSER * _max_error(a[rest], w[rest]) > _max_error(x[rest], w[rest]):
            return False
    return True


def _where_values_differ(ref: Reference, program_text: str, ours: list, backend: Any) -> str:
    """Runs the interpreter on one device: is the difference made by partitioning or not?"""
    with tempfile.TemporaryDirectory(prefix="gspmd_oracle_") as tmp:
        program = os.path.join(tmp, "stablehlo.mlir")
        pathlib.Path(program).write_text(program_text)
        one = backend.eval(program, ref.inputs)
    if not one.ok:
        return f"[the interpreter on one device: {one.status}: {one.message}]"
    if not _compare_outputs(one.value, ref.outputs, ref.lowp):
        return "[the interpreter on one device agrees with XLA: partitioning differs]"
    if not _compare_outputs(ours, one.value, ref.lowp):
        return NOT_PARTITIONING
    return "[the interpreter on one device differs from both]"


def _compare_outputs(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray], lowps: Sequence[bool]) -> list[str]:
    if len(actual) != len(expected):
        return [f"{len(actual)} results, XLA has {len(expected)}"]
    problems = []
    for k, (a, e) in enumerate(zip(actual, expected)):
        lowp = lowps[k] if k < len(lowps) else False
        what = compare_arrays(a, e, lowp)
        if what:
            problems.append(f"result {k}: {what}")
    return problems


def _compare_shardings(per_device: str, ref: Reference) -> list[str]:
    wanted = [(k, s) for k, s in enumerate(ref.fixed) if s is not None]
    if not wanted:
        return []
    ours = hlo_text.root_shardings(per_device, len(ref.outputs))
    if ours is None:
        return ["our per-device program's root has no sharding for its results"]
    problems = []
    for k, xla in wanted:
        rank = ref.outputs[k].ndim
        try:
            same = hlo_text.layout(ours[k], rank, ref.devices) == hlo_text.layout(xla, rank, ref.devices)
        except ValueError as e:
            problems.append(f"result {k}: sharding not comparable ({e})")
            continue
        if not same:
            problems.append(f"result {k}: sharding {ours[k]} != XLA's {xla}")
    return problems


def check_program(spec: ProgramSpec, backend: Any, exports: Sequence[str] = EXPORTS, jax: Any = None) -> ProgramCheck:
    """Both sides of `spec` in each export path."""
    checks = []
    for export in exports:
        try:
            ref = reference_from_jax(spec, export, jax)
        except InvalidProgram as e:
            checks.append(_without_xla(export, e, backend))
            continue
        checks.append(check_reference(ref, backend, f64_tie_break=False))
    _cross_check_xla(checks)
    if any(c.value_problems for c in checks):
        _check_against_one_device(spec, checks, jax)
    for c in checks:
        _excuse_xla_rounding(c)
    return ProgramCheck(spec.seed, spec, checks)


def _without_xla(export: str, error: InvalidProgram, backend: Any) -> ExportCheck:
    """A program XLA could not compile or run: not counted, but gspmd must still not crash on it."""
    result = ExportCheck(export, "invalid", str(error))
    if error.lowered is None:
        return result
    devices, mlir, inputs = error.lowered
    _stage("gspmd")
    with tempfile.TemporaryDirectory(prefix="gspmd_oracle_") as tmp:
        program = os.path.join(tmp, "stablehlo.mlir")
        pathlib.Path(program).write_text(mlir)
        run = backend.run(program, inputs, devices)
    if run.status == "crash":
        result.status, result.reason = "crash", f"run (XLA could not compile it: {error}): {run.message}"
    else:
        result.notes.append(f"gspmd on it: {run.status}{': ' + run.message if run.message else ''}")
    return result


def _cross_check_xla(checks: list) -> None:
    """XLA's two exports of one program must agree too. Where they do not and ours matches the
    other export's XLA result, the difference is XLA's: not counted as our mismatch, but noted."""
    done = [c for c in checks if c.reference is not None]
    if len(done) != 2:
        return
    a, b = done
    lowp = [x or y for x, y in zip(a.reference.lowp, b.reference.lowp)]
    if not _compare_outputs(a.reference.outputs, b.reference.outputs, lowp):
        return
    for mine, other in ((a, b), (b, a)):
        note = f"XLA disagrees with itself: its {mine.export} export's results differ from its {other.export} export's"
        if mine.outputs is not None and mine.value_problems and not _compare_outputs(mine.outputs, other.reference.outputs, lowp):
            note += ", which ours match"
            mine.value_problems = []
            _set_mismatch(mine)
        mine.notes.append(note)


def xla_on_one_device(spec: ProgramSpec, jax: Any = None, eager: bool = False) -> Optional[list]:
    """XLA's results for `spec` on one device (no partitioning): the tie-breaker when ours and
    XLA's partitioned results differ. None where that is not the same program: the gradient of
    a shard_map region built without JAX's replication check is not the gradient of its
    one-device form. With `eager`, op by op (jax.disable_jit): no XLA optimization across ops."""
    if spec.grad and any(op.kind == "shard_map" for op in spec.ops):
        return None
    if jax is None:
        import jax
    try:
        program = build(spec, jax, one_device=True)
        if eager:
            with jax.disable_jit():
                return [np.asarray(r) for r in program.fn(*program.args)]
        return [np.asarray(r) for r in jax.jit(program.fn, keep_unused=True)(*program.args)]
    except Exception:  # noqa: BLE001 - no tie-breaker then
        return None


def xla_on_mesh_op_by_op(spec: ProgramSpec, jax: Any = None) -> Optional[list]:
    """XLA's results for `spec` on its mesh, op by op (jax.disable_jit): each op partitioned and
    compiled alone, so no XLA optimization spans two ops. The tie-breaker where the one-device
    form is not the same program (a gradient through shard_map)."""
    if jax is None:
        import jax
    try:
        program = build(spec, jax)
        placed = [jax.device_put(a, s) for a, s in zip(program.args, program.in_shardings)]
        with jax.disable_jit():
            return [np.asarray(r) for r in program.fn(*placed)]
    except Exception:  # noqa: BLE001 - no tie-breaker then
        return None


def xla_on_mesh_inputs_whole(spec: ProgramSpec, jax: Any = None) -> Optional[list]:
    """XLA's results for `spec` compiled on its mesh with every input replicated (shard_map
    regions, constraints and out shardings kept): the same program partitioned another way. The
    tie-breaker where XLA's partitioner is wrong for the inputs' layouts and no one-device form
    exists (seed 116254: the gradient of a max-pool over rows split 2 or 4 ways is wrong by
    0.17 on 8 CPU devices, right with the rows whole or split 8 ways)."""
    if jax is None:
        import jax
    try:
        program = build(spec, jax)
        whole = jax.sharding.NamedSharding(program.mesh, jax.sharding.PartitionSpec())
        fn = jax.jit(program.fn, in_shardings=tuple(whole for _ in program.args),
                     out_shardings=program.out_shardings, keep_unused=True)
        return [np.asarray(r) for r in fn(*program.args)]
    except Exception:  # noqa: BLE001 - no tie-breaker then
        return None


def _excuse_where_xla_differs(checks: list, xla: Optional[list], compiled: str, how: str) -> None:
    """Clears the value problems of the checks whose outputs equal `xla`, XLA's result `how`,
    noting that XLA's `compiled` result disagrees with it."""
    if xla is None:
        return
    for c in checks:
        if not c.value_problems or c.outputs is None or _compare_outputs(c.outputs, xla, c.reference.lowp):
            continue
        c.notes.append(f"XLA disagrees with itself: its {compiled} result ({c.export} export) differs from "
                       f"its result {how}, which ours match ({c.value_problems[0][:120]})")
        c.value_problems = []
        _set_mismatch(c)


def _check_against_one_device(spec: ProgramSpec, checks: list, jax: Any) -> None:
    """Where ours differs from XLA's partitioned result but equals XLA's on one device (compiled,
    or else op by op, where no optimization spans two ops), XLA's op by op on the same mesh, or
    XLA's on the same mesh with the inputs replicated, the difference is XLA's: not counted as
    our mismatch, but noted."""
    _stage("xla")
    for eager in (False, True):
        how = "op by op on one device" if eager else "on one device"
        _excuse_where_xla_differs(checks, xla_on_one_device(spec, jax, eager=eager), "partitioned", how)
    if any(c.value_problems and c.outputs is not None for c in checks):
        _excuse_where_xla_differs(checks, xla_on_mesh_op_by_op(spec, jax), "compiled", "op by op on the same mesh")
    if any(c.value_problems and c.outputs is not None for c in checks):
        _excuse_where_xla_differs(checks, xla_on_mesh_inputs_whole(spec, jax), "partitioned",
                                  "on the same mesh with its inputs replicated")
    for c in checks:
        if c.value_problems:
            c.notes.append("[XLA on one device, compiled and op by op, op by op on the mesh, and on the mesh with "
                           "its inputs replicated differs from ours too]")


_NUMBERS = re.compile(r"[0-9]+")


def failure_kind(check: ExportCheck) -> str:
    """A failure's class and message with numbers and locations blurred: what must persist while a
    reproducer is minimized (the same crash, the same refusal, a mismatch of the same kind)."""
    reason = check.reason
    if check.status == "mismatch":
        reason = "sharding" if "sharding" in reason else ("shape" if "shape" in reason else "values")
    return check.status + ": " + _NUMBERS.sub("#", re.sub(r"\S+\.(mlir|hlo)(:\d+)*", "FILE", reason))[:200]
