"""gspmd.Program: one program (global or per-device) and everything the library does with it.

Each method is one call into the library API (src/api/gspmd.h); a method that changes the
program returns a new Program and leaves this one as it was.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from . import _gspmd
from ._arrays import Parameter, from_outputs, to_inputs
from ._mesh import Mesh, Spec, specs_for_library
from ._show import Shown

__all__ = ["Program", "Finding", "load", "from_text"]

Boundary = Union[None, bool, Sequence[bool], str]


def _boundary(value: Boundary) -> str:
    """propagate_to_parameters / _outputs as the library spells them ("true", "false,true")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return ",".join("true" if v else "false" for v in value)


def _devices(devices: Optional[int]) -> int:
    if devices is None:
        return 0
    if isinstance(devices, bool) or not isinstance(devices, (int, np.integer)) or devices < 1:
        from ._errors import InputError

        raise InputError(f"gspmd: error: devices={devices!r} is not a positive device count")
    return int(devices)


@dataclass(frozen=True)
class Finding:
    """One lint finding: where, which check, what it costs and how to fix it.

    ``location`` is ``FILE:LINE:COL`` of the instruction; ``kind`` the check (``conflict``,
    ``full-remat``, ``uneven-padding``, ``replicated``, ``unused-axis``, ``redundant``);
    ``bytes`` its cost per device; ``fix`` the suggested annotation ("" when none).
    """

    location: str
    kind: str
    message: str
    bytes: float
    fix: str
    severity: str = "warning"
    instruction: str = ""
    annotation: str = ""
    fix_bytes: float = 0.0
    comm_bytes_before: float = 0.0
    comm_bytes_after: float = 0.0

    def __str__(self) -> str:
        text = f"{self.location}: {self.severity}: {self.message} [{self.kind}]"
        return text + (f"\n  fix: {self.fix}" if self.fix else "")


def _finding(entry: Mapping[str, Any]) -> Finding:
    location = entry["file"]
    if entry.get("line"):
        location += f":{entry['line']}"
        if entry.get("column"):
            location += f":{entry['column']}"
    fix = entry.get("fix") or {}
    return Finding(location=location, kind=entry["check"], message=entry["message"],
                   bytes=float(entry["bytes_per_device"]), fix=fix.get("text", ""), severity=entry["severity"],
                   instruction=entry.get("instruction", ""), annotation=entry.get("annotation", ""),
                   fix_bytes=float(fix.get("bytes_per_device", 0.0)),
                   comm_bytes_before=float(fix.get("comm_bytes_per_device_before", 0.0)),
                   comm_bytes_after=float(fix.get("comm_bytes_per_device_after", 0.0)))



@dataclass(frozen=True)
class Autosharded:
    """What :meth:`Program.autoshard` found: the program with the plan's annotations and the
    figures (``mesh``, ``step_time_s``, ``mfu``, ``peak_bytes_per_device``, ``fits_memory``,
    ``solve_time_s``, ``lower_bound_s``, ``plan``, ``meshes``, ``recipes``)."""

    program: "Program"
    summary: dict

class Program:
    """A program: HLO or StableHLO read into gspmd's IR, global or per-device.

    Make one with :func:`gspmd.load`, :func:`gspmd.from_text`, :func:`gspmd.from_jax` or
    :func:`gspmd.model`::

        >>> import gspmd, numpy as np
        >>> p = gspmd.from_text('''
        ... HloModule m, num_partitions=2
        ... ENTRY e {
        ...   x = f32[4,2] parameter(0), sharding={devices=[2,1]<=[2]}
        ...   ROOT n = f32[4,2] negate(x)
        ... }''')
        >>> p.run(np.ones((4, 2), np.float32))[0][0]
        array([-1., -1.], dtype=float32)
        >>> p.partition().report()["comm_bytes_per_device"]
        0.0
    """

    def __init__(self, core: "_gspmd.Program", *, like: Optional["Program"] = None, text: Optional[str] = None,
                 warnings: Sequence[str] = ()) -> None:
        self._core = core
        self._like = like
        self._text = text
        self.warnings: list[str] = list(warnings)
        """The partitioner's warnings ("involuntary full rematerialization of %x ...")."""

    # What the program is.
    @property
    def name(self) -> str:
        """The file it came from, or the name given for text ("<text>", "<jax:f>")."""
        return self._core.name

    @property
    def is_per_device(self) -> bool:
        """Whether it is a per-device (partitioned) program: collectives or partition-id outside manual regions."""
        return self._core.is_per_device()

    @property
    def needs_propagation(self) -> bool:
        """Whether some instruction still lacks a sharding."""
        return self._core.needs_propagation()

    @property
    def num_partitions(self) -> int:
        """The module's num_partitions (1 when it does not say)."""
        return self._core.num_partitions

    @property
    def parameters(self) -> list[Parameter]:
        """The entry parameters, in order: index, name, HLO element type, shape."""
        return [Parameter(i, name, type_name, tuple(dims))
                for i, (name, type_name, dims) in enumerate(self._core.parameters())]

    def text(self) -> str:
        """The program as XLA's HLO text (with ``propagate(explain=True)``, each instruction says where its sharding came from)."""
        return self._text if self._text is not None else self._core.text()

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes :meth:`text` to ``path`` (:class:`gspmd.ResourceError` when it cannot be written)."""
        _gspmd.write_text(os.fspath(path), self.text())

    def __repr__(self) -> str:
        kind = "per-device" if self.is_per_device else "global"
        return f"<gspmd.Program {self.name} ({kind}, {len(self.parameters)} parameters, num_partitions={self.num_partitions})>"

    # Compiling.
    def annotate(self, specs: Mapping[Union[str, int], Spec], mesh: Union[Mesh, Mapping[str, int]]) -> "Program":
        """Sets entry parameters' shardings in JAX's vocabulary and returns the annotated program.

        ``specs`` maps a parameter (its name, with or without ``%``, or its index) to a
        PartitionSpec-like tuple: one entry per leading dim, each ``None`` (not split), a mesh
        axis name, or a tuple of names (split over their product, major first). Mesh axes a
        spec does not use replicate the value, as in JAX::

            >>> mesh = gspmd.Mesh({"data": 2, "model": 4})
            >>> q = p.annotate({"x": ("data", None), 1: (None, "model")}, mesh)
        """
        if not isinstance(mesh, Mesh):
            mesh = Mesh(mesh)
        return Program(_gspmd.annotate(self._core, specs_for_library(specs), list(mesh.axes.items())))

    def autoshard(self, devices: Optional[int] = None, *, chip: str = "tpu-v3",
                  mesh: Union[None, str, Mesh, Mapping[str, int]] = None, memory_budget: Optional[int] = None,
                  keep: str = "all", time_limit: float = 60.0, max_evaluations: int = 0,
                  compute_type: str = "", mixed_precision: str = "", explain: bool = False) -> "Autosharded":
        """Finds a sharding plan (``gspmd autoshard``): the mesh and the parameters' PartitionSpecs.

        Every plan weighed is partitioned and simulated on ``chip``; ``mesh`` fixes the mesh
        (else every mesh of 1 to 3 axes over ``devices`` is searched), ``memory_budget`` is bytes
        per device (default: the chip's memory), ``keep`` which of the program's own annotations
        stay (``all``, ``boundary``, ``none``). Returns the annotated program and the figures of
        ``gspmd autoshard --json``::

            >>> plan = gspmd.model("dense_lm", sharding="none").autoshard(devices=8)
            >>> plan.summary["step_time_s"], plan.program.partition()
        """
        if isinstance(mesh, Mesh):
            mesh_text = ",".join(f"{name}={size}" for name, size in mesh.axes.items())
        elif isinstance(mesh, Mapping):
            mesh_text = ",".join(f"{name}={size}" for name, size in mesh.items())
        else:
            mesh_text = mesh or ""
        core, summary = _gspmd.autoshard(self._core, _devices(devices), chip, mesh_text, int(memory_budget or 0), keep,
                                         float(time_limit), int(max_evaluations), compute_type, mixed_precision,
                                         explain)
        return Autosharded(Program(core), json.loads(summary))

    def propagate(self, explain: bool = False, *, devices: Optional[int] = None,
                  propagate_to_parameters: Boundary = None, propagate_to_outputs: Boundary = None) -> "Program":
        """Gives every instruction a sharding (sharding propagation) and returns the result.

        With ``explain=True`` its :meth:`text` says where each sharding came from
        (``/* from %w (user) via dot backward */``).
        """
        core, text = _gspmd.propagate(self._core, _devices(devices), explain, _boundary(propagate_to_parameters),
                                      _boundary(propagate_to_outputs))
        return Program(core, text=text if explain else None)

    def partition(self, devices: Optional[int] = None, *, propagate_to_parameters: Boundary = None,
                  propagate_to_outputs: Boundary = None) -> "Program":
        """Propagates (where needed) and partitions into the per-device program for ``devices``.

        The result remembers the global program it came from, so ``run`` takes and returns
        global arrays; its ``warnings`` are the partitioner's.
        """
        global_core, per_device, _, warnings = _gspmd.partition(
            self._core, _devices(devices), _boundary(propagate_to_parameters), _boundary(propagate_to_outputs))
        return Program(per_device, like=Program(global_core), warnings=warnings)

    # Reading what it costs and how it is laid out.
    def report(self) -> dict:
        """Communication of a per-device program, with the keys of ``gspmd report --json``.

        Bytes sent per device by collective kind (ring model; loops times their trip count),
        collective counts and peak live bytes. Use ``partition().report()`` for a global program.
        """
        return json.loads(_gspmd.report(self._core))

    def simulate(self, chip: str = "tpu-v3", **options: Any) -> dict:
        """One step on a chip and cluster, with the keys of ``gspmd simulate --json``.

        ``chip`` is a built-in name (``tpu-v3``, ``tpu-v4``, ``a100``, ``h100``) or a chip
        ``.json``; options: ``topology`` ("8x8"), ``placement``, ``devices``, ``compute_type``,
        ``mixed_precision``, ``breakdown`` (``op_name``, ``layer``, ``opcode``),
        ``breakdown_depth``, ``rematerialize``, ``per_device``. A global program is partitioned first.
        """
        known = {"topology", "placement", "devices", "compute_type", "mixed_precision", "breakdown",
                 "breakdown_depth", "rematerialize", "per_device"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"simulate() got unexpected option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        if "devices" in options:
            options["devices"] = _devices(options["devices"])
        return json.loads(_gspmd.simulate(self._core, chip, **options))

    def lint(self, *, devices: Optional[int] = None, padding_threshold: float = 0.10, large_mib: float = 1.0,
             redundant: bool = False, search: bool = True, time_limit: float = 10.0, chip: str = "tpu-v3",
             max_evaluations: int = 0) -> list[Finding]:
        """Annotations of a global program that cost more than they should, each with a fix (``gspmd lint``).

        ``search`` runs autoshard's search for the ``plan`` check (a plan at least 10% faster on
        ``chip``, within ``time_limit`` seconds; ``max_evaluations`` fixes its result), as the CLI
        does unless ``--no-search``.
        """
        report = json.loads(_gspmd.lint(self._core, _devices(devices), padding_threshold,
                                        int(large_mib * (1 << 20)), redundant, search, float(time_limit), chip,
                                        int(max_evaluations)))
        return [_finding(entry) for entry in report["findings"]]

    def show(self, values: Optional[Sequence[str]] = None, *, devices: Optional[int] = None,
             summary: bool = False) -> Shown:
        """How values are laid out over the devices: tile grids as text (``gspmd show``).

        Default: the entry parameters and the result (the first 40 of a larger program, then a
        line saying how many more). In a notebook the returned object draws the grids in colour.
        ``summary=True`` lists one line per value (shape, sharding, tiles per device) instead::

            >>> print(step.show(summary=True))
        """
        values = list(values or [])
        count = _devices(devices)
        if summary:
            text = _gspmd.show(self._core, values, count, False, True)
            return Shown(text, lambda: text)
        return Shown(_gspmd.show(self._core, values, count, False),
                     lambda: _gspmd.show(self._core, values, count, True))

    def _repr_html_(self) -> str:
        return self.show()._repr_html_()

    # Running.
    def run(self, *arrays: Any, devices: Optional[int] = None, like: Optional["Program"] = None) -> list[np.ndarray]:
        """Runs on simulated devices (threads): global numpy arrays in, global arrays out.

        A global program is partitioned first; a per-device one (from :meth:`partition`)
        runs as it is. One array per entry parameter, of its dtype and shape. ``like`` is the
        global program a per-device one read from a file came from (XLA's ``propagated.hlo``
        for its ``partitioned.hlo``): it gives the shardings and global shapes the file lacks.
        """
        like = like or self._like
        inputs = self._inputs(arrays, like or self)
        return from_outputs(_gspmd.run(self._core, inputs, _devices(devices), like._core if like else None))

    def eval(self, *arrays: Any) -> list[np.ndarray]:
        """Runs a global program on one device with the reference interpreter."""
        return from_outputs(_gspmd.eval(self._core, self._inputs(arrays, self)))

    def _inputs(self, arrays: Sequence[Any], described: "Program") -> list:
        return to_inputs(arrays, described.parameters, self.name)


def load(path_or_text: Union[str, os.PathLike], *, format: str = "auto") -> Program:
    """Reads a program from a file, or from text when given a string holding a module.

    A path ending in ``.mlir`` is StableHLO (what ``jax.jit(f).lower(...).as_text()`` gives),
    anything else HLO text; ``format`` ("hlo", "stablehlo") overrides that. Text is recognised
    by its first word (``HloModule``, ``module``, ``func.func``)::

        >>> p = gspmd.load("tests/data/corpus/gspmd/dp_matmul/pre.hlo")
    """
    if isinstance(path_or_text, str) and _looks_like_text(path_or_text):
        return from_text(path_or_text, format=format)
    return Program(_gspmd.Program.load(os.fspath(path_or_text), format))


def from_text(text: str, name: str = "<text>", *, format: str = "auto") -> Program:
    """Parses HLO or StableHLO text; ``name`` stands for the file in error messages."""
    if format == "auto":
        format = "stablehlo" if _looks_like_stablehlo(text) else "hlo"
    return Program(_gspmd.Program.from_text(text, name, format))


def _first_word(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("//", "#")):
            return stripped.split(None, 1)[0]
    return ""


def _looks_like_text(value: str) -> bool:
    return "\n" in value or _first_word(value) in ("HloModule", "module", "func.func")


def _looks_like_stablehlo(text: str) -> bool:
    return _first_word(text) in ("module", "func.func", "#loc", "sdy.mesh")
