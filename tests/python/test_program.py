"""Program's reading side: text, propagate (explain), show and its HTML, lint findings, simulate, save."""

from __future__ import annotations

import json
import subprocess

import pytest

import gspmd
from conftest import CORPUS

MLP = CORPUS / "gspmd" / "megatron_mlp" / "pre.hlo"


def test_load_text_and_file_agree():
    from_file = gspmd.load(MLP)
    from_string = gspmd.load(MLP.read_text())
    assert from_file.text() == from_string.text()
    assert from_file.name == str(MLP) and from_string.name == "<text>"
    assert [p.name for p in from_file.parameters][:1] == ["x.1"]
    assert "gspmd.Program" in repr(from_file)


def test_propagate_explains_origins():
    program = gspmd.load(MLP)
    assert program.needs_propagation
    propagated = program.propagate()
    assert not propagated.needs_propagation
    explained = program.propagate(explain=True).text()
    assert "/* from %" in explained and "/* from %" not in propagated.text()


def test_show_text_and_html():
    shown = gspmd.load(MLP).show()
    assert isinstance(shown, str) and shown.startswith("mesh: 8 devices")
    assert "\x1b[" not in shown
    page = shown._repr_html_()
    assert page.startswith("<pre") and "background:" in page and "0,4" in page and "\x1b" not in page
    assert gspmd.load(MLP)._repr_html_() == page
    single = gspmd.load(MLP).show(["w1.1"])
    assert "%w1.1" in single and "parameter 0" not in single
    with pytest.raises(gspmd.InputError, match="no instruction named %nope"):
        gspmd.load(MLP).show(["nope"])


def test_show_summary_is_the_cli_summary(cli):
    summary = gspmd.load(MLP).show(summary=True)
    assert summary == subprocess.run([cli, "show", str(MLP), "--summary"], capture_output=True, text=True).stdout
    lines = summary.splitlines()
    assert lines[0] == "mesh: 8 devices" and lines[-1].startswith("total: ")
    assert lines[1].startswith("parameter 0 %") and (" tiles of " in lines[1] or " tile of " in lines[1])


def test_lint_findings_carry_location_kind_bytes_and_fix(cli):
    path = CORPUS / "gspmd" / "reshard_variety" / "pre.hlo"
    # The plan check's search capped by evaluations, so both sides find the same plan.
    findings = gspmd.load(path).lint(max_evaluations=16, time_limit=120)
    expected = json.loads(subprocess.run([cli, "lint", str(path), "--json", "--max-evaluations", "16", "--time-limit",
                                          "120"], capture_output=True, text=True).stdout)
    assert len(findings) == len(expected["findings"])
    for finding, entry in zip(findings, expected["findings"]):
        assert finding.location.startswith(str(path) + ":")
        assert finding.kind == entry["check"] and finding.message == entry["message"]
        assert finding.bytes == entry["bytes_per_device"]
        assert finding.fix == (entry.get("fix") or {}).get("text", "")
        assert str(finding).startswith(finding.location)
    assert all(finding.kind != "plan" for finding in gspmd.load(path).lint(search=False))


def test_simulate_equals_the_cli(cli):
    program = gspmd.load(MLP)
    report = program.simulate("tpu-v4", breakdown="layer")
    expected = json.loads(subprocess.run([cli, "simulate", str(MLP), "--chip", "tpu-v4", "--breakdown", "layer",
                                          "--json"], check=True, capture_output=True, text=True).stdout)
    assert report == expected


def test_save_round_trips(tmp_path):
    program = gspmd.load(MLP).partition()
    path = tmp_path / "per_device.hlo"
    program.save(path)
    assert gspmd.load(path).text() == program.text()
    assert gspmd.load(path).is_per_device


def test_stubs_cover_the_extension_module():
    import ast
    import pathlib

    from gspmd import _gspmd

    stub = ast.parse((pathlib.Path(gspmd.__file__).parent / "_gspmd.pyi").read_text())
    stubbed = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    exported = {name for name in dir(_gspmd) if not name.startswith("_")}
    assert exported == stubbed
    methods = {node.name for node in next(n for n in stub.body if getattr(n, "name", "") == "Program").body
               if isinstance(node, ast.FunctionDef)}
    assert {name for name in dir(_gspmd.Program) if not name.startswith("_")} == methods
