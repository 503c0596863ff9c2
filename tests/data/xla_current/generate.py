# Makes tests/data/xla_current: small JAX programs lowered and compiled by the JAX/XLA in use.
import os, sys, json
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import numpy as np, jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

out_root = sys.argv[1]
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
def S(*spec): return NamedSharding(mesh, P(*spec))

nan = np.float32(np.nan)
neg_nan = np.frombuffer(np.uint32(0xffc00000).tobytes(), np.float32)[0]
def awkward(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=shape).astype(np.float32)
    flat = x.reshape(-1)
    specials = [nan, neg_nan, -0.0, 0.0, np.inf, -np.inf]
    for i in range(0, flat.size, 5):
        flat[i] = specials[(i // 5) % len(specials)]
    return x

cases = {}
def case(name, fn, args, in_shardings, out_shardings=None):
    cases[name] = (fn, args, in_shardings, out_shardings)

case("sort_nan", lambda x: jnp.sort(x, axis=1), [awkward((4, 16), 0)], (S("x", None),))
case("topk_nan", lambda x: jax.lax.top_k(x, 3), [awkward((4, 32), 1)], (S("x", None),))
case("argsort", lambda x: jnp.argsort(x, axis=-1, stable=True), [awkward((8, 12), 2)], (S("y", None),))
case("cumsum", lambda x: jnp.cumsum(x, axis=1), [np.arange(64, dtype=np.float32).reshape(8, 8) / 7], (S("x", "y"),))
def fori(x):
    return jax.lax.fori_loop(0, 5, lambda i, v: v * 0.5 + jnp.sin(v) + i, x)
case("while_fori", fori, [np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)], (S("y", None),))
def scan(x):
    def body(c, row):
        c = c + row
        return c, c * 2
    return jax.lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)
case("scan", scan, [np.arange(24, dtype=np.float32).reshape(6, 4)], (S(None, "y"),))
def cond(p, x):
    return jax.lax.cond(p > 0, lambda v: v * 2, lambda v: v - 1, x)
case("cond", cond, [np.int32(1), np.ones((8, 4), np.float32)], (S(), S("x", None)))
def gather_scatter(x, idx, upd):
    g = x[idx]
    s = x.at[idx].add(upd)
    return g, s
case("gather_scatter", gather_scatter,
     [np.arange(32, dtype=np.float32).reshape(8, 4), np.array([1, 3, 3, 6], np.int32), np.ones((4, 4), np.float32)],
     (S("x", None), S(), S()))
def conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
case("conv", conv, [np.linspace(-1, 1, 2 * 8 * 8 * 3, dtype=np.float32).reshape(2, 8, 8, 3),
                    np.linspace(-1, 1, 3 * 3 * 3 * 4, dtype=np.float32).reshape(3, 3, 3, 4)],
     (S(None, "y", None, None), S()))
case("dot", lambda a, b: jnp.dot(a, b), [np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8),
                                          np.linspace(0, 2, 64, dtype=np.float32).reshape(8, 8)],
     (S("x", "y"), S("y", None)))
def rng(seed):
    k = jax.random.wrap_key_data(seed, impl="rbg")
    return jax.random.bits(k, (8, 16), jnp.uint32)
case("rng_bits", rng, [np.array([1, 2, 3, 4], np.uint32)], (S(),))
def threefry(seed):
    return jax.random.uniform(jax.random.key(seed), (8, 8))
case("rng_threefry", threefry, [np.uint32(7)], (S(),))

only = sys.argv[2:] 
for name, (fn, args, in_sh, out_sh) in cases.items():
    if only and name not in only: continue
    d = os.path.join(out_root, name)
    os.makedirs(d, exist_ok=True)
    jitted = jax.jit(fn, in_shardings=in_sh) if in_sh else jax.jit(fn)
    lowered = jitted.lower(*args)
    open(os.path.join(d, "pre.hlo"), "w").write(lowered.as_text(dialect="hlo"))
    compiled = lowered.compile()
    open(os.path.join(d, "compiled.hlo"), "w").write(compiled.as_text())
    outs = jax.tree_util.tree_leaves(compiled(*args))
    for i, a in enumerate(args): np.save(os.path.join(d, f"in{i}.npy"), np.asarray(a))
    for i, o in enumerate(outs): np.save(os.path.join(d, f"out{i}.npy"), np.asarray(o))
    # the same program on one device, compiled
    single = jax.jit(fn).lower(*[np.asarray(a) for a in args])
    open(os.path.join(d, "compiled_one_device.hlo"), "w").write(single.compile().as_text())
    print(name, "ok", len(outs), "outputs")
