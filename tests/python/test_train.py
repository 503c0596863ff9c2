"""gspmd.model and gspmd.train: a tiny model trained for 3 checked steps, with a callback."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import gspmd

def test_model_text_equals_the_cli(cli):
    program = gspmd.model("dense_lm", mesh={"x": 2, "y": 4}, layers=1)
    expected = subprocess.run([cli, "model", "dense_lm", "--mesh", "x=2,y=4", "--set", "layers=1"], check=True,
                              capture_output=True, text=True).stdout
    assert program.text() == expected


def test_preset_and_errors():
    assert gspmd.model(preset="gshard-128e-12l").num_partitions == 128
    with pytest.raises(gspmd.InputError, match="unknown model 'nosuch'"):
        gspmd.model("nosuch")
    with pytest.raises(gspmd.InputError, match="bogus"):
        gspmd.model("dense_lm", bogus=1)


def test_train_three_checked_steps_with_callback():
    step = gspmd.model("dense_lm", layers=1)
    seen = []
    outputs = gspmd.train(step, 3, check=True, callback=seen.append)
    assert [s.step for s in seen] == [0, 1, 2]
    assert all(s.loss is not None and np.isfinite(s.loss) for s in seen)
    assert all("loss" in s.metrics and s.metrics["loss"] == s.loss for s in seen)
    assert all(s.check_seconds > 0 for s in seen)
    assert len(outputs) > 2  # loss, metrics, then the parameters and optimizer state
    assert outputs[0].shape == () and float(outputs[0]) == pytest.approx(seen[-1].loss)


def test_train_callback_error_propagates():
    step = gspmd.model("dense_lm", layers=1)

    def stop(info):
        raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt):
        gspmd.train(step, 5, callback=stop)


def test_train_with_wrong_inputs_is_an_input_error():
    step = gspmd.model("dense_lm", layers=1)
    with pytest.raises(gspmd.InputError):
        gspmd.train(step, 1, inputs=[np.zeros((2,), np.float32)])
