"""numpy in and out: dtypes (bf16 through ml_dtypes, bool, integers) round trip, and no copies where promised."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import gspmd
from gspmd._arrays import hlo_type, to_inputs

ml_dtypes = pytest.importorskip("ml_dtypes", reason="bf16 arrays are ml_dtypes' bfloat16")

ELEMENTWISE = """
HloModule m, num_partitions=2
ENTRY e {{
  x = {t}[4,6] parameter(0), sharding={{devices=[2,1]<=[2]}}
  y = {t}[4,6] parameter(1), sharding={{replicated}}
  ROOT r = {t}[4,6] {op}(x, y)
}}
"""

CASES = [
    ("bf16", ml_dtypes.bfloat16, "add", lambda x, y: (x.astype(np.float32) + y.astype(np.float32)).astype(ml_dtypes.bfloat16)),
    ("f16", np.float16, "multiply", lambda x, y: x * y),
    ("f64", np.float64, "subtract", lambda x, y: x - y),
    ("pred", np.bool_, "and", lambda x, y: x & y),
    ("s8", np.int8, "add", lambda x, y: x + y),
    ("s32", np.int32, "maximum", np.maximum),
    ("s64", np.int64, "multiply", lambda x, y: x * y),
    ("u8", np.uint8, "add", lambda x, y: x + y),
    ("u32", np.uint32, "minimum", np.minimum),
]


def random_array(dtype, rng, shape=(4, 6)):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(0, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("type_name,dtype,op,reference", CASES, ids=[c[0] for c in CASES])
def test_dtype_round_trip(type_name, dtype, op, reference):
    rng = np.random.default_rng(0)
    x, y = random_array(dtype, rng), random_array(dtype, rng)
    program = gspmd.from_text(ELEMENTWISE.format(t=type_name, op=op))
    assert program.parameters[0].dtype == np.dtype(dtype)
    for out in (program.run(x, y)[0], program.eval(x, y)[0], program.partition().run(x, y)[0]):
        assert out.dtype == np.dtype(dtype)
        assert out.shape == (4, 6)
        np.testing.assert_array_equal(out.astype(np.float64), reference(x, y).astype(np.float64))


def test_results_are_the_library_buffers_not_copies():
    program = gspmd.from_text(ELEMENTWISE.format(t="f32", op="add"))
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = program.run(x, x)[0]
    # A view over the library's own storage: numpy does not own the data, a capsule does.
    assert not out.flags.owndata
    base = out
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert not isinstance(base, np.ndarray)
    del program
    gc.collect()
    np.testing.assert_array_equal(out, 2 * x)  # the buffer lives as long as the array


def test_inputs_are_viewed_not_copied():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    parameters = gspmd.from_text(ELEMENTWISE.format(t="f32", op="add")).parameters
    (type_name, dims, raw), _ = to_inputs([x, x], parameters, "<test>")
    assert (type_name, dims) == ("f32", [4, 6])
    assert np.shares_memory(raw, x)
    # A non-contiguous array is made contiguous once.
    (_, _, raw_t), _ = to_inputs([x.T.copy().T, x], parameters, "<test>")
    assert raw_t.size == x.nbytes


def test_bfloat16_maps_to_bf16():
    assert hlo_type(np.dtype(ml_dtypes.bfloat16)) == "bf16"
    assert hlo_type(np.dtype(np.float32)) == "f32"
    assert hlo_type(np.dtype(np.bool_)) == "pred"
    assert hlo_type(np.dtype(object)) is None


def test_python_scalars_take_the_parameter_dtype():
    program = gspmd.from_text("""
HloModule m
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] add(x, x)
}""")
    out = program.eval(1.5)[0]
    assert out.dtype == np.float32 and out.shape == () and out == 3.0


def test_empty_arrays():
    program = gspmd.from_text("""
HloModule m
ENTRY e {
  x = f32[0,3] parameter(0)
  ROOT y = f32[0,3] negate(x)
}""")
    out = program.eval(np.zeros((0, 3), np.float32))[0]
    assert out.shape == (0, 3) and out.dtype == np.float32


def test_big_endian_arrays_are_converted():
    program = gspmd.from_text(ELEMENTWISE.format(t="f32", op="add"))
    x = np.arange(24, dtype=">f4").reshape(4, 6)
    out = program.run(x, x)[0]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, 2 * x.astype(np.float32))


NUMPY_ALONE = """
import sys
sys.modules["ml_dtypes"] = None   # import fails: as if only numpy were installed
sys.modules["jax"] = None
import numpy as np
import gspmd
program = gspmd.from_text('''
HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT y = bf16[3] convert(x)
}''')
assert "jax" not in [m for m in sys.modules if sys.modules[m] is not None]
try:
    program.eval(np.ones(3, np.float32))
except gspmd.InputError as error:
    assert "ml_dtypes" in str(error), str(error)
    print("ok")
"""


def test_works_with_numpy_alone():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", NUMPY_ALONE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
