"""Random JAX programs for the oracle: a seed gives a mesh, inputs with PartitionSpecs and a list of ops.

A program is a :class:`ProgramSpec`: plain data (JSON-able), so a reproducer can store it and the
minimizer can drop ops from it. Every op is ``(kind, seed)``; what it does (which values it reads,
its shapes, axes and window) is decided when the function is traced, from its own seed and the
shapes it finds. Any sub-list of ops therefore still builds a valid program::

    spec = generate(17, devices=8)           # mesh, inputs, ops, outputs, grad or not
    program = build(spec, jax)               # .fn, .in_shardings, .out_shardings, .args
    jax.jit(program.fn, in_shardings=program.in_shardings,
            out_shardings=program.out_shardings).lower(*program.args)

The grammar itself (what each kind does) is in grammar.py and grammar_control.py.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from . import grammar

__all__ = ["InputSpec", "OpSpec", "ProgramSpec", "Program", "generate", "build", "OP_KINDS", "GENERATOR_VERSION"]

# Bumped whenever a seed would make another program: a seed names a program of one version.
GENERATOR_VERSION = 1

# Op kinds and how often each is drawn (relative weights).
OP_KINDS: dict[str, float] = {
    "unary": 3, "binary": 3, "select": 1, "compare": 1, "convert": 1,
    "reduce": 2, "argmax": 1,
    "broadcast": 1, "reshape": 2, "transpose": 2,
    "slice": 2, "dynamic_slice": 1, "dynamic_update_slice": 1, "concatenate": 1, "pad": 1,
    "gather": 2, "take_along_axis": 1, "scatter": 2, "random": 0.7,
    "dot": 4, "conv": 1.5,
    "cumsum": 1, "reduce_window": 1,
    "sort": 1, "top_k": 1,
    "while_loop": 0.7, "fori_loop": 0.7, "scan": 0.7, "cond": 0.7,
    "constraint": 2.5, "shard_map": 1,
}

DTYPES = ("f32", "bf16", "s32", "pred")


@dataclass
class InputSpec:
    shape: list[int]
    dtype: str                      # f32, bf16, s32, pred
    spec: list[Any]                 # PartitionSpec entries: None, "x", or ["x", "y"]


@dataclass
class OpSpec:
    kind: str
    seed: int


@dataclass
class ProgramSpec:
    seed: int
    mesh_shape: list[int]
    axis_names: list[str]
    device_order: Optional[list[int]]      # None: devices 0..n-1 in order
    inputs: list[InputSpec]
    ops: list[OpSpec]
    outputs: int                           # how many of the last values the function returns
    output_seed: int                       # draws which results get an out_sharding, and which
    grad: bool = False                     # return (loss, d loss / d f32 inputs) instead
    note: str = ""
    version: int = GENERATOR_VERSION

    @property
    def devices(self) -> int:
        return int(np.prod(self.mesh_shape))

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1)

    @staticmethod
    def from_json(text: str) -> "ProgramSpec":
        d = json.loads(text)
        d["inputs"] = [InputSpec(**i) for i in d["inputs"]]
        d["ops"] = [OpSpec(**o) for o in d["ops"]]
        return ProgramSpec(**d)

    def summary(self) -> str:
        mesh = "x".join(f"{n}={s}" for n, s in zip(self.axis_names, self.mesh_shape))
        ins = ", ".join(f"{i.dtype}{i.shape}" for i in self.inputs)
        ops = " ".join(o.kind for o in self.ops)
        return f"mesh {mesh}; inputs {ins}; ops [{ops}]{'; grad' if self.grad else ''}"


@dataclass
class Program:
    """A built program: the function, its shardings and its arguments (numpy)."""
    fn: Any
    in_shardings: tuple
    out_shardings: Any
    args: list[np.ndarray]
    mesh: Any
    trace: "grammar.Trace" = field(default_factory=lambda: grammar.Trace())


# ---------------------------------------------------------------------------------------------
# Drawing a spec.

def _mesh_sizes(devices: int) -> list[int]:
    sizes = [d for d in (2, 4, 8) if d <= devices]
    big = [d for d in (16, 32) if d <= devices]
    return sizes + big


def _draw_mesh(rng: np.random.Generator, devices: int) -> tuple[list[int], list[str], Optional[list[int]]]:
    sizes = _mesh_sizes(devices)
    weights = np.array([1.0 if s < 16 else 0.15 for s in sizes])
    if devices in sizes and devices < 16:
        weights[sizes.index(devices)] = 3.0
    n = int(rng.choice(sizes, p=weights / weights.sum()))
    # Factor n into 1-3 axes of size >= 2 (powers of two), sometimes with a size-1 axis.
    log = int(np.log2(n))
    num_axes = int(rng.integers(1, min(3, log) + 1))
    cuts = sorted(rng.choice(np.arange(1, log), size=num_axes - 1, replace=False).tolist()) if num_axes > 1 else []
    bounds = [0] + cuts + [log]
    shape = [2 ** (bounds[i + 1] - bounds[i]) for i in range(num_axes)]
    if rng.random() < 0.05 and len(shape) < 3:
        shape.insert(int(rng.integers(0, len(shape) + 1)), 1)
    names = [["x", "y", "z"], ["data", "model", "expert"], ["a", "b", "c"]][int(rng.integers(0, 3))][: len(shape)]
    order = rng.permutation(n).tolist() if rng.random() < 0.2 else None
    return shape, names, order


def random_spec(rng: np.random.Generator, shape: list[int], mesh_shape: list[int], axis_names: list[str],
                even: bool, density: float = 0.5) -> list[Any]:
    """A PartitionSpec for `shape`: each mesh axis goes to one dim (or none) with probability
    `density`; with even=True only where the dim stays divisible."""
    dims: list[list[str]] = [[] for _ in shape]
    for a in rng.permutation(len(axis_names)).tolist():
        if not shape or rng.random() >= density:
            continue
        d = int(rng.integers(0, len(shape)))
        split = int(np.prod([mesh_shape[axis_names.index(n)] for n in dims[d]])) * mesh_shape[a]
        if even and shape[d] % split != 0:
            continue
        if not even and split > 2 * shape[d]:
            continue
        dims[d].append(axis_names[a])
    spec: list[Any] = [None if not d else (d[0] if len(d) == 1 else list(d)) for d in dims]
    while spec and spec[-1] is None:
        spec.pop()
    return spec


def _draw_shape(rng: np.random.Generator, mesh_shape: list[int]) -> list[int]:
    rank = int(rng.choice([1, 2, 3, 4], p=[0.2, 0.45, 0.25, 0.1]))
    even = [2, 4, 8, 16] + [s for s in mesh_shape if s > 1]
    shape = []
    for _ in range(rank):
        if rng.random() < 0.7:
            shape.append(int(rng.choice(even)))
        else:
            shape.append(int(rng.choice([1, 3, 5, 6, 7, 12])))
    while int(np.prod(shape)) > 2048:
        shape[int(np.argmax(shape))] //= 2
    return shape


def generate(seed: int, devices: int = 8) -> ProgramSpec:
    """The program of `seed` for a machine of `devices` devices (its mesh uses at most that many)."""
    rng = np.random.default_rng([seed, 0x0A11CE])
    mesh_shape, axis_names, order = _draw_mesh(rng, devices)
    inputs = []
    for _ in range(int(rng.integers(1, 5))):
        shape = _draw_shape(rng, mesh_shape)
        dtype = str(rng.choice(DTYPES, p=[0.62, 0.12, 0.16, 0.10]))
        inputs.append(InputSpec(shape, dtype, random_spec(rng, shape, mesh_shape, axis_names, even=True, density=0.6)))
    if not any(i.dtype == "f32" for i in inputs) and rng.random() < 0.7:
        inputs[0].dtype = "f32"
    kinds = list(OP_KINDS)
    weights = np.array([OP_KINDS[k] for k in kinds])
    ops = [OpSpec(str(rng.choice(kinds, p=weights / weights.sum())), int(rng.integers(0, 2**31)))
           for _ in range(int(rng.integers(1, 11)))]
    grad = bool(rng.random() < 0.2 and any(i.dtype == "f32" for i in inputs))
    return ProgramSpec(seed=seed, mesh_shape=mesh_shape, axis_names=axis_names, device_order=order,
                       inputs=inputs, ops=ops, outputs=int(rng.integers(1, 4)),
                       output_seed=int(rng.integers(0, 2**31)), grad=grad)


# ---------------------------------------------------------------------------------------------
# Building the function.

def input_arrays(spec: ProgramSpec) -> list[np.ndarray]:
    """The arguments: small exact values (f32/bf16 multiples of 1/4 in [-2, 2], s32 in [-5, 10])."""
    import ml_dtypes

    rng = np.random.default_rng([spec.seed, 0x1A9])
    arrays = []
    for i in spec.inputs:
        shape = tuple(i.shape)
        if i.dtype in ("f32", "bf16"):
            a = (rng.integers(-8, 9, size=shape) / 4).astype(np.float32)
            arrays.append(a.astype(ml_dtypes.bfloat16) if i.dtype == "bf16" else a)
        elif i.dtype == "s32":
            arrays.append(rng.integers(-5, 11, size=shape).astype(np.int32))
        else:
            arrays.append(rng.random(shape) < 0.5)
    return arrays


def make_mesh(spec: ProgramSpec, jax: Any) -> Any:
    devices = np.array(jax.devices()[: spec.devices])
    if spec.device_order is not None:
        devices = devices[np.array(spec.device_order)]
    return jax.sharding.Mesh(devices.reshape(spec.mesh_shape), tuple(spec.axis_names))


def partition_spec(jax: Any, entries: list[Any]) -> Any:
    return jax.sharding.PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in entries])


def build(spec: ProgramSpec, jax: Any, one_device: bool = False) -> Program:
    """The JAX function of `spec` with its in/out shardings and arguments. With `one_device`, the
    same function for one device and no shardings: constraints dropped, shard_map regions
    computed on the whole arrays (XLA's unpartitioned result, the tie-breaker of a mismatch)."""
    if one_device:
        mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]).reshape([1] * len(spec.mesh_shape)),
                                 tuple(spec.axis_names))
    else:
        mesh = make_mesh(spec, jax)
    named = lambda entries: jax.sharding.NamedSharding(mesh, partition_spec(jax, entries))  # noqa: E731
    args = input_arrays(spec)
    in_shardings = tuple(named([] if one_device else i.spec) for i in spec.inputs)
    trace = grammar.Trace()
    out_rng_seed = spec.output_seed

    def body(*xs):
        ctx = grammar.Context(jax, mesh, spec, trace, one_device=one_device)
        pool = grammar.Pool(list(xs), [i.dtype == "bf16" for i in spec.inputs])
        for op in spec.ops:
            ctx.apply(op.kind, op.seed, pool)
        return pool.results(spec.outputs, ctx)

    if not spec.grad:
        def fn(*xs):
            outs = body(*xs)
            trace.outputs = [(tuple(o.shape), grammar.dtype_name(o.dtype)) for o, _ in outs]
            trace.lowp = [l for _, l in outs]
            return tuple(o for o, _ in outs)
    else:
        fn = _grad_function(jax, spec, body, trace)

    # Out shardings are drawn for the shapes the function returns (found by tracing it once).
    shapes = jax.eval_shape(fn, *[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args])
    rng = np.random.default_rng([out_rng_seed, 0x0B7])
    outs = []
    trace.fixed = []
    for s in shapes:
        if rng.random() < 0.6 and not one_device:
            entries = random_spec(rng, list(s.shape), spec.mesh_shape, spec.axis_names, even=True, density=0.5)
            outs.append(named(entries))
            trace.fixed.append(True)
        else:
            outs.append(None)
            trace.fixed.append(False)
    return Program(fn=fn, in_shardings=in_shardings, out_shardings=tuple(outs), args=args, mesh=mesh, trace=trace)


def _grad_function(jax: Any, spec: ProgramSpec, body: Any, trace: "grammar.Trace") -> Any:
    """(loss, d loss / d x for every f32 input x): loss sums the float results, each weighed differently."""
    jnp = jax.numpy
    wrt = [k for k, i in enumerate(spec.inputs) if i.dtype == "f32"]

    def loss(*xs):
        outs = body(*xs)
        total = jnp.float32(0)
        lowp = False
        for k, (o, l) in enumerate(outs):
            if o.dtype in (jnp.float32, jnp.bfloat16):
                total = total + jnp.sum(o.astype(jnp.float32)) * (0.5 + 0.25 * k)
                lowp = lowp or l
        trace.grad_lowp = lowp
        return total

    def fn(*xs):
        value, grads = jax.value_and_grad(loss, argnums=tuple(wrt))(*xs)
        results = (value,) + tuple(grads)
        trace.outputs = [(tuple(r.shape), grammar.dtype_name(r.dtype)) for r in results]
        trace.lowp = [trace.grad_lowp] * len(results)
        return results

    return fn
