# Generates the gpt_train_2l corpus case: a 2-layer GPT training step compiled by XLA (JAX 0.10.2).
"""Writes pre.hlo, propagated.hlo, partitioned.hlo, in<i>.npy, out<i>.npy and meta.json into the
directory given as the first argument (default: this script's directory).
partitioned.hlo is the module right after XLA's SPMD partitioner, as in the other corpus cases;
the compiled executable's text has the same collectives (the same bytes per device), combined by
XLA's all-reduce combiner into fewer instructions, inside fusions. XLA prints replica groups of
some collectives in the mesh form with device_ids=(...), which this project's parser does not
read yet: those are rewritten here as the explicit groups they stand for.

Run with JAX on CPU and 8 host devices:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 python make.py OUTDIR
The program: token embedding wte [V, M] split over 'model' on the vocabulary and reused as the
output projection (logits = h @ wte.T), a learned position embedding, two pre-LayerNorm blocks
(causal multi-head attention, a GELU MLP) with Megatron shardings over 'model', the batch over
'data', softmax cross-entropy, one SGD step; returns (loss, new params).
"""
import glob
import json
import os
import re
import sys
import tempfile
import time

import numpy as np

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
DUMP = tempfile.mkdtemp(prefix="gpt_train_2l_dump_")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
                           f" --xla_dump_to={DUMP} --xla_dump_hlo_pass_re=sharding-propagation|spmd-partitioning")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

jax.config.update("jax_use_shardy_partitioner", False)  # the gspmd/ flavour: XLA's own propagation

V, M, H, D, F, S, B, LAYERS = 128, 32, 4, 8, 64, 16, 8, 2
LR = 0.1

mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))

# Parameters in order, each with its PartitionSpec (Megatron over 'model').
PARAM_SPECS = [("wte", (V, M), P("model", None)), ("wpe", (S, M), P(None, None))]
for l in range(LAYERS):
  PARAM_SPECS += [
      (f"l{l}_ln1_g", (M,), P(None)), (f"l{l}_ln1_b", (M,), P(None)),
      (f"l{l}_wq", (M, H, D), P(None, "model", None)), (f"l{l}_wk", (M, H, D), P(None, "model", None)),
      (f"l{l}_wv", (M, H, D), P(None, "model", None)), (f"l{l}_wo", (H, D, M), P("model", None, None)),
      (f"l{l}_ln2_g", (M,), P(None)), (f"l{l}_ln2_b", (M,), P(None)),
      (f"l{l}_w1", (M, F), P(None, "model")), (f"l{l}_b1", (F,), P("model")),
      (f"l{l}_w2", (F, M), P("model", None)), (f"l{l}_b2", (M,), P(None)),
  ]
PARAM_SPECS += [("lnf_g", (M,), P(None)), ("lnf_b", (M,), P(None))]
NAMES = [name for name, _, _ in PARAM_SPECS]


MESH_GROUPS = re.compile(r"replica_groups=mesh\[([^\]]*)\], device_ids=\(\[([0-9,]*)\](?:T\(([0-9,]*)\))?\) \{([^}]*)\}")


def explicit_groups(match):
  """mesh['a'=4,'b'=2], device_ids=([2,4]T(1,0)) {'a'} -> {{...},{...}}: the same groups."""
  axes = [(a.split("=")[0].strip("'"), int(a.split("=")[1])) for a in match.group(1).split(",")]
  dims = [int(x) for x in match.group(2).split(",")]
  ids = np.arange(int(np.prod(dims))).reshape(dims)
  if match.group(3):
    ids = ids.transpose([int(x) for x in match.group(3).split(",")])
  ids = ids.reshape([n for _, n in axes])
  names = [a for a, _ in axes]
  chosen = [a.strip().strip("'") for a in match.group(4).split(",")]
  order = [i for i, a in enumerate(names) if a not in chosen] + [names.index(a) for a in chosen]
  groups = ids.transpose(order).reshape(-1, int(np.prod([dict(axes)[a] for a in chosen])))
  return "replica_groups={" + ",".join("{" + ",".join(str(d) for d in g) + "}" for g in groups) + "}"


def layer_norm(x, g, b):
  mean = x.mean(-1, keepdims=True)
  var = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b


def forward_loss(params, tokens, targets):
  p = dict(zip(NAMES, params))
  x = p["wte"][tokens] + p["wpe"][None, :, :]
  x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", None, None)))
  mask = jnp.tril(jnp.ones((S, S), bool))
  for l in range(LAYERS):
    h = layer_norm(x, p[f"l{l}_ln1_g"], p[f"l{l}_ln1_b"])
    q = jnp.einsum("bsm,mhd->bhsd", h, p[f"l{l}_wq"])
    k = jnp.einsum("bsm,mhd->bhsd", h, p[f"l{l}_wk"])
    v = jnp.einsum("bsm,mhd->bhsd", h, p[f"l{l}_wv"])
    scores = jnp.einsum("bhsd,bhtd->bhst", q, k) / np.sqrt(D).astype(np.float32)
    scores = jnp.where(mask, scores, -1e9)
    attn = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("bhst,bhtd->bhsd", attn, v)
    x = x + jnp.einsum("bhsd,hdm->bsm", o, p[f"l{l}_wo"])
    h = layer_norm(x, p[f"l{l}_ln2_g"], p[f"l{l}_ln2_b"])
    u = jax.nn.gelu(h @ p[f"l{l}_w1"] + p[f"l{l}_b1"])
    x = x + u @ p[f"l{l}_w2"] + p[f"l{l}_b2"]
  h = layer_norm(x, p["lnf_g"], p["lnf_b"])
  logits = jnp.einsum("bsm,vm->bsv", h, p["wte"])  # tied output projection
  logits = jax.lax.with_sharding_constraint(logits, NamedSharding(mesh, P("data", None, "model")))
  logp = jax.nn.log_softmax(logits, axis=-1)
  return -(logp * jax.nn.one_hot(targets, V, dtype=logp.dtype)).sum(-1).mean()


def train_step(params, tokens, targets):
  loss, grads = jax.value_and_grad(forward_loss)(params, tokens, targets)
  return loss, [w - LR * g for w, g in zip(params, grads)]


def main():
  rng = np.random.default_rng(24)
  params = []
  for name, shape, _ in PARAM_SPECS:
    if name.endswith("_g"):
      params.append((1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32))
    elif name.endswith("_b") or name.startswith(("l0_b", "l1_b")):
      params.append((0.02 * rng.standard_normal(shape)).astype(np.float32))
    else:
      params.append((rng.standard_normal(shape) / np.sqrt(shape[-1] if name == "wte" else shape[0])).astype(np.float32))
  tokens = rng.integers(0, V, (B, S), dtype=np.int32)
  targets = np.roll(tokens, -1, axis=1).astype(np.int32)

  param_shardings = [NamedSharding(mesh, spec) for _, _, spec in PARAM_SPECS]
  batch = NamedSharding(mesh, P("data", None))
  in_shardings = (param_shardings, batch, batch)
  out_shardings = (NamedSharding(mesh, P()), param_shardings)
  step = jax.jit(train_step, in_shardings=in_shardings, out_shardings=out_shardings)

  t0 = time.time()
  lowered = step.lower(params, tokens, targets)
  lower_s = time.time() - t0
  t0 = time.time()
  compiled = lowered.compile()
  compile_s = time.time() - t0
  loss, new_params = compiled(params, tokens, targets)

  os.makedirs(OUT, exist_ok=True)
  with open(os.path.join(OUT, "pre.hlo"), "w") as f:
    f.write(lowered.as_text(dialect="hlo"))
  for name, pattern in (("propagated.hlo", "*after_sharding-propagation*.txt"),
                        ("partitioned.hlo", "*after_spmd-partitioning*.txt")):
    dumped = sorted(glob.glob(os.path.join(DUMP, pattern)))
    with open(os.path.join(OUT, name), "w") as f:
      f.write(MESH_GROUPS.sub(explicit_groups, open(dumped[0]).read()))
  inputs = params + [tokens, targets]
  for i, value in enumerate(inputs):
    np.save(os.path.join(OUT, f"in{i}.npy"), np.asarray(value))
  outputs = [loss] + list(new_params)
  for i, value in enumerate(outputs):
    np.save(os.path.join(OUT, f"out{i}.npy"), np.asarray(value))
  cost = compiled.cost_analysis()
  cost = cost[0] if isinstance(cost, list) else cost
  meta = {
      "name": "gpt_train_2l",
      "jax_version": jax.__version__,
      "partitioned": "after XLA's spmd-partitioning pass (explicit replica groups)",
      "mesh_shape": [2, 4],
      "mesh_axes": ["data", "model"],
      "params": NAMES,
      "in_specs": [str(spec) for _, _, spec in PARAM_SPECS] + ["P('data', None)", "P('data', None)"],
      "out_specs": str([P()] + [spec for _, _, spec in PARAM_SPECS]),
      "lower_s": lower_s,
      "compile_s": compile_s,
      "cost": {k: float(v) for k, v in (cost or {}).items() if k in ("flops", "transcendentals", "bytes accessed")},
      "n_outputs": len(outputs),
      "ok": True,
  }
  with open(os.path.join(OUT, "meta.json"), "w") as f:
    json.dump(meta, f, indent=1)
  print("loss", float(loss))


if __name__ == "__main__":
  main()
