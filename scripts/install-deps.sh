#!/usr/bin/env bash
# Installs the Debian packages gspmd needs to build, test and benchmark.
set -euo pipefail
packages=(
  build-essential cmake ninja-build git python3 python3-numpy
  python3-venv python3-dev  # the Python package's venv (.venv/) and its extension module
  libdnnl-dev          # GEMM and convolution kernels for the interpreter
  libmimalloc-dev      # the process allocator (see CMakeLists.txt)
  ocl-icd-opencl-dev opencl-c-headers  # Debian's dnnl CMake config requires OpenCL to be findable
  libcli11-dev         # command-line parsing
  nlohmann-json3-dev   # JSON reports
  zlib1g-dev           # gzip-compressed IOPDDL problems (gspmd autoshard --iopddl)
  libgtest-dev libgmock-dev  # tests
  libbenchmark-dev     # benchmarks
  libopenmpi-dev openmpi-bin  # the MPI backend (gspmd run --backend mpi) and its mpirun tests
  chromium             # headless browser that loads `gspmd report -o PAGE.html` pages in the tests
  clang libclang-rt-14-dev    # libFuzzer and clang's sanitizer runtimes (scripts/fuzz.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The Python package's venv (.venv/: numpy, ml_dtypes, pytest, nanobind, scikit-build-core, JAX).
bash "$(dirname "$0")/install-python.sh"
