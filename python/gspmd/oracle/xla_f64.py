"""XLA's own run of a program with every f32 made f64: the tie-breaker when gspmd's interpreter and
XLA:CPU disagree on an f32 result without any partitioning involved.

XLA:CPU computes tanh, exp, log and their kin by approximations a few ulp off, and a result that
cancels afterwards (1 - tanh(x)^2 near saturation, in a gradient) can then be off by tens of
percent. Whether such a difference is XLA's rounding or a bug of ours is decided by XLA itself:
the same StableHLO, widened to f64, compiled by XLA for the same devices and shardings. When
that agrees with ours and not with XLA's f32 result, the f32 difference is rounding; when it
agrees with XLA's f32 result (a semantic difference, or XLA's own partitioning bug), it is not.

The run happens in a child process (``python xla_f64.py IN_DIR OUT_DIR DEVICES``), so that
turning on JAX's 64-bit mode cannot change the programs the parent goes on to check.
"""

from __future__ import annotations

import glob
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Optional, Sequence

import numpy as np

if __package__ in (None, ""):  # the child process runs this file as a script: import its folder as `oracle`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "oracle"

from .backend import load_npy  # noqa: E402  (bf16 arrays: np.load reads them as |V2)

_F32 = re.compile(r"(?:(?<![A-Za-z0-9_])|(?<=x))f32(?![A-Za-z0-9_])")  # tensor<f32>, 4x2xf32, : f32
_SDY = re.compile(r"#sdy\.sharding<@(\w+), \[([^\]]*)\][^>]*>")
_MHLO = re.compile(r'mhlo\.sharding = "[^"]*"')
# `%r = stablehlo.bitcast_convert %x : (tensor<16xui32>) -> tensor<16xf32>`, the pretty form
_BITS_TO_F32 = re.compile(r"^(\s*)(%[\w.]+) = stablehlo\.bitcast_convert (%[\w.#]+) : "
                          r"\(tensor<((?:\d+x)*)(u?i32)>\) -> tensor<((?:\d+x)*)f32>\s*$")
_KEEP = "F32KEPT"  # an f32 the widening leaves alone (no f32 pattern matches it)


def widen(mlir: str) -> Optional[str]:
    """`mlir` with every f32 made f64 and main's arguments and results replicated (each device is
    given the whole inputs; the shardings inside stay, so XLA partitions as it did). None for a
    program the rewrite would change in meaning: a bitcast of f32 to integers. A bitcast of 32-bit
    integers to f32 (how jax.random makes floats) stays an f32 bitcast and is converted to f64
    after it, which gives the same values."""
    kept = []
    for line in mlir.split("\n"):
        if "bitcast_convert" in line:
            match = _BITS_TO_F32.match(line)
            if match is None:
                return None
            indent, result, operand, dims_in, ints, dims_out = match.groups()
            bits = f"%f32_bits_{result[1:]}"
            kept.append(f"{indent}{bits} = stablehlo.bitcast_convert {operand} : (tensor<{dims_in}{ints}>) -> "
                        f"tensor<{dims_out}{_KEEP}>")
            line = f"{indent}{result} = stablehlo.convert {bits} : (tensor<{dims_out}{_KEEP}>) -> tensor<{dims_out}f32>"
        kept.append(line)
    lines = _F32.sub("f64", "\n".join(kept)).replace(_KEEP, "f32").split("\n")
    main = next((k for k, line in enumerate(lines) if "func.func public @main" in line), None)
    if main is None:
        return None

    def whole(match: re.Match) -> str:
        dims = match.group(2).count("{")
        return f"#sdy.sharding<@{match.group(1)}, [{', '.join(['{}'] * dims)}]>"

    lines[main] = _SDY.sub(whole, _MHLO.sub('mhlo.sharding = "{replicated}"', lines[main]))
    return "\n".join(lines)


def outputs(mlir: str, inputs: Sequence[np.ndarray], devices: int, timeout: float = 300) -> Optional[list]:
    """XLA's results of `mlir` widened to f64 (None when it cannot be widened, compiled or run)."""
    text = widen(mlir)
    if text is None:
        return None
    with tempfile.TemporaryDirectory(prefix="gspmd_oracle_xla_f64_") as tmp:
        folder = pathlib.Path(tmp)
        (folder / "program.mlir").write_text(text)
        for k, a in enumerate(inputs):
            np.save(folder / f"in{k}.npy", a.astype(np.float64) if a.dtype == np.float32 else a)
        env = dict(os.environ)
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={max(devices, 1)}"
        env["JAX_PLATFORMS"] = "cpu"
        try:
            done = subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), tmp, tmp, str(devices)],
                                  capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return None
        if done.returncode != 0:
            return None
        count = len(glob.glob(str(folder / "out*.npy")))
        return [load_npy(str(folder / f"out{k}.npy")) for k in range(count)]


def _run(in_dir: str, out_dir: str, devices: int) -> None:
    import jax
    jax.config.update("jax_enable_x64", True)
    from jax._src import xla_bridge
    from jax._src.lib import xla_client
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    text = pathlib.Path(in_dir, "program.mlir").read_text()
    options = xla_client.CompileOptions()
    options.num_replicas = 1
    options.num_partitions = devices
    options.executable_build_options.use_spmd_partitioning = True
    options.executable_build_options.use_shardy_partitioner = "sdy." in text
    options.device_assignment = xla_client.DeviceAssignment.create(np.arange(devices).reshape(1, devices))
    chosen = jax.devices("cpu")[:devices]
    backend = xla_bridge.get_backend("cpu")
    executable = backend.compile_and_load(text.encode(), xla_client.DeviceList(tuple(chosen)), options)
    count = len(glob.glob(os.path.join(in_dir, "in*.npy")))
    everywhere = NamedSharding(Mesh(np.array(chosen), ("all",)), PartitionSpec())
    args = [jax.device_put(load_npy(os.path.join(in_dir, f"in{k}.npy")), everywhere) for k in range(count)]
    results = executable.execute_sharded(args).disassemble_into_single_device_arrays()
    for k, pieces in enumerate(results):
        np.save(os.path.join(out_dir, f"out{k}.npy"), np.asarray(pieces[0]))


if __name__ == "__main__":
    _run(sys.argv[1], sys.argv[2], int(sys.argv[3]))
