"""JAX functions with in_shardings and out_shardings on an 8-device mesh, read with gspmd.from_jax.

Each runs as jax.jit runs it (rtol 1e-5), and communicates at most what XLA's compiled program
does (both counted by gspmd's report: bytes sent per device, ring model).
"""

from __future__ import annotations

import numpy as np
import pytest

import gspmd


def make_mesh(jax, shape, names):
    # Auto axes (jax.make_mesh's default is Explicit in current JAX, which with_sharding_constraint refuses).
    devices = np.array(jax.devices()[: int(np.prod(shape))]).reshape(shape)
    return jax.sharding.Mesh(devices, names)


def shardings(jax, mesh):
    return lambda *spec: jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec))


def mlp_2d(jax):
    """A 2-D sharded MLP: batch over 'data', hidden over 'model'."""
    s = shardings(jax, make_mesh(jax, (2, 4), ("data", "model")))

    def f(x, w1, b1, w2):
        return jax.nn.gelu(x @ w1 + b1) @ w2

    rng = np.random.default_rng(0)
    args = [rng.standard_normal((16, 32), np.float32), rng.standard_normal((32, 64), np.float32) * 0.2,
            rng.standard_normal((64,), np.float32), rng.standard_normal((64, 32), np.float32) * 0.2]
    return jax.jit(f, in_shardings=(s("data", None), s(None, "model"), s("model"), s("model", None)),
                   out_shardings=s("data", None)), args


def attention(jax):
    """Causal multi-head attention: batch over 'data', heads over 'model'."""
    jnp = jax.numpy
    s = shardings(jax, make_mesh(jax, (2, 4), ("data", "model")))
    B, T, D, H, K = 4, 8, 32, 4, 8

    def f(x, wq, wk, wv, wo):
        q = jnp.einsum("btd,dhk->bthk", x, wq)
        k = jnp.einsum("btd,dhk->bthk", x, wk)
        v = jnp.einsum("btd,dhk->bthk", x, wv)
        logits = jnp.einsum("bthk,bshk->bhts", q, k) / np.sqrt(K)
        logits = jnp.where(jnp.tril(jnp.ones((T, T), bool)), logits, -1e9)
        o = jnp.einsum("bhts,bshk->bthk", jax.nn.softmax(logits, axis=-1), v)
        return jnp.einsum("bthk,hkd->btd", o, wo)

    rng = np.random.default_rng(1)
    args = [rng.standard_normal((B, T, D), np.float32)] + [
        rng.standard_normal(shape, np.float32) * 0.2 for shape in [(D, H, K)] * 3 + [(H, K, D)]]
    w = s(None, "model", None)
    return jax.jit(f, in_shardings=(s("data", None, None), w, w, w, s("model", None, None)),
                   out_shardings=s("data", None, None)), args


def moe_dispatch(jax):
    """Top-1 MoE with expert capacity: tokens grouped over 'expert' are dispatched to the experts'
    devices and combined back (two all-to-alls), as in GShard."""
    jnp = jax.numpy
    mesh = make_mesh(jax, (8,), ("expert",))
    s = shardings(jax, mesh)
    G, S, D, E, C, H = 8, 16, 16, 8, 4, 32

    def f(x, gate, w_in, w_out):
        expert = jnp.argmax(jnp.einsum("gsd,de->gse", x, gate), axis=-1)
        onehot = jax.nn.one_hot(expert, E, dtype=x.dtype)
        position = jnp.cumsum(onehot, axis=1) * onehot - 1.0
        keep = (position < C) & (position >= 0)
        dispatch = jax.nn.one_hot(position.astype(jnp.int32), C, dtype=x.dtype) * keep[..., None]
        xe = jax.lax.with_sharding_constraint(jnp.einsum("gsec,gsd->egcd", dispatch, x), s("expert", None, None, None))
        ye = jnp.einsum("egch,ehd->egcd", jax.nn.relu(jnp.einsum("egcd,edh->egch", xe, w_in)), w_out)
        ye = jax.lax.with_sharding_constraint(ye, s(None, "expert", None, None))
        return jnp.einsum("gsec,egcd->gsd", dispatch, ye)

    rng = np.random.default_rng(2)
    args = [rng.standard_normal((G, S, D), np.float32), rng.standard_normal((D, E), np.float32),
            rng.standard_normal((E, D, H), np.float32) * 0.2, rng.standard_normal((E, H, D), np.float32) * 0.2]
    e = s("expert", None, None)
    return jax.jit(f, in_shardings=(e, s(), e, e), out_shardings=e), args


def scan_layers(jax):
    """lax.scan over stacked layer weights: batch over 'data', the weights' columns over 'model'."""
    jnp = jax.numpy
    s = shardings(jax, make_mesh(jax, (2, 4), ("data", "model")))

    def f(x, ws):
        def layer(h, w):
            h = jnp.tanh(h @ w)
            return h, jnp.sum(h)
        return jax.lax.scan(layer, x, ws)

    rng = np.random.default_rng(3)
    args = [rng.standard_normal((8, 32), np.float32), rng.standard_normal((4, 32, 32), np.float32) * 0.2]
    return jax.jit(f, in_shardings=(s("data", None), s(None, None, "model")),
                   out_shardings=(s("data", None), s())), args


FUNCTIONS = [mlp_2d, attention, moe_dispatch, scan_layers]


@pytest.mark.parametrize("make", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_from_jax_runs_as_jax_and_communicates_at_most_as_xla(jax, make):
    jitted, args = make(jax)
    lowered = jitted.lower(*args)
    program = gspmd.from_jax(lowered)
    assert program.name.startswith("<jax:")
    expected = jax.tree_util.tree_leaves(jitted(*args))
    outputs = program.run(*args)
    assert len(outputs) == len(expected)
    for actual, wanted in zip(outputs, expected):
        np.testing.assert_allclose(actual, np.asarray(wanted), rtol=1e-5, atol=1e-6)

    ours = program.partition().report()
    xla = gspmd.from_text(lowered.compile().as_text(), "<xla>").report()
    assert ours["comm_bytes_per_device"] <= xla["comm_bytes_per_device"], (ours, xla)
    if make is moe_dispatch:
        assert ours["collectives"].get("all-to-all", 0) >= 2


def test_from_jax_rejects_compiled(jax):
    jitted, args = mlp_2d(jax)
    with pytest.raises(gspmd.InputError, match="Compiled"):
        gspmd.from_jax(jitted.lower(*args).compile())
