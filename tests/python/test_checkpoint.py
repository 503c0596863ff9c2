"""`gspmd train --checkpoint-dir` writes zarr v2 arrays other tools open: the `zarr` package reads
every carried value of the checkpoint, and each equals the global array `train -o` saves for the
same step (issue 29's interop criterion)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

zarr = pytest.importorskip(
    "zarr", reason="the zarr package is not installed (scripts/install-python.sh installs it from PyPI)")


@pytest.mark.parametrize("model,mesh", [("dense_lm", "x=2,y=4"), ("gshard_moe", "data=2,expert=4")])
def test_zarr_opens_the_checkpoint_and_equals_the_saved_arrays(cli, tmp_path, model, mesh):
    hlo = tmp_path / "step.hlo"
    subprocess.run([cli, "model", model, "--set", "layers=2", "--mesh", mesh, "-o", str(hlo)], check=True)
    subprocess.run([cli, "train", str(hlo), "--steps", "2", "--progress", "quiet", "--checkpoint-dir",
                    str(tmp_path / "ck"), "-o", str(tmp_path / "saved")], check=True)
    checkpoint = tmp_path / "ck" / "step-2"
    meta = json.loads((checkpoint / "checkpoint.json").read_text())
    saved = {o["output"]: o["file"] for o in json.loads((tmp_path / "saved" / "index.json").read_text())["outputs"]}
    assert len(meta["arrays"]) > 10
    for entry in meta["arrays"]:
        stored = zarr.open_array(str(checkpoint / entry["name"]), mode="r")
        assert stored.shape == tuple(entry["shape"])
        assert stored.chunks == tuple(entry["chunks"])
        expected = np.load(tmp_path / "saved" / saved[entry["output"]])
        np.testing.assert_array_equal(stored[...], expected, err_msg=entry["name"])
        assert stored.dtype == expected.dtype, entry["name"]
