"""benchmarks/bench_xla_side_by_side.py --quick: one small training step timed beside XLA:CPU, outputs agreeing."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import gspmd

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "bench_xla_side_by_side.py"


def table_rows(text: str, first_column: str) -> list[dict]:
    """The Markdown table whose header starts with `first_column`, as one dict per row."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_column} |"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")))))
    return rows


def test_quick_mode_agrees_and_reports_ratios(jax, tmp_path):
    out = tmp_path / "side_by_side.md"
    package_dir = str(pathlib.Path(gspmd.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package_dir, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--repeats", "2", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    text = out.read_text()

    steps = table_rows(text, "program")
    assert len(steps) == 1
    row = steps[0]
    for column in ("mesh", "d_model", "XLA ms (med/min)", "gspmd ms (med/min)", "ratio gspmd/XLA",
                   "ratio gspmd/XLA np", "max rel err", "agree"):
        assert column in row, f"no column {column!r} in {list(row)}"
    assert row["agree"] == "yes"
    assert float(row["max rel err"]) <= 1e-4
    assert float(row["ratio gspmd/XLA"]) > 0

    compiles = [r for r in table_rows(text[text.index("Compile time"):], "program")]
    assert len(compiles) == 1
    assert float(compiles[0]["XLA compile ms"]) > 0
    assert float(compiles[0]["gspmd prop+part ms"]) > 0
    assert "cores" in text and "load average" in text
