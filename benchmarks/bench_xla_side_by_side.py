"""gspmd against XLA:CPU on the same jitted JAX training steps: step time on 8 devices and compile time (issue 28).

For each program (a JAX training step written below, sharded with NamedSharding on a mesh of 8
CPU devices) both sides get the same function: XLA as ``jax.jit(f)`` with in/out shardings on
8 host devices, gspmd as that function's StableHLO (``jax.jit(f).lower(*args).as_text()``),
read, propagated and partitioned once in process, then run on 8 device threads. Steps alternate
between the two (A B A B ...) so machine load falls on both alike; the table gives medians and
minima and the ratio gspmd / XLA of the medians, and every output is checked to agree (relative
L2 error within 1e-4) so both time the same computation. The corpus's training steps
(tests/data/corpus and ../shared/corpus, names with train or step) follow: their stablehlo.mlir
compiled for XLA directly through JAX's PJRT client, with the inputs and mesh of their meta.json.

What each side's step time counts: XLA, ``f(*device_arrays)`` on arrays already placed on the
devices, until ``block_until_ready``; gspmd, ``per_device.run(*numpy_arrays)``, which also
slices the global inputs into shards and assembles the global outputs (a copy of every input
and output). The column "XLA np" is XLA called on numpy arrays with numpy results
(``np.asarray``), the same boundary gspmd has. "CPU ms" is the process CPU time of a step (all
threads, ``time.process_time``): beside wall time it shows how much of the cores each side kept busy.

Compile time: XLA's is ``lowered.compile()`` (all of XLA's passes and code generation) and,
from XLA's own pass timing (hlo_pass_pipeline's VLOG, enabled below through TF_CPP_VMODULE), the
propagation pass (``shardy-xla`` for JAX's Shardy programs, ``sharding-propagation`` for the
corpus's GSPMD-annotated ones) and ``spmd-partitioning`` alone; JAX's caches are emptied before
each compile so XLA compiles again. gspmd's is reading the StableHLO text, propagation and
partitioning, each timed in process.

    .venv/bin/python benchmarks/bench_xla_side_by_side.py [--quick] [--repeats N] [--compiles N] [--out FILE.md]
                                                            [--only NAME] [--no-corpus]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

# Before JAX starts: 8 host devices, and XLA's per-pass timing on stderr (read around each compile).
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
if "--xla_force_host_platform_device_count" not in os.environ["XLA_FLAGS"]:
    os.environ["XLA_FLAGS"] += " --xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
os.environ.setdefault("TF_CPP_VMODULE", "hlo_pass_pipeline=1")

import numpy as np  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build" / "python"))

import gspmd  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

RTOL = 1e-4
COLUMNS = ["program", "mesh", "d_model", "tokens", "GFLOP/step", "XLA ms (med/min)", "XLA np ms",
           "gspmd ms (med/min)", "ratio gspmd/XLA", "ratio gspmd/XLA np", "CPU ms XLA / gspmd", "max rel err",
           "agree"]
COMPILE_COLUMNS = ["program", "d_model", "XLA compile ms", "XLA propagation pass", "XLA propagation ms",
                   "XLA spmd-partitioning ms", "XLA prop+part ms", "gspmd read ms", "gspmd propagate ms",
                   "gspmd partition ms", "gspmd prop+part ms", "ratio prop+part gspmd/XLA"]


# ---------------------------------------------------------------------------------------------
# The programs: an MLP stack and a transformer block, forward + jax.grad + an SGD or Adam update.


@dataclass
class Case:
    """One program: the jitted step, its arguments (numpy), and how it is sharded."""

    name: str
    mesh: str
    d_model: int
    tokens: int
    step: Callable
    args: tuple
    in_shardings: tuple
    out_shardings: object
    flops: float = 0.0
    folder: pathlib.Path | None = None  # a corpus case: its stablehlo.mlir and in/out .npy files

    def __post_init__(self):
        self.args = jax.tree.map(lambda a: np.asarray(a, np.float32), self.args)


def make_mesh(shape: tuple[int, int]) -> Mesh:
    return Mesh(np.array(jax.devices()[:8]).reshape(shape), ("data", "model"))


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b


def mlp_loss(params, x, y):
    h = x
    for w1, b1, w2 in params:
        h = h + jax.nn.gelu(h @ w1 + b1) @ w2
    return jnp.mean((h - y) ** 2)


def block_loss(params, x, y, heads):
    """A pre-LayerNorm transformer block (causal attention, GELU MLP) on [batch, seq, d]."""
    g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2 = params
    seq = x.shape[1]
    h = layer_norm(x, g1, b1)
    q = jnp.einsum("bsd,dhk->bshk", h, wq)
    k = jnp.einsum("bsd,dhk->bshk", h, wk)
    v = jnp.einsum("bsd,dhk->bshk", h, wv)
    logits = jnp.einsum("bshk,bthk->bhst", q, k) / np.sqrt(q.shape[-1])
    logits = jnp.where(jnp.tril(jnp.ones((seq, seq), bool)), logits, -1e9)
    a = jnp.einsum("bhst,bthk->bshk", jax.nn.softmax(logits, axis=-1), v)
    x = x + jnp.einsum("bshk,hkd->bsd", a, wo)
    h = layer_norm(x, g2, b2)
    x = x + jax.nn.gelu(h @ w1 + c1) @ w2
    return jnp.mean((x - y) ** 2)


def sgd(loss, lr=0.1):
    def step(params, *data):
        value, grads = jax.value_and_grad(loss)(params, *data)
        return value, jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return step


def adam(loss, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step from given moments (step 1's bias correction)."""
    def step(params, m, v, *data):
        value, grads = jax.value_and_grad(loss)(params, *data)
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        params = jax.tree.map(lambda p, m, v: p - lr * (m / (1 - b1)) / (jnp.sqrt(v / (1 - b2)) + eps), params, m, v)
        return value, params, m, v
    return step


def mlp_case(d: int, tokens: int, mesh_shape: tuple[int, int], layers: int = 2) -> Case:
    """An MLP stack (d -> 4d -> d, residual), SGD. 8x1: data parallel; 2x4: Megatron (w1 columns, w2 rows)."""
    mesh = make_mesh(mesh_shape)
    s = lambda *spec: NamedSharding(mesh, P(*spec))  # noqa: E731
    rng = np.random.default_rng(d)
    params = [(rng.standard_normal((d, 4 * d), np.float32) / np.sqrt(d),
               rng.standard_normal((4 * d,), np.float32) * 0.1,
               rng.standard_normal((4 * d, d), np.float32) / np.sqrt(4 * d)) for _ in range(layers)]
    x = rng.standard_normal((tokens, d), np.float32)
    y = rng.standard_normal((tokens, d), np.float32)
    p_spec = [(s(None, "model"), s("model"), s("model", None))] * layers
    in_shardings = (p_spec, s("data", None), s("data", None))
    out_shardings = (s(), p_spec)
    name = "mlp_train_dp" if mesh_shape == (8, 1) else "mlp_train_2d"
    flops = 3 * layers * 2 * 2 * tokens * d * 4 * d
    return Case(name, "x".join(map(str, mesh_shape)), d, tokens, sgd(mlp_loss), (params, x, y),
                in_shardings, out_shardings, flops)


def block_case(d: int, batch: int, seq: int, mesh_shape: tuple[int, int]) -> Case:
    """One transformer block, Adam; heads of 64. 2x4: batch over data, heads and MLP over model (Megatron)."""
    mesh = make_mesh(mesh_shape)
    s = lambda *spec: NamedSharding(mesh, P(*spec))  # noqa: E731
    heads, hd = d // 64, 64
    rng = np.random.default_rng(d + 1)
    n = lambda *shape: rng.standard_normal(shape, np.float32) / np.sqrt(shape[0])  # noqa: E731
    params = [np.ones(d, np.float32), np.zeros(d, np.float32), n(d, heads, hd), n(d, heads, hd), n(d, heads, hd),
              n(heads, hd, d) / np.sqrt(heads), np.ones(d, np.float32), np.zeros(d, np.float32),
              n(d, 4 * d), np.zeros(4 * d, np.float32), n(4 * d, d)]
    specs = [s(None), s(None), s(None, "model", None), s(None, "model", None), s(None, "model", None),
             s("model", None, None), s(None), s(None), s(None, "model"), s("model"), s("model", None)]
    zeros = [np.zeros_like(p) for p in params]
    moments = [(rng.standard_normal(p.shape, np.float32) * 1e-3) ** 2 for p in params]
    x = rng.standard_normal((batch, seq, d), np.float32)
    y = rng.standard_normal((batch, seq, d), np.float32)
    data = s("data", None, None)
    loss = lambda p, x, y: block_loss(p, x, y, heads)  # noqa: E731
    tokens = batch * seq
    flops = 3 * (2 * tokens * d * d * 4 + 2 * tokens * d * 4 * d * 2 + 2 * 2 * batch * heads * seq * seq * hd)
    name = "block_adam_dp" if mesh_shape == (8, 1) else "block_adam_2d"
    return Case(name, "x".join(map(str, mesh_shape)), d, tokens, adam(loss), (params, zeros, moments, x, y),
                (specs, specs, specs, data, data), (s(), specs, specs, specs), flops)


def cases(quick: bool, only: str) -> list[Case]:
    if quick:
        chosen = [mlp_case(256, 256, (2, 4), layers=1)]
    else:
        chosen = []
        for d in (256, 512, 1024):
            tokens = 1024 if d < 1024 else 512
            chosen += [mlp_case(d, tokens, (8, 1)), mlp_case(d, tokens, (2, 4))]
            chosen += [block_case(d, 8, tokens // 8, (8, 1)), block_case(d, 8, tokens // 8, (2, 4))]
    return [c for c in chosen if only in c.name]


CORPUS_ROOTS = [REPO / "tests" / "data" / "corpus", REPO.parent / "shared" / "corpus"]


def corpus_cases(only: str) -> tuple[list[Case], list[str]]:
    """The corpus's training steps (names with train or step) that have StableHLO and outputs;
    and, for each one left out, why."""
    chosen, skipped, seen = [], [], set()
    for root in CORPUS_ROOTS:
        for folder in sorted(root.glob("*/*")):
            name = folder.name
            if not folder.is_dir() or name in seen or not ("train" in name or "step" in name) or only not in name:
                continue
            seen.add(name)
            if not (folder / "stablehlo.mlir").exists():
                skipped.append(f"{name}: no stablehlo.mlir (only HLO text), so no JAX-lowered program to give "
                               "both sides")
                continue
            if not (folder / "out0.npy").exists():
                skipped.append(f"{name}: no inputs or outputs, so nothing to run or check")
                continue
            meta = json.loads((folder / "meta.json").read_text())
            shape = meta["mesh_shape"]
            chosen.append(Case(f"corpus:{name}", "x".join(map(str, shape)), 0, 0, None, (), (), None,
                               float(meta.get("cost", {}).get("flops", 0.0)), folder))
    return chosen, skipped


# ---------------------------------------------------------------------------------------------
# Measuring.


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def agrees(actual: np.ndarray, expected: np.ndarray) -> bool:
    """As `gspmd compare`: same shape and dtype, relative L2 error within RTOL (or an absolute one within 1e-6)."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    diff = np.linalg.norm(actual.astype(np.float64) - expected.astype(np.float64))
    return relative_error(actual, expected) <= RTOL or diff <= 1e-6


class StderrCapture:
    """Collects what the process (XLA's C++ logging included) writes to fd 2 while active."""

    def __enter__(self):
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode(errors="replace")
        self._file.close()


PASS_TIME = re.compile(r"HLO pass: ([\w.-]+) time: [^(]*\((\d+) us\)")


def xla_pass_ms(log: str, name: str) -> float | None:
    """Sum of one pass's runs in hlo_pass_pipeline's VLOG ("HLO pass: shardy-xla time: 4.2 ms (4199 us)")."""
    times = [int(us) for pass_name, us in PASS_TIME.findall(log) if pass_name == name]
    return sum(times) / 1e3 if times else None


def load_average() -> str:
    try:
        return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def measure(case: Case, repeats: int, compiles: int) -> tuple[dict, dict]:
    """One program's step-time row and compile-time row; XLA's logging is kept off the terminal
    (and shown, its warnings and errors only, when the measurement fails)."""
    captured = StderrCapture()
    try:
        with captured:
            return measure_quietly(case, repeats, compiles)
    except BaseException:
        sys.stderr.write("".join(line + "\n" for line in captured.text.splitlines() if not line.startswith("I")))
        raise


class JaxSide:
    """XLA's side of a JAX-written case: jax.jit with in/out shardings (Shardy propagation, JAX's default)."""

    propagation_pass = "shardy-xla"

    def __init__(self, case: Case):
        self._case = case
        self._jitted = jax.jit(case.step, in_shardings=case.in_shardings, out_shardings=case.out_shardings)
        self.leaves = jax.tree.leaves(case.args)
        self.text = self._jitted.lower(*case.args).as_text()
        self._device_args = jax.device_put(case.args, case.in_shardings)
        self.step_numpy()  # compiles once for the steps below

    def compile(self) -> None:
        """A fresh lowering compiled, JAX's caches emptied first so XLA compiles again; the lowering not counted."""
        case = self._case
        jax.clear_caches()
        lowered = jax.jit(case.step, in_shardings=case.in_shardings, out_shardings=case.out_shardings).lower(*case.args)
        with StderrCapture() as self.compile_log:
            start = time.perf_counter()
            lowered.compile()
            self.compile_seconds = time.perf_counter() - start

    def step(self) -> None:
        jax.block_until_ready(self._jitted(*self._device_args))

    def step_numpy(self) -> list[np.ndarray]:
        return [np.asarray(o) for o in jax.tree.leaves(self._jitted(*self._case.args))]


class CorpusSide:
    """XLA's side of a corpus case: its stablehlo.mlir (GSPMD shardings, mhlo.sharding) compiled for 8
    devices through JAX's PJRT client, the inputs placed with meta.json's PartitionSpecs."""

    propagation_pass = "sharding-propagation"

    def __init__(self, folder: pathlib.Path):
        from jax._src import compiler, xla_bridge
        from jax._src.lib import xla_client

        meta = json.loads((folder / "meta.json").read_text())
        self.text = (folder / "stablehlo.mlir").read_text()
        self.leaves = [np.load(folder / f"in{i}.npy") for i in range(len(list(folder.glob("in*.npy"))))]
        self.expected = [np.load(folder / f"out{i}.npy") for i in range(len(list(folder.glob("out*.npy"))))]
        devices = jax.devices()[:8]
        mesh = Mesh(np.array(devices).reshape(meta["mesh_shape"]), tuple(meta["mesh_axes"]))
        spec = lambda text: NamedSharding(mesh, eval(text, {"P": P}))  # noqa: E731  (meta.json's "P('data', None)")
        self._in_shardings = [spec(text) for text in meta["in_specs"]]
        self._out_shardings = [NamedSharding(mesh, p) for p in eval(meta["out_specs"], {"P": P})]
        self._backend = xla_bridge.get_backend()
        self._devices = xla_client.DeviceList(tuple(devices))
        self._options = compiler.get_compile_options(num_replicas=1, num_partitions=8,
                                                     device_assignment=np.arange(8).reshape(1, 8))
        self._options.executable_build_options.use_spmd_partitioning = True
        self._device_args = [jax.device_put(a, s) for a, s in zip(self.leaves, self._in_shardings)]
        self.compile()
        self._executable = self._compiled

    def compile(self) -> None:
        with StderrCapture() as self.compile_log:
            start = time.perf_counter()
            self._compiled = self._backend.compile_and_load(self.text, self._devices, self._options)
            self.compile_seconds = time.perf_counter() - start

    def _run(self, args) -> list:
        shards = self._executable.execute_sharded(args).disassemble_into_single_device_arrays()
        return [jax.make_array_from_single_device_arrays(e.shape, s, o)
                for o, s, e in zip(shards, self._out_shardings, self.expected)]

    def step(self) -> None:
        jax.block_until_ready(self._run(self._device_args))

    def step_numpy(self) -> list[np.ndarray]:
        args = [jax.device_put(a, s) for a, s in zip(self.leaves, self._in_shardings)]
        return [np.asarray(o) for o in self._run(args)]


def measure_quietly(case: Case, repeats: int, compiles: int) -> tuple[dict, dict]:
    side = JaxSide(case) if case.folder is None else CorpusSide(case.folder)
    leaves = side.leaves

    # Compile time, both sides, best of `compiles`.
    xla_compile, propagation, spmd = [], [], []
    for _ in range(compiles):
        side.compile()
        xla_compile.append(side.compile_seconds)
        propagation.append(xla_pass_ms(side.compile_log.text, side.propagation_pass))
        spmd.append(xla_pass_ms(side.compile_log.text, "spmd-partitioning"))
    read, prop, part = [], [], []
    for _ in range(compiles):
        start = time.perf_counter()
        program = gspmd.from_text(side.text, f"<jax:{case.name}>", format="stablehlo")
        read.append(time.perf_counter() - start)
        start = time.perf_counter()
        propagated = program.propagate()
        prop.append(time.perf_counter() - start)
        start = time.perf_counter()
        per_device = propagated.partition()
        part.append(time.perf_counter() - start)

    # Agreement (with the corpus's recorded outputs too, for a corpus case), then steps alternating.
    expected = side.step_numpy()
    actual = per_device.run(*leaves)
    errors = [relative_error(a, e) for a, e in zip(actual, expected)]
    agree = len(actual) == len(expected) and all(agrees(a, e) for a, e in zip(actual, expected))
    if case.folder is not None:
        agree = agree and all(agrees(a, e) for a, e in zip(actual, side.expected))
    side.step()  # warm: the compile for device-placed arguments
    xla, xla_np, ours, xla_cpu, ours_cpu = [], [], [], [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        side.step()
        xla.append(time.perf_counter() - start)
        xla_cpu.append(time.process_time() - start_cpu)
        start, start_cpu = time.perf_counter(), time.process_time()
        per_device.run(*leaves)
        ours.append(time.perf_counter() - start)
        ours_cpu.append(time.process_time() - start_cpu)
        start = time.perf_counter()
        side.step_numpy()
        xla_np.append(time.perf_counter() - start)

    med = lambda values: statistics.median(values) * 1e3  # noqa: E731
    low = lambda values: min(values) * 1e3  # noqa: E731
    step = {
        "program": case.name, "mesh": case.mesh, "d_model": case.d_model or "-", "tokens": case.tokens or "-",
        "GFLOP/step": f"{case.flops / 1e9:.3g}",
        "XLA ms (med/min)": f"{med(xla):.1f} / {low(xla):.1f}",
        "XLA np ms": f"{med(xla_np):.1f}",
        "gspmd ms (med/min)": f"{med(ours):.1f} / {low(ours):.1f}",
        "ratio gspmd/XLA": f"{med(ours) / med(xla):.2f}",
        "ratio gspmd/XLA np": f"{med(ours) / med(xla_np):.2f}",
        "CPU ms XLA / gspmd": f"{med(xla_cpu):.0f} / {med(ours_cpu):.0f}",
        "max rel err": f"{max(errors):.1e}",
        "agree": "yes" if agree else "NO",
    }
    best = lambda values: min(values) * 1e3  # noqa: E731
    xla_part = [a + b for a, b in zip(propagation, spmd) if a is not None and b is not None]
    ours_part = best([a + b for a, b in zip(prop, part)])
    compile_row = {
        "program": f"{case.name} {case.mesh}", "d_model": case.d_model or "-",
        "XLA compile ms": f"{best(xla_compile):.0f}",
        "XLA propagation pass": side.propagation_pass,
        "XLA propagation ms": f"{min(v for v in propagation if v is not None):.1f}" if any(propagation) else "n/a",
        "XLA spmd-partitioning ms": f"{min(v for v in spmd if v is not None):.1f}" if any(spmd) else "n/a",
        "XLA prop+part ms": f"{min(xla_part):.1f}" if xla_part else "n/a",
        "gspmd read ms": f"{best(read):.1f}", "gspmd propagate ms": f"{best(prop):.1f}",
        "gspmd partition ms": f"{best(part):.1f}", "gspmd prop+part ms": f"{ours_part:.1f}",
        "ratio prop+part gspmd/XLA": f"{ours_part / min(xla_part):.2f}" if xla_part else "n/a",
    }
    return step, compile_row


def table(columns: list[str], rows: list[dict]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one small program, 3 steps a side (under a minute)")
    parser.add_argument("--repeats", type=int, default=None, help="steps timed per side (default 7, quick 3)")
    parser.add_argument("--compiles", type=int, default=None, help="compiles timed per side (default 3, quick 1)")
    parser.add_argument("--only", default="", help="only programs whose name contains this")
    parser.add_argument("--no-corpus", action="store_true", help="leave out the corpus's training steps")
    parser.add_argument("--out", type=pathlib.Path, help="also write the tables here (Markdown)")
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 7)
    compiles = args.compiles or (1 if args.quick else 3)
    with StderrCapture():  # the backend's start-up lines
        count = jax.device_count()
    if count < 8:
        sys.exit(f"JAX sees {count} devices; XLA_FLAGS must give 8 host devices before JAX starts")

    header = (f"commit {commit()}, JAX {jax.__version__}, {os.cpu_count()} cores, load average at start "
              f"{load_average()}; {repeats} steps a side, alternating; compile best of {compiles}")
    print(header, flush=True)
    steps, compiles_rows = [], []
    chosen, skipped = cases(args.quick, args.only), []
    if not args.quick and not args.no_corpus:
        corpus, skipped = corpus_cases(args.only)
        chosen += corpus
    for case in chosen:
        step, compile_row = measure(case, repeats, compiles)
        steps.append(step)
        compiles_rows.append(compile_row)
        print(" ".join(f"{k}={v}" for k, v in step.items()) + f" load={load_average()}", flush=True)
    report = "\n".join([
        header + f"; load average at end {load_average()}", "",
        "Step time (ms per step; ratio of medians):", "", table(COLUMNS, steps), "",
        "Compile time (ms, best of the compiles):", "", table(COMPILE_COLUMNS, compiles_rows), ""]
        + [f"Corpus case left out: {reason}" for reason in skipped])
    print(report)
    if args.out:
        args.out.write_text(report)
    return 0 if all(row["agree"] == "yes" for row in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
