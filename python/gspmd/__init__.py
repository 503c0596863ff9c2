"""gspmd: GSPMD's sharding propagation and SPMD partitioner, with an interpreter and a runtime of simulated devices.

Load a program (HLO text, StableHLO from JAX, or a built-in model), partition it, see what it
costs, and run it on simulated devices with numpy arrays::

    import gspmd, numpy as np
    p = gspmd.load("tests/data/corpus/gspmd/megatron_mlp/pre.hlo")
    per_device = p.partition()                   # the SPMD program, with collectives
    per_device.report()["comm_bytes_per_device"]  # the same number as `gspmd report --json`
    out = p.run(*[np.load(f"tests/data/corpus/gspmd/megatron_mlp/in{i}.npy") for i in range(5)])

Errors are :class:`gspmd.Error` subclasses (:class:`ParseError`, :class:`ShardingError`,
:class:`InputError`, :class:`ResourceError`) whose messages say ``FILE:LINE:COL`` and what was
expected, as the ``gspmd`` command prints them.
"""

from __future__ import annotations

from ._errors import Error, InputError, ParseError, ResourceError, ShardingError
from ._arrays import Parameter
from ._mesh import Mesh
from ._program import Autosharded, Finding, Program, from_text, load
from ._show import Shown
from ._jax import from_jax
from ._train import TrainStep, model, train

__version__ = "0.1.0"

__all__ = [
    "Error", "ParseError", "ShardingError", "InputError", "ResourceError",
    "Program", "Autosharded", "Finding", "Parameter", "Mesh", "Shown", "TrainStep",
    "load", "from_text", "from_jax", "model", "train",
]
