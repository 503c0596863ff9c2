"""gspmd.model and gspmd.train: the built-in models' training steps, trained on simulated devices."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from . import _gspmd
from ._arrays import from_outputs, to_inputs
from ._mesh import Mesh
from ._program import Program, _devices

__all__ = ["model", "train", "TrainStep"]


def _setting(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def model(name: Optional[str] = None, *, preset: Optional[str] = None,
          mesh: Union[None, str, Mesh, Mapping[str, int]] = None, **keys: Any) -> Program:
    """A built-in model's training step (``gspmd model``), with only the user's annotations.

    ``name`` is ``dense_lm``, ``gshard_moe`` or ``pipelined_lm`` (or give ``preset=``, e.g.
    ``gshard-128e-12l``); ``keys`` override the model's keys (``gspmd model NAME --keys``) and
    ``mesh`` its mesh::

        >>> step = gspmd.model("dense_lm", layers=2, mesh={"x": 2, "y": 4})
        >>> step.parameters[0].name
    """
    if isinstance(mesh, Mesh):
        mesh_text = mesh.text()
    elif isinstance(mesh, Mapping):
        mesh_text = Mesh(mesh).text()
    else:
        mesh_text = mesh or ""
    settings = [f"{key}={_setting(value)}" for key, value in keys.items()]
    return Program(_gspmd.model(name or "", preset or "", settings, mesh_text))


@dataclass(frozen=True)
class TrainStep:
    """What the train callback gets after each step.

    ``loss`` is the first metric (None when the step has none); ``metrics`` every metric by name.
    """

    step: int
    loss: Optional[float]
    metrics: dict = field(default_factory=dict)
    seconds: float = 0.0
    check_seconds: float = 0.0


def train(program: Program, steps: int, check: bool = False, callback: Optional[Callable[[TrainStep], Any]] = None,
          *, devices: Optional[int] = None, inputs: Optional[Sequence[Any]] = None, carry: Optional[str] = None,
          data: Union[None, str, os.PathLike] = None, rtol: float = 1e-4, atol: float = 1e-6,
          seed: int = 0) -> list[np.ndarray]:
    """Trains a step for ``steps`` steps on simulated devices (``gspmd train``); returns the last step's outputs.

    The step is partitioned once; each step's carried outputs (``gspmd.carry``, else ``carry``
    "OUT:IN,...", else inferred) feed the next. Without ``inputs`` the module's own inits
    (seeded by ``seed``) and synthetic batches are used; ``data`` is a directory of batches.
    ``check=True`` also runs every step on one device and raises :class:`gspmd.Error` at the
    first difference. ``callback(TrainStep)`` runs after each step::

        >>> losses = []
        >>> gspmd.train(step, 3, check=True, callback=lambda s: losses.append(s.loss))
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"train: steps must be an int, not {type(steps).__name__}")
    arrays = to_inputs(list(inputs), program.parameters, program.name) if inputs is not None else []

    def on_step(step: int, names: list, values: list, seconds: float, check_seconds: float) -> None:
        metrics = dict(zip(names, values))
        callback(TrainStep(step, values[0] if values else None, metrics, seconds, check_seconds))

    outputs = _gspmd.train(program._core, int(steps), _devices(devices), carry or "",
                           os.fspath(data) if data is not None else "", arrays, check, rtol, atol, seed,
                           on_step if callback is not None else None)
    return from_outputs(outputs)
