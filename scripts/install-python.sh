#!/usr/bin/env bash
# Makes the Python environment the package's build and tests use: a venv in .venv/ (git-ignored)
# with the pinned packages below. Quick when done already (a stamp holds the list installed).
# GSPMD_PYTHON names the interpreter to build the venv from (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=(
  numpy==2.4.6 ml_dtypes==0.7.0    # arrays in and out; bf16 as JAX has it
  pytest==9.2.0                    # tests/python
  nanobind==3.1.0 scikit-build-core==1.1.2  # the extension module and `pip install .`
  jax==0.10.2 jaxlib==0.10.2       # gspmd.from_jax and the tests against XLA (CPU)
  zarr==3.1.6                      # opens `gspmd train --checkpoint-dir` arrays (tests/python/test_checkpoint.py)
)
stamp=.venv/.gspmd-requirements
wanted="$(printf '%s\n' "${requirements[@]}")"
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi
if [ ! -x .venv/bin/python ]; then
  "${GSPMD_PYTHON:-python3}" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check "${requirements[@]}"
printf '%s\n' "$wanted" >"$stamp"
echo "Python packages installed in .venv/ ($(.venv/bin/python --version))"
