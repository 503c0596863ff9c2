"""gspmd.from_jax: a program from what ``jax.jit(f, ...).lower(*args)`` gives."""

from __future__ import annotations

import re
from typing import Any

from ._errors import InputError
from ._program import Program, from_text

__all__ = ["from_jax"]


def from_jax(lowered: Any) -> Program:
    """Reads a JAX ``Lowered`` (StableHLO with its Shardy or GSPMD shardings, as ``lower().as_text()`` gives it).

    JAX itself is not needed to call this; only the object it made::

        >>> f = jax.jit(lambda x, w: x @ w, in_shardings=(row, col), out_shardings=row)
        >>> p = gspmd.from_jax(f.lower(x, w))
        >>> p.run(x, w)[0]            # equals f(x, w)
    """
    kind = type(lowered).__name__
    if kind == "Compiled":
        raise InputError("from_jax: error: got a jax.stages.Compiled; pass the Lowered (jax.jit(f).lower(*args)), or "
                         "read XLA's compiled program with gspmd.load(compiled.as_text())")
    as_text = getattr(lowered, "as_text", None)
    if not callable(as_text):
        raise InputError(f"from_jax: error: got {kind}; expected a jax.stages.Lowered (jax.jit(f).lower(*args))")
    text = as_text()
    if not isinstance(text, str):
        raise InputError(f"from_jax: error: {kind}.as_text() returned {type(text).__name__}, not StableHLO text")
    match = re.search(r"module @([\w.$-]+)", text)
    name = match.group(1) if match else "lowered"
    if name.startswith("jit_"):
        name = name[len("jit_"):]
    return from_text(text, f"<jax:{name}>", format="stablehlo")
