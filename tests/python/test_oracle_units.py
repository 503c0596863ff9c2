"""The oracle's own parts without JAX: sharding layouts, XLA's replica groups, tolerances, the
generator's determinism, delta debugging, and --add-test."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import oracle


@pytest.mark.parametrize("ours, xla, rank, devices", [
    ("{mesh['x'=2,'y'=4], [{'x'}, {}]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", 2, 8),
    ("{mesh['x'=2,'y'=4], [{'y','x'}, {}]}", "{devices=[8,1]<=[2,4]T(1,0)}", 2, 8),
    ("{mesh['x'=2,'y'=4], [{}]}", "{replicated}", 1, 8),
    ("{mesh['x'=4], device_ids=(3,2,1,0), [{'x'}]}", "{devices=[4]3,2,1,0}", 1, 4),
    ("{mesh['x'=4,'y'=2], [{'x':(1)2}, {'y'}]}", "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}", 2, 8),
    ("{devices=[2,2]0,1,2,3}", "{devices=[2,2]<=[4]}", 2, 4),
])
def test_same_layout_printed_two_ways(ours, xla, rank, devices):
    hlo_text = oracle("hlo_text")
    assert hlo_text.layout(ours, rank, devices) == hlo_text.layout(xla, rank, devices)


@pytest.mark.parametrize("a, b, rank, devices", [
    ("{mesh['x'=2,'y'=4], [{'x'}, {}]}", "{mesh['x'=2,'y'=4], [{}, {'x'}]}", 2, 8),
    ("{mesh['x'=2,'y'=4], [{'x','y'}]}", "{mesh['x'=2,'y'=4], [{'y','x'}]}", 1, 8),
    ("{devices=[4]0,1,2,3}", "{devices=[4]0,2,1,3}", 1, 4),
    ("{replicated}", "{devices=[2]0,1}", 1, 2),
])
def test_different_layouts_differ(a, b, rank, devices):
    hlo_text = oracle("hlo_text")
    assert hlo_text.layout(a, rank, devices) != hlo_text.layout(b, rank, devices)


def test_root_shardings_of_a_tuple_and_of_one_result():
    hlo_text = oracle("hlo_text")
    text = ("HloModule m\n\nENTRY %main (p: f32[4]) -> (f32[4], f32[2]) {\n  %p = f32[4] parameter(0)\n"
            "  ROOT %t = (f32[4], f32[2]) tuple(%p, %p), sharding={{replicated}, {devices=[2]0,1}}\n}\n")
    assert hlo_text.root_shardings(text, 2) == ["{replicated}", "{devices=[2]0,1}"]
    one = "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  ROOT %p = f32[4] parameter(0), sharding={maximal device=1}\n}\n"
    assert hlo_text.root_shardings(one, 1) == ["{maximal device=1}"]
    assert hlo_text.root_shardings(one.replace(", sharding={maximal device=1}", ""), 1) is None


def test_xla_mesh_replica_groups_become_explicit_groups():
    hlo_text = oracle("hlo_text")
    text, count = hlo_text.rewrite_for_reading(
        "a = f32[2] all-reduce(b), replica_groups=mesh['a'=2,'b'=2,'c'=2], device_ids=(0,2,4,6,1,3,5,7) {'b'}, x\n"
        "c = f32[2] all-gather(d), replica_groups=mesh['a'=4,'b'=1,'c'=2], device_ids=([2,4]T(1,0)) {'a'}, y\n"
        "e = f32[2] all-reduce(f), replica_groups=mesh['a'=2,'b'=4] {'a'}, z\n")
    assert count == 2
    assert "replica_groups={{0,4},{2,6},{1,5},{3,7}}, x" in text
    assert "replica_groups={{0,1,2,3},{4,5,6,7}}, y" in text
    assert "replica_groups=mesh['a'=2,'b'=4] {'a'}, z" in text      # gspmd reads this form


def test_tolerances():
    check = oracle("check")
    e = np.array([1.0, -2.0, 1e-9, 0.0], np.float32)
    assert check.compare_arrays(e * (1 + 5e-6), e) == ""
    assert "beyond rtol" in check.compare_arrays(e * (1 + 1e-4), e)
    assert check.compare_arrays(e + np.float32(1e-6), e) == ""             # rtol of the largest magnitude
    assert check.compare_arrays(e * (1 + 1e-2), e, lowp=True) == ""       # through bf16
    assert check.compare_arrays(np.array([np.nan, np.inf]), np.array([np.nan, np.inf])) == ""
    assert "differ" in check.compare_arrays(np.array([1, 2], np.int32), np.array([1, 3], np.int32))
    assert "type" in check.compare_arrays(np.array([1, 2], np.int32), np.array([1, 2], np.int64))
    assert "shape" in check.compare_arrays(np.zeros(3), np.zeros(4))


def test_generator_is_deterministic_and_mixes_ops():
    generate = oracle("generate")
    assert generate.generate(5).to_json() == generate.generate(5).to_json()
    assert generate.generate(5).to_json() != generate.generate(6).to_json()
    specs = [generate.generate(s) for s in range(300)]
    kinds = {op.kind for s in specs for op in s.ops}
    assert kinds == set(generate.OP_KINDS)
    assert {i.dtype for s in specs for i in s.inputs} == set(generate.DTYPES)
    assert {len(s.mesh_shape) for s in specs} >= {1, 2, 3}
    assert any(s.grad for s in specs)
    assert max(s.devices for s in specs) == 8 and min(s.devices for s in specs) == 2
    assert max(generate.generate(s, devices=32).devices for s in range(300)) == 32
    again = generate.ProgramSpec.from_json(specs[7].to_json())
    assert again == specs[7]


def test_delta_debugging_finds_the_two_ops_that_matter():
    reduce = oracle("reduce")
    calls = []

    def fails(ops):
        calls.append(ops)
        return 3 in ops and 11 in ops

    assert reduce._ddmin(list(range(16)), fails) == [3, 11]
    assert len(calls) < 60
    assert reduce._ddmin([1, 2, 3], lambda ops: True) == []


def test_add_test_copies_a_reproducer(tmp_path):
    reduce = oracle("reduce")
    source = tmp_path / "seed1-shardy"
    source.mkdir()
    (source / "meta.json").write_text(json.dumps({"seed": 1, "export": "shardy"}))
    (source / "stablehlo.mlir").write_text("module {}")
    dest = reduce.add_test("case_one", str(source), xfail="gspmd bug #1", tests_dir=tmp_path / "tests")
    assert json.loads((dest / "meta.json").read_text())["xfail"] == "gspmd bug #1"
    assert (dest / "stablehlo.mlir").read_text() == "module {}"
    dest = reduce.add_test("case_one", str(dest), tests_dir=tmp_path / "again")
    assert "xfail" not in json.loads((dest / "meta.json").read_text())
    with pytest.raises(ValueError):
        reduce.add_test("bad name!", str(source), tests_dir=tmp_path / "tests")
    with pytest.raises(FileNotFoundError):
        reduce.add_test("x", str(tmp_path), tests_dir=tmp_path / "tests")


def _export(status, ours=None, xla=None, reason="", notes=(), kind=""):
    return {"export": "shardy", "status": status, "reason": reason, "comm_ours": ours, "comm_xla": xla,
            "kinds_ours": {"all-gather": ours or 0}, "kinds_xla": {"all-gather": xla or 0},
            "notes": list(notes), "line": "", "kind": kind or status}


def test_tally_counts_and_lists_as_the_contract_says():
    tally = oracle("tally").Tally()
    tally.add({"seed": 1, "status": "equal", "comm_ok": True, "exports": [_export("equal", 10, 20)]})
    tally.add({"seed": 2, "status": "equal", "comm_ok": False, "exports": [_export("equal", 30, 20)]})
    tally.add({"seed": 3, "status": "mismatch", "comm_ok": True, "exports": [_export("mismatch", 1, 1, "result 0: ...")]})
    tally.add({"seed": 4, "status": "refused", "comm_ok": False, "exports": [_export("refused", reason="run: no")]})
    tally.add({"seed": 5, "status": "invalid", "comm_ok": False, "exports": [_export("invalid", reason="lower: X")]})
    tally.add_xla_crash(6, -6, "F1206 spmd_partitioner.cc:1115] Check failed: x == y")
    tally.add_gspmd_crash(7, "SIGSEGV in gspmd (in-process)")
    summary = tally.summary()
    assert summary.splitlines()[-1] == "5 programs: 2 equal, 1 mismatches, 1 crashes, 1 refused, comm <= XLA on 2"
    assert "seed 2 shardy: 30 vs XLA's 20 bytes (1.50x; all-gather +10)" in summary
    assert "seed 3 shardy: mismatch: result 0: ..." in summary
    assert "seed 5: lower: X" in summary and "seed 6: exit -6: F1206" in summary
    assert not tally.agreed()


def test_output_propagation_flags_of_xla_header():
    hlo_text = oracle("hlo_text")
    header = ("HloModule jit_fn, is_scheduled=true, allow_spmd_sharding_propagation_to_parameters={false}, "
              "allow_spmd_sharding_propagation_to_output={false,true,false}, num_partitions=8")
    assert hlo_text.output_propagation(header) == [False, True, False]
    assert hlo_text.output_propagation("HloModule m, num_partitions=8") is None
    assert hlo_text.output_propagation("allow_spmd_sharding_propagation_to_output={maybe}") is None


_OURS = """HloModule ours, num_partitions=4

%body (p: (s32[], f32[2,4])) -> (s32[], f32[2,4]) {
  %p = (s32[], f32[2,4]) parameter(0)
  %x = f32[2,4] get-tuple-element(%p), index=1
  %ag = f32[8,4] all-gather(%x), replica_groups=[1,4]<=[4], dimensions={0}
  %s = f32[2,4] slice(%ag), slice={[0:2], [0:4]}
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %t = (s32[], f32[2,4]) tuple(%i, %s)
}

%cond (p: (s32[], f32[2,4])) -> pred[] {
  %p = (s32[], f32[2,4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

ENTRY %main (a: f32[2,4], b: f32[4,3]) -> f32[8,3] {
  %a = f32[2,4] parameter(0)
  %b = f32[4,3] parameter(1)
  %e = f32[2,4] exponential(%a)
  %c = f32[2,4] copy(%e)
  %g = f32[8,4] all-gather(%c), replica_groups=[1,4]<=[4], dimensions={0}
  %d = f32[8,3] dot(%g, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %z = s32[] constant(0)
  %t = (s32[], f32[2,4]) tuple(%z, %a)
  %w = (s32[], f32[2,4]) while(%t), condition=%cond, body=%body
  ROOT %r = f32[8,3] all-reduce(%d), replica_groups=[1,4]<=[4], to_apply=%sum
}
"""

_XLA = """HloModule xla, num_partitions=4

ENTRY %main.1_spmd (a: f32[2,4], b: f32[4,3]) -> f32[8,3] {
  %a = f32[2,4] parameter(0)
  %r = (f32[8,3], f32[]) all-reduce(%a, %a), replica_groups=[1,4]<=[4], to_apply=%sum
  ROOT %x = f32[2,3] all-reduce(%a), replica_groups=[1,4]<=[4], to_apply=%sum
}
"""


def test_excess_names_our_unpaired_collectives_with_place_producer_and_reader():
    excess = oracle("excess")
    reason = excess.explain_excess(_OURS, _XLA, 4)
    # XLA's tuple all-reduce pays for our f32[8,3] one; what is left is our two gathers.
    assert reason.startswith("gathers-not-reduces: ours all-gather f32[8,4] 96 B in loop body body, of the loop carry "
                             "for slice; all-gather f32[8,4] 96 B at entry, of exponential for dot;"), reason
    assert reason.endswith("XLA instead: all-reduce f32[2,3] 36 B, all-reduce f32[] 6 B"), reason
    assert excess.explain_excess(_OURS, "HloModule none\n", 4).startswith("xla-moves-nothing: ")
    same = excess.explain_excess(_OURS, _OURS.replace("f32[8,3] all-reduce", "f32[8,3] all-reduce"), 4)
    assert same.startswith("larger-same-kinds: ours the same collectives"), same


def test_tally_lists_the_reason_under_a_program_above_xla():
    tally = oracle("tally").Tally()
    export = _export("equal", 30, 20)
    export["comm_reason"] = "in-loop: ours all-gather f32[8] 24 B in loop body b, of add for dot"
    tally.add({"seed": 2, "status": "equal", "comm_ok": False, "exports": [export]})
    assert "1.50x; all-gather +10)\n      reason: in-loop: ours all-gather f32[8] 24 B" in tally.summary()
