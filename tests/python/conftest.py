"""Shared fixtures of the Python package's tests: where the corpus and the CLI are, JAX on 8 CPU devices."""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import shutil
import sys

import numpy as np
import pytest

# JAX reads XLA_FLAGS when it starts: 8 host devices for the tests that compare with XLA.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

REPO = pathlib.Path(__file__).resolve().parents[2]


def oracle(module: str):
    """gspmd.oracle.<module>, or the same file as oracle.<module> when the package is not built
    (the oracle's tests import it as `from conftest import oracle`)."""
    try:
        return importlib.import_module(f"gspmd.oracle.{module}")
    except ImportError:
        sys.path.insert(0, str(REPO / "python" / "gspmd"))
        return importlib.import_module(f"oracle.{module}")
CORPUS = REPO / "tests" / "data" / "corpus"


def corpus_cases() -> list[pathlib.Path]:
    """Every case folder of both exports (gspmd/ and shardy/) that has outputs."""
    return sorted(p for export in ("gspmd", "shardy") for p in (CORPUS / export).iterdir()
                  if (p / "out0.npy").exists())


def devices_of(case: pathlib.Path) -> int:
    """The size of the mesh JAX compiled the case for (meta.json)."""
    meta = json.loads((case / "meta.json").read_text())
    return int(np.prod(meta["mesh_shape"]))


def inputs_of(case: pathlib.Path) -> list[np.ndarray]:
    count = len(list(case.glob("in*.npy")))
    return [np.load(case / f"in{i}.npy") for i in range(count)]


def outputs_of(case: pathlib.Path) -> list[np.ndarray]:
    count = len(list(case.glob("out*.npy")))
    return [np.load(case / f"out{i}.npy") for i in range(count)]


def assert_matches(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-4, what: str = "") -> None:
    """As `gspmd compare`: same shape and dtype; floats within rtol in relative L2 error, others equal."""
    assert actual.shape == expected.shape, what
    assert actual.dtype == expected.dtype, what
    if np.issubdtype(expected.dtype, np.floating) or expected.dtype.name == "bfloat16":
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        scale = max(np.linalg.norm(e), 1e-30)
        error = np.linalg.norm(a - e) / scale
        assert error <= rtol or np.linalg.norm(a - e) <= 1e-6, f"{what}: relative L2 error {error:.3g} > {rtol}"
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


@pytest.fixture(scope="session")
def cli() -> str:
    """The gspmd CLI of the same build (build/gspmd, or $GSPMD_CLI); skipped when there is none."""
    path = os.environ.get("GSPMD_CLI") or str(REPO / "build" / "gspmd")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no gspmd CLI at {path} to compare with (build it with scripts/build.sh or set GSPMD_CLI)")
    return path


@pytest.fixture(scope="session")
def jax():
    """JAX on 8 CPU devices. Skipped when JAX is not installed, unless GSPMD_REQUIRE_JAX=1 (CI)."""
    try:
        import jax as jax_module
    except ImportError:
        if os.environ.get("GSPMD_REQUIRE_JAX") == "1":
            pytest.fail("GSPMD_REQUIRE_JAX=1 but jax is not importable (scripts/install-python.sh installs it)")
        pytest.skip("jax is not installed (pip install jax); the JAX comparisons need it")
    if jax_module.device_count() < 8:
        pytest.fail(f"JAX sees {jax_module.device_count()} devices; XLA_FLAGS must give 8 host devices before JAX starts")
    return jax_module
