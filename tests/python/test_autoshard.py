"""Program.autoshard: a plan for an unannotated program, the figures of `gspmd autoshard --json`, errors."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import gspmd
from conftest import CORPUS

MLP = CORPUS / "gspmd" / "megatron_mlp"


def test_autoshard_an_unannotated_corpus_program_runs_equal_to_xla():
    program = gspmd.load(MLP / "pre.hlo")
    plan = program.autoshard(devices=8, mesh={"x": 2, "y": 4}, keep="none", max_evaluations=30)
    assert isinstance(plan, gspmd.Autosharded)
    for key in ("mesh", "step_time_s", "mfu", "peak_bytes_per_device", "fits_memory", "solve_time_s", "lower_bound_s"):
        assert key in plan.summary, key
    assert plan.summary["mesh"] == "x=2,y=4" and plan.summary["fits_memory"]
    assert "sharding={" in plan.program.text()
    inputs = [np.load(MLP / f"in{i}.npy") for i in range(4)]
    (out,) = plan.program.run(*inputs, devices=8)
    np.testing.assert_allclose(out, np.load(MLP / "out0.npy"), rtol=1e-5, atol=1e-6)


def test_autoshard_gives_what_the_cli_gives(tmp_path, cli):
    program = gspmd.load(MLP / "pre.hlo")
    plan = program.autoshard(devices=8, mesh="x=8", keep="none", max_evaluations=20)
    out = tmp_path / "plan.hlo"
    done = subprocess.run([cli, "autoshard", str(MLP / "pre.hlo"), "--devices", "8", "--mesh", "x=8",
                          "--keep-annotations", "none", "--max-evaluations", "20", "--json", "-o", str(out)],
                         capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout)
    assert figures["step_time_s"] == plan.summary["step_time_s"]
    assert figures["plan"] == plan.summary["plan"]
    assert out.read_text() == plan.program.text()


def test_autoshard_errors_are_typed():
    program = gspmd.load(MLP / "pre.hlo")
    with pytest.raises(gspmd.Error, match="tpu-v99"):
        program.autoshard(devices=8, chip="tpu-v99")
    with pytest.raises(gspmd.Error, match="no plan found fits the memory budget of 64 bytes"):
        program.autoshard(devices=8, mesh="x=8", keep="none", memory_budget=64, max_evaluations=5)


def test_autoshard_keeps_a_fully_annotated_program():
    program = gspmd.load(MLP / "pre.hlo")
    plan = program.autoshard(devices=8, mesh="x=2,y=4")
    assert plan.summary["plan"] == []
    assert plan.summary["input"]["step_time_s"] == plan.summary["step_time_s"]
