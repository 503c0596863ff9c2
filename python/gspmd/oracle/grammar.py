"""The oracle's op grammar: what each op kind of a generated program does, decided at trace time.

Each op reads values from the pool (the inputs and every earlier op's results), draws its details
(axes, sizes, windows) from its own seed and the shapes it finds, and appends its results. An op
that does not fit what it finds (a transpose of a scalar) falls back to an element-wise op, so
every sub-list of ops builds. Values stay small (at most MAX_ELEMS elements) and keep to what
both sides compute the same way: no float -> int conversions (rounding could flip them), no
division by values that may be zero, scatters that set only distinct indices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

MAX_ELEMS = 4096
MAX_RANK = 5


def dtype_name(dtype: Any) -> str:
    name = np.dtype(dtype).name
    return {"float32": "f32", "bfloat16": "bf16", "int32": "s32", "bool": "pred"}.get(name, name)


@dataclass
class Trace:
    """What tracing the function found out: result shapes and types, which results passed
    through bf16 (compared at bf16's precision), which have a user-fixed out sharding."""
    outputs: list = field(default_factory=list)
    lowp: list = field(default_factory=list)
    fixed: list = field(default_factory=list)
    grad_lowp: bool = False


class Pool:
    """The values an op may read: the inputs, then every op's results in order; `lowp` marks
    values computed through bf16."""

    def __init__(self, values: list, lowp: list[bool]):
        self.values = values
        self.lowp = lowp
        self.first_op_value = len(values)

    def add(self, value: Any, lowp: bool) -> None:
        self.values.append(value)
        self.lowp.append(lowp)

    def pick(self, rng: np.random.Generator, accept: Callable[[Any], bool] = lambda v: True) -> Optional[int]:
        """An index of a value `accept` takes, most often one of the last few."""
        ok = [k for k, v in enumerate(self.values) if accept(v)]
        if not ok:
            return None
        if rng.random() < 0.7:
            return int(ok[-1 - int(rng.integers(0, min(3, len(ok))))])
        return int(ok[int(rng.integers(0, len(ok)))])

    def results(self, count: int, ctx: "Context") -> list:
        made = list(range(self.first_op_value, len(self.values)))
        chosen = made[-count:] if made else [len(self.values) - 1]
        return [(self.values[k], self.lowp[k]) for k in chosen]


class Context:
    """The op being applied: JAX, the mesh, the program spec, the trace. Ops decide what they do
    from the spec's mesh sizes even when `one_device` builds the same values for one device."""

    def __init__(self, jax: Any, mesh: Any, spec: Any, trace: Trace, one_device: bool = False):
        self.one_device = one_device          # no partitioning: the same values on one device
        self.jax = jax
        self.jnp = jax.numpy
        self.lax = jax.lax
        self.mesh = mesh
        self.spec = spec
        self.trace = trace

    def apply(self, kind: str, seed: int, pool: Pool) -> None:
        rng = np.random.default_rng([seed, 0x0F])
        from . import grammar_control  # the control-flow and sharding kinds

        op = OPS.get(kind) or grammar_control.OPS.get(kind)
        if op is None:
            raise ValueError(f"unknown op kind '{kind}'")
        made = op(self, rng, pool)
        if made is None:
            made = op_unary(self, rng, pool)
        for value, lowp in made:
            pool.add(value, lowp)

    # --- helpers the ops share.

    def is_float(self, v: Any) -> bool:
        return v.dtype in (self.jnp.float32, self.jnp.bfloat16)

    def is_int(self, v: Any) -> bool:
        return v.dtype == self.jnp.int32

    def is_pred(self, v: Any) -> bool:
        return v.dtype == self.jnp.bool_

    def cast(self, v: Any, like_dtype: Any) -> Any:
        if v.dtype == like_dtype:
            return v
        return v.astype(like_dtype)

    def fit(self, v: Any, shape: tuple, dtype: Any) -> Any:
        """v's data as an array of `shape` and `dtype` (reshaped, repeated or cut to size)."""
        jnp = self.jnp
        shape = tuple(int(s) for s in shape)
        v = self.cast(v, dtype)
        if tuple(v.shape) == shape:
            return v
        n = int(np.prod(shape))
        if v.size == n:
            return v.reshape(shape)
        flat = v.reshape(-1)
        if flat.size < n:
            flat = jnp.tile(flat, -(-n // flat.size))
        return flat[:n].reshape(shape)

    def other(self, rng: np.random.Generator, pool: Pool, shape: tuple, dtype: Any) -> tuple[Any, bool]:
        """A second operand of `shape`/`dtype`: a pool value of that shape if there is one
        (most often), else another value fitted to it."""
        same = [k for k, v in enumerate(pool.values) if tuple(v.shape) == tuple(shape)]
        if same and rng.random() < 0.75:
            k = same[int(rng.integers(0, len(same)))]
        else:
            k = int(rng.integers(0, len(pool.values)))
        lowp = pool.lowp[k] or dtype == self.jnp.bfloat16
        return self.fit(pool.values[k], shape, dtype), lowp

    def index_scalar(self, rng: np.random.Generator, pool: Pool, bound: int) -> Any:
        """An s32 scalar in [0, bound + 2) computed from an integer or boolean value when there is
        one (a data-dependent index, past the end now and then), else a constant."""
        jnp = self.jnp
        k = pool.pick(rng, lambda v: v.dtype in (jnp.int32, jnp.bool_))
        if k is None or rng.random() < 0.25:
            return jnp.int32(int(rng.integers(0, bound + 2)))
        v = pool.values[k].astype(jnp.int32)
        return jnp.remainder(jnp.sum(jnp.abs(v)), bound + 2).astype(jnp.int32)

    def index_array(self, rng: np.random.Generator, pool: Pool, shape: tuple, bound: int) -> Any:
        """s32 indices in [0, bound) of `shape`, from integer data when there is some."""
        jnp = self.jnp
        k = pool.pick(rng, lambda v: v.dtype == jnp.int32)
        if k is None or rng.random() < 0.3:
            return jnp.asarray(rng.integers(0, bound, size=shape).astype(np.int32))
        return jnp.remainder(self.fit(pool.values[k], shape, jnp.int32), bound)


def _x(ctx: Context, rng: np.random.Generator, pool: Pool, accept=lambda v: True):
    k = pool.pick(rng, accept)
    if k is None:
        return None, False
    return pool.values[k], pool.lowp[k]


def _rank_at_least(n: int):
    return lambda v: v.ndim >= n


# ---------------------------------------------------------------------------------------------
# Element-wise.

def op_unary(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool)
    if ctx.is_float(x):
        fns = [jnp.negative, jnp.abs, jnp.tanh, jnp.sin, jnp.cos, ctx.jax.nn.sigmoid,
               lambda v: jnp.exp(jnp.tanh(v)), lambda v: jnp.sqrt(jnp.abs(v)),
               lambda v: jnp.log1p(jnp.abs(v)), lambda v: v * 0.5 + 1, lambda v: lax.rsqrt(1 + v * v)]
    elif ctx.is_int(x):
        fns = [jnp.negative, jnp.abs, lambda v: jnp.remainder(v, 3), lambda v: v * 3 - 1,
               lambda v: jnp.clip(v, -2, 4), jnp.invert]
    else:
        fns = [jnp.logical_not]
    return [(fns[int(rng.integers(0, len(fns)))](x), lowp)]


def op_binary(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool)
    shape = tuple(x.shape)
    if x.ndim and rng.random() < 0.2:      # a broadcast operand: one dim of size 1
        shape = list(shape)
        shape[int(rng.integers(0, len(shape)))] = 1
    y, ylowp = ctx.other(rng, pool, tuple(shape), x.dtype)
    if ctx.is_float(x):
        fns = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum,
               lambda a, b: a / (1 + jnp.abs(b)), lambda a, b: a * 0.5 - b]
    elif ctx.is_int(x):
        fns = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum, jnp.bitwise_and, jnp.bitwise_xor]
    else:
        fns = [jnp.logical_and, jnp.logical_or, jnp.logical_xor, jnp.not_equal]
    fn = fns[int(rng.integers(0, len(fns)))]
    return [(fn(y, x) if rng.random() < 0.3 else fn(x, y), lowp or ylowp)]


def op_select(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool)
    y, ylowp = ctx.other(rng, pool, tuple(x.shape), x.dtype)
    k = pool.pick(rng, ctx.is_pred)
    if k is None:
        c = ctx.fit(pool.values[int(rng.integers(0, len(pool.values)))], tuple(x.shape), jnp.int32)
        c = jnp.remainder(c, 2) == 0
    else:
        c = ctx.fit(pool.values[k], tuple(x.shape), jnp.bool_)
    return [(jnp.where(c, x, y), lowp or ylowp)]


def op_compare(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, lambda v: not ctx.is_pred(v))
    if x is None:
        return None
    y, _ = ctx.other(rng, pool, tuple(x.shape), x.dtype)
    fns = [jnp.greater, jnp.greater_equal, jnp.less, jnp.equal, jnp.not_equal]
    return [(fns[int(rng.integers(0, len(fns)))](x, y), lowp)]


def op_convert(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool)
    if ctx.is_float(x):
        to = jnp.bfloat16 if x.dtype == jnp.float32 else jnp.float32
        return [(x.astype(to), lowp or to == jnp.bfloat16)]
    if ctx.is_int(x):
        choices = [jnp.float32, jnp.bfloat16, jnp.bool_]
    else:
        choices = [jnp.float32, jnp.int32, jnp.bfloat16]
    to = choices[int(rng.integers(0, len(choices)))]
    if to == jnp.bool_:
        return [(x > 0, lowp)]
    return [(x.astype(to), lowp or to == jnp.bfloat16)]


# ---------------------------------------------------------------------------------------------
# Reductions.

def _axes(rng, rank: int) -> tuple[int, ...]:
    count = int(rng.integers(1, rank + 1))
    return tuple(sorted(rng.choice(rank, size=count, replace=False).tolist()))


def op_reduce(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    axes = _axes(rng, x.ndim)
    keep = bool(rng.random() < 0.2)
    if ctx.is_float(x):
        fns = [jnp.sum, jnp.max, jnp.min, jnp.mean]
    elif ctx.is_int(x):
        fns = [jnp.sum, jnp.max, jnp.min, jnp.prod]
    else:
        fns = [jnp.any, jnp.all]
    return [(fns[int(rng.integers(0, len(fns)))](x, axis=axes, keepdims=keep), lowp)]


def op_argmax(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and not ctx.is_pred(v))
    if x is None:
        return None
    axis = int(rng.integers(0, x.ndim))
    fn = jnp.argmax if rng.random() < 0.6 else jnp.argmin
    return [(fn(x, axis=axis).astype(jnp.int32), False)]


# ---------------------------------------------------------------------------------------------
# Shapes.

def op_broadcast(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim < MAX_RANK)
    if x is None:
        return None
    size = int(rng.choice([2, 3, 4, 8]))
    if x.size * size > MAX_ELEMS:
        return None
    p = int(rng.integers(0, x.ndim + 1))
    shape = list(x.shape)
    shape.insert(p, size)
    return [(jnp.broadcast_to(jnp.expand_dims(x, p), tuple(shape)), lowp)]


def op_reshape(ctx: Context, rng, pool):
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    shape = list(x.shape)
    choice = rng.random()
    if x.ndim >= 2 and choice < 0.4:                       # merge two adjacent dims
        i = int(rng.integers(0, x.ndim - 1))
        shape[i:i + 2] = [shape[i] * shape[i + 1]]
    elif choice < 0.8 and x.ndim < MAX_RANK:               # split a dim in two
        i = int(rng.integers(0, x.ndim))
        divisors = [d for d in range(2, shape[i]) if shape[i] % d == 0]
        if not divisors:
            return None
        d = int(rng.choice(divisors))
        shape[i:i + 1] = [d, shape[i] // d]
    elif choice < 0.9:
        shape = [x.size]
    else:                                                  # a new factorization of everything
        n = x.size
        shape = []
        while n > 1 and len(shape) < 3:
            divisors = [d for d in range(2, n + 1) if n % d == 0]
            d = int(rng.choice(divisors))
            shape.append(d)
            n //= d
        shape = shape or [1]
        shape[-1] *= n
    return [(x.reshape(tuple(shape)), lowp)]


def op_transpose(ctx: Context, rng, pool):
    x, lowp = _x(ctx, rng, pool, _rank_at_least(2))
    if x is None:
        return None
    perm = tuple(rng.permutation(x.ndim).tolist())
    return [(ctx.jnp.transpose(x, perm), lowp)]


# ---------------------------------------------------------------------------------------------
# Slicing.

def op_slice(ctx: Context, rng, pool):
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and max(v.shape) > 1)
    if x is None:
        return None
    starts, limits, strides = [], [], []
    for n in x.shape:
        if n > 1 and rng.random() < 0.6:
            s = int(rng.integers(0, n - 1))
            e = int(rng.integers(s + 1, n + 1))
            st = 2 if (e - s > 2 and rng.random() < 0.25) else 1
        else:
            s, e, st = 0, n, 1
        starts.append(s)
        limits.append(e)
        strides.append(st)
    return [(ctx.lax.slice(x, starts, limits, strides), lowp)]


def _slice_sizes(rng, shape) -> list[int]:
    return [int(rng.integers(1, n + 1)) if rng.random() < 0.7 else n for n in shape]


def op_dynamic_slice(ctx: Context, rng, pool):
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    sizes = _slice_sizes(rng, x.shape)
    starts = [ctx.index_scalar(rng, pool, n - s) if s < n else ctx.jnp.int32(0) for n, s in zip(x.shape, sizes)]
    return [(ctx.lax.dynamic_slice(x, starts, sizes), lowp)]


def op_dynamic_update_slice(ctx: Context, rng, pool):
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    sizes = _slice_sizes(rng, x.shape)
    update, ulowp = ctx.other(rng, pool, tuple(sizes), x.dtype)
    starts = [ctx.index_scalar(rng, pool, n - s) for n, s in zip(x.shape, sizes)]
    return [(ctx.lax.dynamic_update_slice(x, update, starts), lowp or ulowp)]


def op_concatenate(ctx: Context, rng, pool):
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    axis = int(rng.integers(0, x.ndim))
    parts = [x]
    for _ in range(int(rng.integers(1, 3))):
        shape = list(x.shape)
        shape[axis] = int(rng.integers(1, max(2, x.shape[axis]) + 1))
        y, ylowp = ctx.other(rng, pool, tuple(shape), x.dtype)
        lowp = lowp or ylowp
        parts.insert(int(rng.integers(0, len(parts) + 1)), y)
    out = ctx.jnp.concatenate(parts, axis=axis)
    return None if out.size > MAX_ELEMS else [(out, lowp)]


def op_pad(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    config = []
    for n in x.shape:
        lo, hi = int(rng.integers(-1, 4)), int(rng.integers(-1, 4))
        interior = 1 if (n > 1 and rng.random() < 0.2) else 0
        if n + (n - 1) * interior + lo + hi < 1:
            lo, hi = 0, 0
        config.append((lo, hi, interior))
    value = jnp.array(1.5 if ctx.is_float(x) else (3 if ctx.is_int(x) else True), dtype=x.dtype)
    out = ctx.lax.pad(x, value, config)
    return None if out.size > MAX_ELEMS else [(out, lowp)]


# ---------------------------------------------------------------------------------------------
# Gather and scatter.

def op_gather(ctx: Context, rng, pool):
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    idx_shape = tuple(int(rng.integers(1, 7)) for _ in range(int(rng.integers(1, 3))))
    way = rng.random()
    if way < 0.5:                                          # an embedding lookup along one axis
        axis = int(rng.integers(0, x.ndim))
        idx = ctx.index_array(rng, pool, idx_shape, x.shape[axis])
        mode = ["clip", "fill", None][int(rng.integers(0, 3))]
        out = jnp.take(x, idx, axis=axis, mode=mode)
    elif way < 0.8 or x.ndim < 2:                          # x[idx]
        out = x[ctx.index_array(rng, pool, idx_shape, x.shape[0])]
    else:                                                  # x[i0, i1]: two index dims
        out = x[ctx.index_array(rng, pool, idx_shape, x.shape[0]), ctx.index_array(rng, pool, idx_shape, x.shape[1])]
    return None if out.size > MAX_ELEMS else [(out, lowp)]


def op_take_along_axis(ctx: Context, rng, pool):
    """jnp.take_along_axis: a gather whose other dims are batch dims (operand_batching_dims)."""
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    axis = int(rng.integers(0, x.ndim))
    shape = list(x.shape)
    shape[axis] = int(rng.integers(1, 7))
    if int(np.prod(shape)) > MAX_ELEMS:
        return None
    idx = ctx.index_array(rng, pool, tuple(shape), x.shape[axis])
    return [(jnp.take_along_axis(x, idx, axis=axis, mode="clip" if rng.random() < 0.5 else None), lowp)]


def op_random(ctx: Context, rng, pool):
    """jax.random on a key folded from data: threefry's u32 arithmetic, then floats or ints."""
    jax, jnp = ctx.jax, ctx.jnp
    x, lowp = _x(ctx, rng, pool)
    key = jax.random.key(int(rng.integers(0, 2**31)), impl="threefry2x32")
    k = pool.pick(rng, lambda v: v.dtype in (jnp.int32, jnp.bool_))
    if k is not None:
        key = jax.random.fold_in(key, jnp.sum(pool.values[k].astype(jnp.int32)))
    shape = tuple(x.shape)
    way = int(rng.integers(0, 3))
    if way == 0:
        noise = jax.random.uniform(key, shape, jnp.float32, -1, 1)
        return [(x.astype(jnp.float32) + noise if not ctx.is_float(x) else x + noise.astype(x.dtype), lowp)]
    if way == 1:
        return [(jax.random.randint(key, shape, 0, 7, jnp.int32), False)]
    return [(jax.random.bernoulli(key, 0.5, shape), False)]


def op_scatter(ctx: Context, rng, pool):
    """x.at[idx].add / .max / .set, along axis 0 or (x.at[:, idx]) axis 1; .set only with distinct
    indices, so the result is defined."""
    jnp = ctx.jnp
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and not ctx.is_pred(v))
    if x is None:
        return None
    axis = 1 if (x.ndim >= 2 and rng.random() < 0.3) else 0
    n = x.shape[axis]
    kind = ["add", "add", "max", "set"][int(rng.integers(0, 4))]
    if kind == "set":
        count = int(rng.integers(1, n + 1))
        idx = jnp.asarray(rng.permutation(n)[:count].astype(np.int32))
    else:
        count = int(rng.integers(1, 9))
        idx = ctx.index_array(rng, pool, (count,), n)
    shape = list(x.shape)
    shape[axis] = count
    upd, ulowp = ctx.other(rng, pool, tuple(shape), x.dtype)
    at = x.at[idx] if axis == 0 else x.at[:, idx]
    out = {"add": at.add, "max": at.max, "set": at.set}[kind](upd)
    return [(out, lowp or ulowp)]


# ---------------------------------------------------------------------------------------------
# Dots and convolutions.

def op_dot(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool, _rank_at_least(1))
    if x is None:
        return None
    if ctx.is_pred(x):
        x = x.astype(jnp.float32)
    rank = x.ndim
    dims = rng.permutation(rank).tolist()
    batch = sorted(dims[: int(rng.integers(0, rank))]) if rank >= 2 and rng.random() < 0.5 else []
    rest = [d for d in range(rank) if d not in batch]
    contract = sorted(rng.choice(rest, size=int(rng.integers(1, min(2, len(rest)) + 1)), replace=False).tolist())
    free = [int(rng.choice([1, 2, 3, 4, 6, 8, 16])) for _ in range(int(rng.integers(0, 3)))]
    y_dims = [x.shape[d] for d in batch] + [x.shape[d] for d in contract] + free
    order = rng.permutation(len(y_dims)).tolist()          # y's dims in a random order
    y_shape = tuple(y_dims[i] for i in order)
    where = {i: order.index(i) for i in range(len(y_dims))}
    y_batch = [where[i] for i in range(len(batch))]
    y_contract = [where[len(batch) + i] for i in range(len(contract))]
    out_elems = int(np.prod([x.shape[d] for d in range(rank) if d not in contract])) * int(np.prod(free or [1]))
    if out_elems > MAX_ELEMS or int(np.prod(y_shape)) > MAX_ELEMS:
        return None
    y, ylowp = ctx.other(rng, pool, y_shape, x.dtype)
    preferred = jnp.float32 if (x.dtype == jnp.bfloat16 and rng.random() < 0.5) else None
    out = lax.dot_general(x, y, ((contract, y_contract), (batch, y_batch)), preferred_element_type=preferred)
    return [(out, lowp or ylowp)]


def op_conv(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool, lambda v: v.size >= 8)
    if x is None:
        return None
    dtype = x.dtype if ctx.is_float(x) else jnp.float32
    spatial = 1 if rng.random() < 0.5 else 2
    if x.ndim == spatial + 2 and min(x.shape[2:]) >= 2:
        lhs, lhs_lowp = ctx.cast(x, dtype), lowp
    else:
        shape = (int(rng.choice([1, 2, 4])), int(rng.choice([1, 2, 3, 4]))) + tuple(
            int(rng.integers(3, 11)) for _ in range(spatial))
        lhs, lhs_lowp = ctx.fit(x, shape, dtype), lowp
    channels = lhs.shape[1]
    groups = channels if (channels > 1 and rng.random() < 0.2) else 1
    out_ch = int(rng.choice([1, 2, 4])) * groups
    kernel = tuple(int(rng.integers(1, min(3, n) + 1)) for n in lhs.shape[2:])
    rhs, rlowp = ctx.other(rng, pool, (out_ch, channels // groups) + kernel, dtype)
    strides = [int(rng.choice([1, 1, 2])) for _ in kernel]
    padding = [(int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in kernel]
    lhs_dil = [int(rng.choice([1, 1, 1, 2])) for _ in kernel]
    rhs_dil = [int(rng.choice([1, 1, 2])) for _ in kernel]
    numbers = ("NCH", "OIH", "NCH") if spatial == 1 else ("NCHW", "OIHW", "NCHW")
    try:
        out = lax.conv_general_dilated(lhs, rhs, strides, padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
                                       dimension_numbers=numbers, feature_group_count=groups)
    except (TypeError, ValueError):                        # an empty window: the op does not fit
        return None
    if out.size == 0 or out.size > MAX_ELEMS:
        return None
    return [(out, lhs_lowp or rlowp)]


# ---------------------------------------------------------------------------------------------
# Scans, windows, sorting.

def op_cumsum(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and not ctx.is_pred(v))
    if x is None:
        return None
    axis = int(rng.integers(0, x.ndim))
    fn = [jnp.cumsum, jnp.cumsum, lax.cummax, lambda v, axis: lax.cumsum(v, axis, reverse=True)][int(rng.integers(0, 4))]
    return [(fn(x, axis=axis), lowp)]


def op_reduce_window(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and not ctx.is_pred(v))
    if x is None:
        return None
    window = [int(rng.integers(1, min(3, n) + 1)) for n in x.shape]
    strides = [int(rng.integers(1, w + 1)) for w in window]
    padding = "SAME" if rng.random() < 0.3 else [(int(rng.integers(0, w)), int(rng.integers(0, w))) for w in window]
    # numpy scalars: JAX sees a concrete identity and uses its differentiable window sum / max.
    if rng.random() < 0.5:
        init, fn = np.zeros((), x.dtype), lax.add
    else:
        low = -np.inf if ctx.is_float(x) else np.iinfo(np.int32).min
        init, fn = np.array(low, x.dtype), lax.max
    out = lax.reduce_window(x, init, fn, window, strides, padding)
    return None if out.size == 0 else [(out, lowp)]


def op_sort(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and not ctx.is_pred(v))
    if x is None:
        return None
    axis = int(rng.integers(0, x.ndim))
    way = rng.random()
    if way < 0.4:
        return [(jnp.sort(x, axis=axis), lowp)]
    if way < 0.7:
        return [(jnp.argsort(x, axis=axis, stable=True).astype(jnp.int32), False)]
    y, ylowp = ctx.other(rng, pool, tuple(x.shape), jnp.float32)   # sorted along as a payload
    keys, values = lax.sort((x, y), dimension=axis, num_keys=1, is_stable=True)
    return [(keys, lowp), (values, ylowp or lowp)]


def op_top_k(ctx: Context, rng, pool):
    lax = ctx.lax
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and not ctx.is_pred(v) and v.dtype != ctx.jnp.bfloat16)
    if x is None:
        return None
    k = int(rng.integers(1, x.shape[-1] + 1))
    values, indices = lax.top_k(x, k)
    return [(values, lowp), (indices, False)]


OPS: dict[str, Callable] = {
    "unary": op_unary, "binary": op_binary, "select": op_select, "compare": op_compare,
    "convert": op_convert, "reduce": op_reduce, "argmax": op_argmax, "broadcast": op_broadcast,
    "reshape": op_reshape, "transpose": op_transpose, "slice": op_slice,
    "dynamic_slice": op_dynamic_slice, "dynamic_update_slice": op_dynamic_update_slice,
    "concatenate": op_concatenate, "pad": op_pad, "gather": op_gather, "scatter": op_scatter,
    "take_along_axis": op_take_along_axis, "random": op_random, "dot": op_dot, "conv": op_conv,
    "cumsum": op_cumsum, "reduce_window": op_reduce_window,
    "sort": op_sort, "top_k": op_top_k,
}
