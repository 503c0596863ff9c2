"""gspmd.oracle: generated JAX programs checked against XLA (results, result shardings, communication).

``python3 -m gspmd.oracle --seeds 0:200`` generates 200 programs, has XLA compile and run each
through both of JAX's export paths, and gspmd read, partition and run the same StableHLO; its
last line is ``N programs: E equal, M mismatches, C crashes, R refused, comm <= XLA on K``.
The parts: generate.py (the program generator; grammar.py and grammar_control.py, its ops),
check.py (the check), reduce.py (reproducers and the minimizer), backend.py (how gspmd is
called: its CLI, or the package in-process), hlo_text.py (shardings and XLA's text).

Nothing is imported here, so ``gspmd.oracle.generate`` is the module, and importing the
subpackage neither starts JAX nor needs the extension module.
"""
