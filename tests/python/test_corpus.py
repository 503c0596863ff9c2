"""Every corpus case, in both exports, run from Python: outputs equal JAX's, communication equals the CLI's."""

from __future__ import annotations

import json
import subprocess

import pytest

import gspmd
from conftest import assert_matches, corpus_cases, devices_of, inputs_of, outputs_of

CASES = corpus_cases()
IDS = [f"{case.parent.name}/{case.name}" for case in CASES]
# Cases exported as StableHLO too (JAX's lower().as_text()).
MLIR_CASES = [case for case in CASES if (case / "stablehlo.mlir").exists()]
MLIR_IDS = [f"{case.parent.name}/{case.name}" for case in MLIR_CASES]
EXPORTS = [(case, "pre.hlo") for case in CASES] + [(case, "stablehlo.mlir") for case in MLIR_CASES]
EXPORT_IDS = [f"{case.parent.name}/{case.name}/{export}" for case, export in EXPORTS]


@pytest.mark.parametrize("case", MLIR_CASES, ids=MLIR_IDS)
def test_stablehlo_runs_as_jax_did(case):
    program = gspmd.load(case / "stablehlo.mlir")
    outputs = program.run(*inputs_of(case), devices=devices_of(case))
    expected = outputs_of(case)
    assert len(outputs) == len(expected)
    for i, (actual, wanted) in enumerate(zip(outputs, expected)):
        assert_matches(actual, wanted, what=f"{case.name} out{i}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hlo_runs_as_jax_did(case):
    program = gspmd.load(case / "pre.hlo")
    outputs = program.run(*inputs_of(case), devices=devices_of(case))
    for i, (actual, wanted) in enumerate(zip(outputs, outputs_of(case))):
        assert_matches(actual, wanted, what=f"{case.name} out{i}")


@pytest.mark.parametrize("case,export", EXPORTS, ids=EXPORT_IDS)
def test_report_equals_cli(case, export, cli, tmp_path):
    devices = devices_of(case)
    report = gspmd.load(case / export).partition(devices).report()
    partitioned = tmp_path / "per_device.hlo"
    subprocess.run([cli, "partition", str(case / export), "--devices", str(devices), "-o", str(partitioned)],
                   check=True, capture_output=True)
    expected = json.loads(subprocess.run([cli, "report", str(partitioned), "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    assert report == expected
    assert report["comm_bytes_per_device"] >= 0


def test_partitioned_program_runs_with_global_arrays():
    case = CASES[0].parent / "megatron_mlp"
    per_device = gspmd.load(case / "pre.hlo").partition()
    assert per_device.is_per_device
    assert not gspmd.load(case / "pre.hlo").is_per_device
    outputs = per_device.run(*inputs_of(case))
    assert_matches(outputs[0], outputs_of(case)[0])


def test_eval_runs_on_one_device():
    case = CASES[0].parent / "dp_matmul"
    outputs = gspmd.load(case / "pre.hlo").eval(*inputs_of(case))
    assert_matches(outputs[0], outputs_of(case)[0])


def test_xla_partitioned_program_runs_like_its_propagated_program():
    case = CASES[0].parent / "megatron_mlp"
    per_device = gspmd.load(case / "partitioned.hlo")
    outputs = per_device.run(*inputs_of(case), like=gspmd.load(case / "propagated.hlo"))
    assert_matches(outputs[0], outputs_of(case)[0])
