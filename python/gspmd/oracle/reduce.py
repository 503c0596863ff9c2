"""Reproducers of the oracle's failures: saving one, shrinking it while it still fails, and making it
a regression test (tests/data/oracle/NAME, replayed by tests/python/test_oracle_regressions.py).

A reproducer is a folder a fresh clone checks without JAX: the StableHLO text, the inputs, XLA's
outputs and compiled program (meta.json says which results were compared at bf16's precision and
which shardings the user fixed), the generator's spec, and a README line with the seed::

    save(check, "oracle-failures")                          # oracle-failures/seed17-shardy/
    small = minimize(spec, "shardy", backend, jax)          # fewer ops, inputs, annotations
    add_test("dot_reshape_uneven", "oracle-failures/seed17-shardy", xfail="...")
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import shutil
from typing import Any, Callable, Optional

from .check import ExportCheck, check_program, failure_kind
from .generate import ProgramSpec

__all__ = ["save", "minimize", "add_test", "TESTS_DIR"]

TESTS_DIR = pathlib.Path(__file__).resolve().parents[3] / "tests" / "data" / "oracle"


def save(check: ExportCheck, out_dir: str, name: Optional[str] = None) -> Optional[pathlib.Path]:
    """Writes `check`'s reproducer under out_dir (named seed<N>-<export> unless `name`)."""
    ref = check.reference
    if ref is None:
        return None
    folder = pathlib.Path(out_dir) / (name or f"seed{ref.seed}-{check.export}")
    ref.save(str(folder))
    meta = json.loads((folder / "meta.json").read_text())
    meta.update({"status": check.status, "reason": check.reason, "comm_ours": check.comm_ours,
                 "comm_xla": check.comm_xla})
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    summary = ref.spec.summary() if ref.spec is not None else ""
    (folder / "README").write_text(
        f"seed {ref.seed}, {check.export} export, {ref.devices} devices: {check.status}: {check.reason}\n"
        f"{summary}\n"
        f"replay: python3 -m gspmd.oracle --replay {folder}    "
        f"regenerate: python3 -m gspmd.oracle --spec {folder}/spec.json --exports {check.export}\n")
    return folder


def _ddmin(items: list, fails: Callable[[list], bool]) -> list:
    """Zeller's delta debugging: a 1-minimal sub-list of `items` on which `fails` holds."""
    n = 2
    while len(items) >= 2:
        size = math.ceil(len(items) / n)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        for k in range(len(chunks)):
            complement = [x for j, c in enumerate(chunks) if j != k for x in c]
            if fails(chunks[k]):
                items, n = chunks[k], 2
                break
            if len(chunks) > 2 and fails(complement):
                items, n = complement, max(n - 1, 2)
                break
        else:
            if n >= len(items):
                break
            n = min(len(items), n * 2)
    if len(items) == 1 and fails([]):
        return []
    return items


def minimize(spec: ProgramSpec, export: str, backend: Any, jax: Any = None, budget: int = 80,
             log: Callable[[str], None] = lambda s: None) -> tuple[ProgramSpec, Optional[ExportCheck]]:
    """A smaller spec failing as `spec` does in `export` (same class and kind of message), and its
    check: drops ops (delta debugging), then inputs, annotations, grad, extra results, device
    order, and halves input dims; at most `budget` checks."""
    first = check_program(spec, backend, [export], jax).exports[0]
    if first.status in ("equal", "invalid"):
        return spec, None
    kind = failure_kind(first)
    tries = {"n": 0}
    best: dict = {"check": first}

    def fails(candidate: ProgramSpec) -> bool:
        if tries["n"] >= budget:
            return False
        tries["n"] += 1
        result = check_program(candidate, backend, [export], jax).exports[0]
        same = result.status not in ("equal", "invalid") and failure_kind(result) == kind
        if same:
            best["check"] = result
        return same

    current = spec
    ops = _ddmin(list(current.ops), lambda sub: fails(dataclasses.replace(current, ops=list(sub))))
    current = dataclasses.replace(current, ops=ops)
    log(f"  ops: {len(spec.ops)} -> {len(ops)}")
    for candidate in _simplifications(current):
        if fails(candidate(current)):
            current = candidate(current)
    current.note = f"minimized from seed {spec.seed} ({spec.summary()}) in {tries['n']} checks"
    log(f"  minimized in {tries['n']} checks: {current.summary()}")
    check_again = check_program(current, backend, [export], jax).exports[0]
    return current, check_again if check_again.status not in ("equal", "invalid") else best["check"]


def _simplifications(spec: ProgramSpec) -> list[Callable[[ProgramSpec], ProgramSpec]]:
    """One-step simplifications, each applied to whatever the spec is when its turn comes."""
    steps: list[Callable[[ProgramSpec], ProgramSpec]] = []

    def drop_input(k: int):
        return lambda s: dataclasses.replace(s, inputs=s.inputs[:k] + s.inputs[k + 1:]) if len(s.inputs) > 1 and k < len(s.inputs) else s

    def replicate_input(k: int):
        def apply(s: ProgramSpec) -> ProgramSpec:
            if k >= len(s.inputs):
                return s
            inputs = [dataclasses.replace(i) for i in s.inputs]
            inputs[k].spec = []
            return dataclasses.replace(s, inputs=inputs)
        return apply

    def halve_input(k: int, d: int):
        def apply(s: ProgramSpec) -> ProgramSpec:
            if k >= len(s.inputs) or d >= len(s.inputs[k].shape) or s.inputs[k].shape[d] % 2:
                return s
            inputs = [dataclasses.replace(i, shape=list(i.shape)) for i in s.inputs]
            shape = inputs[k].shape
            entry = inputs[k].spec[d] if d < len(inputs[k].spec) else None
            names = [] if entry is None else ([entry] if isinstance(entry, str) else entry)
            split = math.prod(s.mesh_shape[s.axis_names.index(n)] for n in names)
            if (shape[d] // 2) % split:
                return s
            shape[d] //= 2
            return dataclasses.replace(s, inputs=inputs)
        return apply

    for k in reversed(range(len(spec.inputs))):
        steps.append(drop_input(k))
    for k in range(len(spec.inputs)):
        steps.append(replicate_input(k))
    steps.append(lambda s: dataclasses.replace(s, grad=False))
    steps.append(lambda s: dataclasses.replace(s, outputs=1))
    steps.append(lambda s: dataclasses.replace(s, device_order=None))
    for k in range(len(spec.inputs)):
        for d in range(len(spec.inputs[k].shape)):
            steps.append(halve_input(k, d))
    return steps


def add_test(name: str, source: str, xfail: Optional[str] = None, tests_dir: pathlib.Path = TESTS_DIR) -> pathlib.Path:
    """Copies the reproducer folder `source` to tests/data/oracle/NAME; with `xfail`, the
    regression test expects it to fail (strictly) for that reason until gspmd is fixed."""
    src = pathlib.Path(source)
    if not (src / "meta.json").exists():
        raise FileNotFoundError(f"{src}: not a reproducer folder (no meta.json)")
    if not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"test name '{name}': use letters, digits, '_' and '-'")
    dest = tests_dir / name
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest)
    meta = json.loads((dest / "meta.json").read_text())
    if xfail:
        meta["xfail"] = xfail
    else:
        meta.pop("xfail", None)
    (dest / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return dest
