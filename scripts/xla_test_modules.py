#!/usr/bin/env python3
"""Runs the HLO modules of XLA's own partitioner and propagation tests through gspmd.

Extracts every HLO module string (R"(...)" raw strings holding an HloModule or ENTRY) from
  xla/service/spmd/spmd_partitioner_test.cc
  xla/service/sharding_propagation_test.cc
  xla/service/spmd/shardy/shardy_xla_pass_test.cc
and every `// -----` case of the .mlir files in xla/service/spmd/shardy/test/, writes each to
a temporary directory (nothing is kept, nothing is committed), and runs `gspmd parse` and
`gspmd partition` (with the test's num_devices when it passes one) under a timeout. Prints one
line per module:

  ok | refused-at-parse | refused-at-partition | refused-as-expected | crash | timeout | skipped

followed by the message for anything but ok, then a summary line. Exit status 1 when any
module crashed, timed out, or was refused at parse although XLA's test does not expect a
failure.

  python3 scripts/xla_test_modules.py --xla /path/to/xla-checkout
  python3 scripts/xla_test_modules.py --xla /work/.mirror/openxla+openxla/repo   # bare repo
  python3 scripts/xla_test_modules.py --file some/spmd_partitioner_test.cc ...   # single files
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

CC_SUITES = {
    "spmd": "xla/service/spmd/spmd_partitioner_test.cc",
    "propagation": "xla/service/sharding_propagation_test.cc",
    "shardy": "xla/service/spmd/shardy/shardy_xla_pass_test.cc",
}
MLIR_DIR = "xla/service/spmd/shardy/test"

# Timeouts in propagation handled elsewhere (issue 24's other half): not run here.
SKIPPED_TESTS = {
    "PartiallyManualTupleWithRepeatedOperandsBackWardPass": "propagation timeout handled separately",
    "WhileDSManual": "propagation timeout handled separately",
}

# MLIR dialects gspmd reads (StableHLO with Shardy annotations); a case using any other
# dialect's ops (mhlo.*, chlo.*, ...) is skipped and counted as such.
READ_DIALECTS = {"func", "stablehlo", "sdy"}

TEST_RE = re.compile(r"\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)")
RAW_RE = re.compile(r'R"([A-Za-z_]*)\(')
DEVICES_RE = re.compile(r"num_devices\s*=\s*\*/\s*(\d+)|PartitionComputation\(\s*\w+\s*,\s*(\d+)")
# What XLA's tests write when they expect the module (or its pass) to fail.
EXPECTS_FAILURE_RE = re.compile(
    r"(EXPECT|ASSERT)_FALSE\([^;]*\bok\(\)\s*\)|Not\(\s*IsOk\(\)\s*\)|StatusIs\(|EXPECT_DEATH|IsOkAndHolds\(false\)")
PUBLIC_FUNC_RE = re.compile(r"\bfunc\.func\s+(?:public\s+)?@([\w.$-]+)")
MLIR_OP_RE = re.compile(r'(?:^|=\s*|\s)"?([a-z_]+)\.([a-z_][a-z0-9_.]*)"?[\s(<{]', re.M)


class Case:
    def __init__(self, suite, name, text, ext, devices=None, expects_failure=False, skip=None):
        self.suite, self.name, self.text, self.ext = suite, name, text, ext
        self.devices, self.expects_failure, self.skip = devices, expects_failure, skip


def read_source(xla, path):
    """A file of an XLA checkout directory or of a bare git repository (at HEAD)."""
    if os.path.isfile(os.path.join(xla, path)):
        with open(os.path.join(xla, path), encoding="utf-8") as f:
            return f.read()
    out = subprocess.run(["git", "-C", xla, "show", "HEAD:" + path], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def list_mlir(xla):
    directory = os.path.join(xla, MLIR_DIR)
    if os.path.isdir(directory):
        return sorted(os.path.join(MLIR_DIR, f) for f in os.listdir(directory) if f.endswith(".mlir"))
    out = subprocess.run(["git", "-C", xla, "ls-tree", "--name-only", "HEAD", MLIR_DIR + "/"],
                         capture_output=True, text=True)
    return sorted(line for line in out.stdout.split() if line.endswith(".mlir"))


def cc_cases(suite, source):
    tests = [(m.start(), m.group(2)) for m in TEST_RE.finditer(source)]
    cases, count_in_test = [], {}
    pos = 0
    while True:
        m = RAW_RE.search(source, pos)
        if not m:
            break
        delimiter = ")" + m.group(1) + '"'
        end = source.find(delimiter, m.end())
        if end < 0:
            break
        text = source[m.end():end]
        pos = end + len(delimiter)
        if "ENTRY" not in text and "HloModule" not in text:
            continue
        if re.search(r"^\s*// CHECK", text, re.M):  # a FileCheck pattern, not a module
            continue
        owner = [t for t in tests if t[0] < m.start()]
        test = owner[-1][1] if owner else "file_scope"
        later = [t[0] for t in tests if t[0] > m.start()]
        body = source[pos:later[0] if later else len(source)]
        test_start = owner[-1][0] if owner else 0
        whole_test = source[test_start:later[0] if later else len(source)]
        d = DEVICES_RE.search(body)
        devices = int(d.group(1) or d.group(2)) if d else None
        count_in_test[test] = count_in_test.get(test, 0) + 1
        name = test if count_in_test[test] == 1 else f"{test}.{count_in_test[test]}"
        cases.append(Case(suite, name, text, ".hlo", devices,
                          expects_failure=bool(EXPECTS_FAILURE_RE.search(whole_test)),
                          skip=SKIPPED_TESTS.get(test)))
    return cases


def mlir_cases(path, source):
    base = os.path.basename(path)[:-len(".mlir")]
    cases = []
    for i, chunk in enumerate(re.split(r"^// -----\s*$", source, flags=re.M)):
        code = "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("//"))
        if not code.strip():
            continue
        dialects = {m.group(1) for m in MLIR_OP_RE.finditer(code)} - {"tensor", "dense", "mhlo_sharding"}
        # Attribute namespaces (#sdy.sharding, mhlo.sharding = "...") are not ops.
        ops = {d for d in dialects if re.search(r"(^|=\s*|\n\s*)\"?" + d + r"\.[a-z_]", code)}
        unread = sorted(ops - READ_DIALECTS)
        skip = f"uses dialect(s) gspmd does not read: {', '.join(unread)}" if unread else None
        expects_failure = "expected-error" in chunk or base.endswith("_failure")
        # A lit case may hold several public functions and no @main; gspmd takes @main or the
        # one public function as the entry, so each public function is run as the entry in turn
        # (the others made private).
        public = PUBLIC_FUNC_RE.findall(code)
        entries = public if len(public) > 1 and "main" not in public else [None]
        for entry in entries:
            text = code if entry is None else PUBLIC_FUNC_RE.sub(
                lambda m: m.group(0) if m.group(1) == entry else f"func.func private @{m.group(1)}", code)
            name = f"{base}.{i}" + (f".{entry}" if entry else "")
            cases.append(Case("shardy-mlir", name, text, ".mlir", None, expects_failure, skip))
    return cases


def run(gspmd, args, timeout):
    try:
        out = subprocess.run([gspmd] + args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    message = next((line for line in out.stderr.splitlines() if line.strip()), "")
    if out.returncode == 0:
        return "ok", ""
    if out.returncode == 1:
        return "refused", message
    if out.returncode < 0:
        return "crash", f"signal {-out.returncode}: {message}"
    return "crash", f"exit {out.returncode}: {message}"


def check(case, directory, gspmd, timeout):
    if case.skip:
        return "skipped", case.skip
    path = os.path.join(directory, f"{case.suite}.{case.name}{case.ext}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(case.text)
    status, message = run(gspmd, ["parse", path], timeout)
    if status == "refused":
        return ("refused-as-expected" if case.expects_failure else "refused-at-parse"), message
    if status != "ok":
        return status, message
    args = ["partition", path, "-o", path + ".out"]
    if case.devices:
        args += ["--devices", str(case.devices)]
    status, message = run(gspmd, args, timeout)
    if status == "refused":
        return ("refused-as-expected" if case.expects_failure else "refused-at-partition"), message
    return status, message


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xla", help="an XLA checkout, or a bare git repository of one")
    parser.add_argument("--file", action="append", default=[],
                        help="a test .cc or .mlir file to read instead (repeatable)")
    parser.add_argument("--gspmd", default=os.path.join(os.path.dirname(__file__), "..", "build", "gspmd"))
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per command")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="run only modules whose name contains this")
    parser.add_argument("--quiet", action="store_true", help="print only modules that are not ok")
    options = parser.parse_args()

    cases = []
    sources = []
    if options.xla:
        for suite, path in CC_SUITES.items():
            sources.append((suite, path, read_source(options.xla, path)))
        for path in list_mlir(options.xla):
            sources.append(("shardy-mlir", path, read_source(options.xla, path)))
    for path in options.file:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        suite = next((s for s, p in CC_SUITES.items() if os.path.basename(p) == os.path.basename(path)), "file")
        sources.append(("shardy-mlir" if path.endswith(".mlir") else suite, path, text))
    if not sources:
        parser.error("give --xla or --file")
    for suite, path, text in sources:
        if text is None:
            print(f"missing: {path}", file=sys.stderr)
            continue
        cases += mlir_cases(path, text) if path.endswith(".mlir") else cc_cases(suite, text)
    cases = [c for c in cases if options.only in f"{c.suite}.{c.name}"]

    counts = {}
    bad = 0
    with tempfile.TemporaryDirectory(prefix="xla_modules_") as directory:
        with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
            results = pool.map(lambda c: check(c, directory, options.gspmd, options.timeout), cases)
            for case, (status, message) in zip(cases, results):
                counts[status] = counts.get(status, 0) + 1
                if status in ("crash", "timeout", "refused-at-parse"):
                    bad += 1
                if options.quiet and status in ("ok", "skipped", "refused-as-expected"):
                    continue
                devices = f" --devices {case.devices}" if case.devices else ""
                line = f"{status:21} {case.suite}/{case.name}{devices}"
                print(line + (f"  {message}" if message else ""), flush=True)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"summary: {len(cases)} modules: {summary}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
