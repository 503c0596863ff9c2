"""Program.annotate with JAX's vocabulary gives the program hand-written shardings give."""

from __future__ import annotations

import numpy as np
import pytest

import gspmd

UNANNOTATED = """HloModule mlp
ENTRY e {{
  x = f32[16,32] parameter(0){sx}
  w = f32[32,64] parameter(1){sw}
  b = f32[64] parameter(2){sb}
  d = f32[16,64] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  bb = f32[16,64] broadcast(b), dimensions={{1}}
  a = f32[16,64] add(d, bb)
  ROOT r = f32[16,64] tanh(a)
}}
"""


def program(sx="", sw="", sb="", header=""):
    text = UNANNOTATED.format(sx=sx, sw=sw, sb=sb)
    return text.replace("HloModule mlp", "HloModule mlp" + header)


MESH = gspmd.Mesh({"data": 2, "model": 4})

CASES = [
    # specs, the hand-written shardings of x, w, b
    ({"x": ("data", None), "w": (None, "model"), "b": ("model",)},
     ("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
      "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}")),
    ({0: (("data", "model"), None), "%w": ("model", None), 2: (None,)},
     ("{devices=[8,1]<=[8]}", "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "{replicated}")),
    ({"x": (("model", "data"),), "w": ("data", "model"), "b": ()},
     ("{devices=[8,1]<=[2,4]T(1,0)}", "{devices=[2,4]<=[8]}", "{replicated}")),
]


@pytest.mark.parametrize("specs,shardings", CASES)
def test_annotate_then_partition_equals_hand_written(specs, shardings):
    annotated = gspmd.from_text(program()).annotate(specs, MESH)
    sx, sw, sb = (f", sharding={s}" for s in shardings)
    written = gspmd.from_text(program(sx, sw, sb, header=", num_partitions=8"))
    assert annotated.num_partitions == 8
    assert annotated.partition().text() == written.partition().text()
    assert annotated.propagate().text() == written.propagate().text()
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(p.shape).astype(np.float32) for p in annotated.parameters]
    np.testing.assert_allclose(annotated.run(*arrays)[0], written.eval(*arrays)[0], rtol=1e-5, atol=1e-6)


def test_annotate_takes_a_dict_as_mesh_and_leaves_others_unannotated():
    annotated = gspmd.from_text(program()).annotate({"x": ("d",)}, {"d": 8})
    text = annotated.text()
    assert "sharding={devices=[8,1]<=[8]}" in text
    assert text.count("sharding=") == 1


@pytest.mark.parametrize("specs,match", [
    ({"x": ("nope", None)}, r"mesh axis 'nope'.*axes: 'data', 'model'"),
    ({"y": ("data",)}, r"no parameter named 'y' \(parameters: 0 %x, 1 %w, 2 %b\)"),
    ({7: ("data",)}, r"no parameter 7"),
    ({"b": ("data", "model")}, r"has 2 entries but f32\[64\] has 1 dims"),
    ({"x": ("data", "data")}, r"uses mesh axis 'data' twice"),
    ({"x": ("data",), 0: ("model",)}, r"two specs"),
    ({"x": "data"}, r"expected a tuple"),
])
def test_bad_specs_are_sharding_errors(specs, match):
    with pytest.raises(gspmd.ShardingError, match=match):
        gspmd.from_text(program()).annotate(specs, MESH)


def test_bad_mesh_is_a_sharding_error():
    with pytest.raises(gspmd.ShardingError, match="positive size"):
        gspmd.Mesh({"data": 0})
    with pytest.raises(gspmd.ShardingError, match="num_partitions=4"):
        gspmd.from_text(program(header=", num_partitions=4")).annotate({"x": ("data",)}, MESH)
