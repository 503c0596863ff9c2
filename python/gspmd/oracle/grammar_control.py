"""The oracle's control-flow and sharding op kinds: while_loop, fori_loop, scan, cond, sharding
constraints and shard_map regions (the element-wise and data kinds are in grammar.py)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .grammar import Context, Pool, _x


def _step(ctx: Context, rng: np.random.Generator, x: Any, pool: Pool) -> tuple[Callable, bool]:
    """A loop body for a carry like x: (x, i) -> x', with a loop-invariant operand read from
    the pool; and whether that operand is bf16."""
    jnp, lax = ctx.jnp, ctx.lax
    if ctx.is_float(x):
        if x.ndim >= 1 and rng.random() < 0.5 and x.shape[-1] <= 16:
            n = x.shape[-1]
            w, wlowp = ctx.other(rng, pool, (n, n), x.dtype)
            w = w * (0.5 / n)
            return (lambda v, i: jnp.tanh(lax.dot_general(v, w, (([v.ndim - 1], [0]), ([], []))) + v * 0.5)), wlowp
        y, ylowp = ctx.other(rng, pool, tuple(x.shape), x.dtype)
        return (lambda v, i: v * 0.5 + y + jnp.asarray(i).astype(x.dtype)), ylowp  # i is an int when eager
    if ctx.is_int(x):
        y, _ = ctx.other(rng, pool, tuple(x.shape), x.dtype)
        return (lambda v, i: jnp.remainder(v * 3 + y + i, 101)), False
    return (lambda v, i: jnp.logical_xor(v, jnp.remainder(i, 2) == 0)), False


def op_while_loop(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool)
    step, slowp = _step(ctx, rng, x, pool)
    if ctx.spec.grad:                                       # reverse mode needs a static trip count
        return [(lax.fori_loop(0, int(rng.integers(1, 5)), lambda i, v: step(v, i), x), lowp or slowp)]
    trips = ctx.index_scalar(rng, pool, 3) + 1              # 1..5, from data when there is some
    _, out = lax.while_loop(lambda c: c[0] < trips, lambda c: (c[0] + 1, step(c[1], c[0])), (jnp.int32(0), x))
    return [(out, lowp or slowp)]


def op_fori_loop(ctx: Context, rng, pool):
    x, lowp = _x(ctx, rng, pool)
    step, slowp = _step(ctx, rng, x, pool)
    out = ctx.lax.fori_loop(0, int(rng.integers(1, 5)), lambda i, v: step(v, i), x)
    return [(out, lowp or slowp)]


def op_scan(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1 and v.shape[0] <= 16)
    if x is None:
        return None
    if ctx.is_float(x):
        combine = lambda c, t: jnp.tanh(c * 0.5 + t)        # noqa: E731
    elif ctx.is_int(x):
        combine = lambda c, t: jnp.remainder(c * 2 + t, 97)  # noqa: E731
    else:
        combine = jnp.logical_xor

    def body(c, t):
        c2 = combine(c, t)
        return c2, c2

    init = jnp.zeros(x.shape[1:], x.dtype)
    carry, ys = lax.scan(body, init, x, reverse=bool(rng.random() < 0.3))
    return [(ys, lowp), (carry, lowp)]


def _predicate(ctx: Context, rng, pool):
    jnp = ctx.jnp
    k = pool.pick(rng, lambda v: v.dtype in (jnp.int32, jnp.bool_))
    if k is not None:
        return jnp.remainder(jnp.sum(pool.values[k].astype(jnp.int32)), 2) == 0
    return jnp.sum(pool.values[int(rng.integers(0, len(pool.values)))].astype(jnp.float32)) > 0


def op_cond(ctx: Context, rng, pool):
    jnp, lax = ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool)
    y, ylowp = ctx.other(rng, pool, tuple(x.shape), x.dtype)
    if ctx.is_float(x):
        branches = [lambda v: jnp.tanh(v) + y, lambda v: v * y, lambda v: jnp.maximum(v, y) * 0.5]
    elif ctx.is_int(x):
        branches = [lambda v: v + y, lambda v: v * 2 - y, lambda v: jnp.minimum(v, y)]
    else:
        branches = [lambda v: jnp.logical_and(v, y), lambda v: jnp.logical_not(v), lambda v: jnp.logical_or(v, y)]
    if rng.random() < 0.3:
        index = ctx.index_scalar(rng, pool, 1)              # 0..2
        out = lax.switch(index, branches, x)
    else:
        a, b = rng.choice(3, size=2, replace=False).tolist()
        out = lax.cond(_predicate(ctx, rng, pool), branches[a], branches[b], x)
    return [(out, lowp or ylowp)]


def _named(ctx: Context, entries: list) -> Any:
    from .generate import partition_spec

    return ctx.jax.sharding.NamedSharding(ctx.mesh, partition_spec(ctx.jax, entries))


def op_constraint(ctx: Context, rng, pool):
    from .generate import random_spec

    x, lowp = _x(ctx, rng, pool)
    spec = ctx.spec
    entries = random_spec(rng, list(x.shape), spec.mesh_shape, spec.axis_names, even=False, density=0.6)
    if ctx.one_device:
        return [(x, lowp)]
    return [(ctx.jax.lax.with_sharding_constraint(x, _named(ctx, entries)), lowp)]


def op_shard_map(ctx: Context, rng, pool):
    """A shard_map region over the whole mesh: element-wise work, a psum or an all_gather."""
    from .generate import partition_spec, random_spec

    jax, jnp, lax = ctx.jax, ctx.jnp, ctx.lax
    x, lowp = _x(ctx, rng, pool, lambda v: v.ndim >= 1)
    if x is None:
        return None
    spec = ctx.spec
    entries = random_spec(rng, list(x.shape), spec.mesh_shape, spec.axis_names, even=True, density=0.7)
    entries += [None] * (x.ndim - len(entries))
    size = dict(zip(spec.axis_names, spec.mesh_shape))
    used = {(d, a) for d, e in enumerate(entries) for a in ([] if e is None else ([e] if isinstance(e, str) else e))
            if size[a] > 1}                                  # JAX keeps a psum over a size-1 axis varying
    way = rng.random()
    out_entries = list(entries)
    if way < 0.35 or not used:
        if ctx.is_float(x):
            local = lambda v: jnp.tanh(v) * 2 + 1            # noqa: E731
        elif ctx.is_int(x):
            local = lambda v: v * 2 + 1                      # noqa: E731
        else:
            local = jnp.logical_not
    elif way < 0.7 and used and not ctx.is_pred(x):
        d, axis = sorted(used)[int(rng.integers(0, len(used)))]   # an axis x varies over
        local = lambda v: lax.psum(v, axis)                  # noqa: E731
        out_entries = [_without(e, axis) for e in entries]
        if ctx.one_device:                                   # the blocks along `axis` of dim d, summed
            names = [entries[d]] if isinstance(entries[d], str) else list(entries[d])
            split = [size[n] for n in names]
            shape = list(x.shape)
            blocks = shape[:d] + split + [shape[d] // int(np.prod(split))] + shape[d + 1:]
            summed = jnp.sum(x.reshape(blocks), axis=d + names.index(axis))
            shape[d] //= size[axis]
            return [(summed.reshape(shape), lowp)]
    else:
        if not used:
            return None
        d, axis = sorted(used)[int(rng.integers(0, len(used)))]
        if not (isinstance(entries[d], str) or entries[d][-1] == axis):
            return None                                      # only the minor-most axis of a dim gathers back in place
        local = lambda v: lax.all_gather(v, axis, axis=d, tiled=True)  # noqa: E731
        out_entries[d] = _without(entries[d], axis)
    if ctx.one_device:                                       # element-wise, or a gather back to x
        return [(local(x) if way < 0.35 or not used else x, lowp)]
    # all_gather's result still counts as varying for JAX's check, though every device holds it all
    # (and under grad the psum's tangent does too); the check is only JAX's own.
    fn = jax.shard_map(local, mesh=ctx.mesh, in_specs=(partition_spec(jax, entries),),
                       out_specs=partition_spec(jax, out_entries), check_vma=way < 0.7 and not spec.grad)
    return [(fn(x), lowp)]


def _without(entry: Any, axis: str) -> Any:
    if entry is None:
        return None
    names = [entry] if isinstance(entry, str) else list(entry)
    names = [n for n in names if n != axis]
    return None if not names else (names[0] if len(names) == 1 else names)


OPS: dict[str, Callable] = {
    "while_loop": op_while_loop, "fori_loop": op_fori_loop, "scan": op_scan, "cond": op_cond,
    "constraint": op_constraint, "shard_map": op_shard_map,
}
