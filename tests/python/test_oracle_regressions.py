"""Every reproducer kept in tests/data/oracle/NAME (python3 -m gspmd.oracle --add-test NAME DIR),
checked again without JAX: gspmd reads its StableHLO, partitions and runs it, and must match the
XLA results, result shardings and communication stored beside it. A folder whose meta.json has
"xfail" is a known gspmd bug: the test expects it to fail (strictly) until the bug is fixed."""

from __future__ import annotations

import json
import pathlib

import pytest
from conftest import oracle

REPO = pathlib.Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (REPO / "tests" / "data" / "oracle").glob("*") if (p / "meta.json").exists())


def _param(case: pathlib.Path):
    meta = json.loads((case / "meta.json").read_text())
    marks = [pytest.mark.xfail(strict=True, reason=meta["xfail"])] if meta.get("xfail") else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.skipif(not CASES, reason="no reproducers in tests/data/oracle")
@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_reproducer_agrees_with_xla(case, cli):
    check = oracle("check")
    backend = oracle("backend").CliBackend(binary=cli)
    ref = check.Reference.load(str(case))
    result = check.check_reference(ref, backend)
    assert result.status == "equal", result.line()
    if result.comm_known:
        assert result.comm_ours <= result.comm_xla, result.line()


def test_xla_with_its_inputs_replicated_sides_with_ours_where_its_partitioning_is_wrong(jax, cli):
    """The oracle's fourth tie-breaker on a kept XLA bug: XLA's partitioned result of the
    max-pool gradient is wrong; XLA's run of the same program with its inputs replicated gives
    ours, so a soak counts the program equal, with a note."""
    check, generate = oracle("check"), oracle("generate")
    case = REPO / "tests" / "data" / "oracle" / "maxpool_grad_xla_partitioned_rows"
    spec = generate.ProgramSpec.from_json((case / "spec.json").read_text())
    ref = check.Reference.load(str(case))
    ours = oracle("backend").CliBackend(binary=cli)
    result = check.check_reference(ref, ours, f64_tie_break=False)
    assert result.status == "mismatch" and result.outputs is not None, result.line()
    whole = check.xla_on_mesh_inputs_whole(spec, jax)
    assert whole is not None
    assert check.compare_arrays(result.outputs[1], whole[1]) == ""
    assert check.compare_arrays(ref.outputs[1], whole[1]) != ""
    check._check_against_one_device(spec, [result], jax)
    assert result.status == "equal" and any("inputs replicated" in n for n in result.notes), result.notes


def test_xla_op_by_op_sides_with_ours_through_a_fori_loop(jax, cli):
    """The oracle's op-by-op tie-breaker runs programs with a fori_loop (its index is a Python
    int there): XLA's jit updates dynamic_update_slice(x, x[0:3], ...) in place while reading
    the rows it overwrites; XLA op by op gives ours, so a soak counts the program equal."""
    check, generate = oracle("check"), oracle("generate")
    case = REPO / "tests" / "data" / "oracle" / "dus_of_own_slice_xla_jit"
    spec = generate.ProgramSpec.from_json((case / "spec.json").read_text())
    ref = check.Reference.load(str(case))
    result = check.check_reference(ref, oracle("backend").CliBackend(binary=cli), f64_tie_break=False)
    assert result.status == "mismatch" and result.outputs is not None, result.line()
    eager = check.xla_on_one_device(spec, jax, eager=True)
    assert eager is not None
    assert check.compare_arrays(result.outputs[0], eager[0]) == ""
    check._check_against_one_device(spec, [result], jax)
    assert result.status == "equal" and any("op by op" in n for n in result.notes), result.notes
