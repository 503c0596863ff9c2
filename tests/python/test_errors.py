"""Bad input raises the right gspmd.Error subclass with a located message, and never crashes the interpreter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gspmd

GOOD = """HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  w = f32[6,8] parameter(1), sharding={replicated}
  ROOT d = f32[4,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_hierarchy():
    for cls in (gspmd.ParseError, gspmd.ShardingError, gspmd.InputError, gspmd.ResourceError):
        assert issubclass(cls, gspmd.Error)
    assert issubclass(gspmd.InputError, ValueError)


def test_malformed_text_is_a_parse_error_at_line_and_column():
    with pytest.raises(gspmd.ParseError) as error:
        gspmd.from_text(GOOD.replace("f32[6,8] parameter(1)", "f32[6,8 parameter(1)"))
    assert re.match(r"<text>:4:\d+: error: ", str(error.value)), str(error.value)


def test_malformed_file_names_the_file(tmp_path):
    path = tmp_path / "bad.hlo"
    path.write_text(GOOD.replace("dot(x, w)", "dot(x, w"))
    with pytest.raises(gspmd.ParseError, match=re.escape(str(path)) + r":5:\d+: error: "):
        gspmd.load(path)


def test_malformed_stablehlo_is_a_parse_error(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("module @m {\n  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    return %arg1 : tensor<4xf32>\n  }\n}\n")
    with pytest.raises(gspmd.ParseError, match=re.escape(str(path)) + r":3:\d+: error: "):
        gspmd.load(path)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(gspmd.Error, match="cannot read"):
        gspmd.load(tmp_path / "missing.hlo")


def test_wrong_shape_names_input_and_parameter():
    program = gspmd.from_text(GOOD)
    with pytest.raises(gspmd.InputError) as error:
        program.run(np.zeros((4, 5), np.float32), np.zeros((6, 8), np.float32))
    message = str(error.value)
    assert message.startswith("input 0: error: ") and "%x" in message and "f32[4,5]" in message and "f32[4,6]" in message


def test_wrong_dtype_says_how_to_cast():
    program = gspmd.from_text(GOOD)
    with pytest.raises(gspmd.InputError) as error:
        program.run(np.zeros((4, 6), np.float64), np.zeros((6, 8), np.float32))
    assert str(error.value) == ("<text>: error: input 0 is float64 but parameter 0 (%x) is f32[4, 6]; "
                                "cast it with .astype(np.float32)")


def test_unsupported_dtype_is_an_input_error():
    with pytest.raises(gspmd.InputError, match="input 0 has dtype <U1"):
        gspmd.from_text(GOOD).run(np.array(["a"]), np.zeros((6, 8), np.float32))


def test_wrong_input_count_is_an_input_error():
    with pytest.raises(gspmd.InputError, match=r"<text>: error: .* takes 2 parameter\(s\) but 1 input"):
        gspmd.from_text(GOOD).run(np.zeros((4, 6), np.float32))


def test_unknown_chip_is_an_input_error():
    with pytest.raises(gspmd.InputError, match="tpu-v99"):
        gspmd.from_text(GOOD).simulate(chip="tpu-v99")


def test_unknown_simulate_option_is_a_type_error():
    with pytest.raises(TypeError, match="topolgy"):
        gspmd.from_text(GOOD).simulate(topolgy="8x8")


def test_unwritable_path_is_a_resource_error(tmp_path):
    target = tmp_path / "no" / "such" / "dir" / "out.hlo"
    with pytest.raises(gspmd.ResourceError, match=re.escape(str(target)) + ": error: cannot write"):
        gspmd.from_text(GOOD).save(target)
    with pytest.raises(gspmd.ResourceError, match="is a directory"):
        gspmd.from_text(GOOD).save(tmp_path)


def test_sharding_that_does_not_fit_the_devices_is_a_sharding_error():
    program = gspmd.from_text(GOOD.replace("devices=[2,1]<=[2]", "devices=[4,1]<=[4]").replace(", num_partitions=2", ""))
    with pytest.raises(gspmd.ShardingError, match=r"<text>: error: .* tiles over 4 devices"):
        program.partition(devices=2)
    with pytest.raises(gspmd.ShardingError, match=r"--devices 8 does not match the module's num_partitions=2"):
        gspmd.from_text(GOOD).partition(devices=8)


def test_bad_device_count_is_an_input_error():
    with pytest.raises(gspmd.InputError, match="devices=0"):
        gspmd.from_text(GOOD).run(np.zeros((4, 6), np.float32), np.zeros((6, 8), np.float32), devices=0)


def test_partitioning_twice_is_refused():
    per_device = gspmd.from_text(GOOD).partition()
    with pytest.raises(gspmd.InputError, match="per-device already"):
        per_device.partition()


def test_from_jax_rejects_what_is_not_a_lowered():
    with pytest.raises(gspmd.InputError, match="expected a jax.stages.Lowered"):
        gspmd.from_jax("module @m {}")


FUZZ = textwrap.dedent("""
    import random, sys
    import numpy as np
    import gspmd
    text = sys.stdin.read()
    rng = random.Random(int(sys.argv[1]))
    alphabet = "[](){}<>=,.:%0123456789 fsu\\n" + "abcdefghijklmnopqrstuvwxyz"
    parsed = errors = 0
    for trial in range(int(sys.argv[2])):
        chars = list(text)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(chars))
            what = rng.random()
            if what < 0.4:
                del chars[i]
            elif what < 0.8:
                chars[i] = rng.choice(alphabet)
            else:
                chars.insert(i, rng.choice(alphabet))
        try:
            program = gspmd.from_text("".join(chars))
            parsed += 1
            shapes = [p.shape if p.type != "tuple" else (1,) for p in program.parameters]
            arrays = [np.ones(s, p.dtype if p.type != "tuple" else np.float32)
                      for s, p in zip(shapes, program.parameters)]
            if rng.random() < 0.5:
                arrays = [np.ones((3,) * rng.randint(0, 3), np.float32) for _ in arrays]
            program.run(*arrays)
            program.partition().report()
        except gspmd.Error as error:
            errors += 1
            assert str(error), "an error without a message"
    print(parsed, errors)
""")


def test_fuzzed_programs_and_inputs_raise_errors_not_crashes():
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", FUZZ, "7", "150"], input=GOOD, capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, f"the fuzzed API crashed or raised another exception:\n{result.stderr[-3000:]}"
    parsed, errors = map(int, result.stdout.split())
    assert errors > 0
