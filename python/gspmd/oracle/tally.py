"""What an oracle run found, counted and listed; ends with the contract's line
``N programs: E equal, M mismatches, C crashes, R refused, comm <= XLA on K``.

It reads each program's result as the data ProgramCheck.to_dict() gives (the worker process
sends it as a line of JSON). Programs JAX or XLA would not take, or on which XLA itself aborted,
are listed but not counted among the N.
"""

from __future__ import annotations

import collections
import re

__all__ = ["Tally"]


def _kind_deltas(ours: dict, xla: dict) -> str:
    """Where the extra bytes are: 'all-gather +96, all-reduce -32' (ours minus XLA's, by kind)."""
    deltas = [(k, ours.get(k, 0.0) - xla.get(k, 0.0)) for k in sorted(set(ours) | set(xla))]
    deltas = [(k, d) for k, d in deltas if abs(d) >= 0.5]
    deltas.sort(key=lambda kd: -abs(kd[1]))
    return ", ".join(f"{k} {d:+.0f}" for k, d in deltas) or "same kinds"


class Tally:
    def __init__(self):
        self.count: collections.Counter = collections.Counter()
        self.comm_ok = 0
        self.failures: list[str] = []
        self.refusals: collections.Counter = collections.Counter()
        self.above: list[str] = []
        self.unknown_comm: collections.Counter = collections.Counter()
        self.invalid: list[str] = []
        self.xla_crashes: list[str] = []
        self.xla_inconsistent: list[str] = []
        self.xla_rounding: list[str] = []
        self.notes: collections.Counter = collections.Counter()
        self.comm_ours = 0.0
        self.comm_xla = 0.0

    def add(self, data: dict) -> None:
        seed = data["seed"]
        if data["status"] == "invalid":
            e = next((e for e in data["exports"] if e["reason"]), data["exports"][0])
            ours = next((n for n in e["notes"] if n.startswith("gspmd on it")), "")
            self.invalid.append(f"seed {seed}: {e['reason']}" + (f" ({ours})" if ours else ""))
            return
        self.count[data["status"]] += 1
        self.comm_ok += bool(data["comm_ok"])
        for e in data["exports"]:
            self._add_export(seed, e)

    def _add_export(self, seed, e: dict) -> None:
        status, ours, xla = e["status"], e["comm_ours"], e["comm_xla"]
        if status in ("mismatch", "crash", "refused"):
            self.failures.append(f"seed {seed} {e['export']}: {status}: {e['reason']}")
        if status == "refused":
            self.refusals[e["kind"]] += 1
        known = ours is not None and xla is not None
        if known:
            self.comm_ours += ours
            self.comm_xla += xla
        if known and ours > xla:
            ratio = f"{ours / xla:.2f}x" if xla else "XLA sends nothing"
            self.above.append(f"seed {seed} {e['export']}: {ours:.0f} vs XLA's {xla:.0f} bytes ({ratio}; "
                              f"{_kind_deltas(e.get('kinds_ours', {}), e.get('kinds_xla', {}))})"
                              + (f"\n      reason: {e['comm_reason']}" if e.get("comm_reason") else ""))
        elif status == "equal" and not known:
            why = next((n for n in e["notes"] if "unreadable" in n), "comm not counted")
            self.unknown_comm[re.sub(r"\S+\.hlo:", "FILE:", why)[:160]] += 1
        for n in e["notes"]:
            if n.startswith("XLA disagrees"):
                self.xla_inconsistent.append(f"seed {seed} {e['export']}: {n}")
            elif n.startswith("XLA's rounding"):
                self.xla_rounding.append(f"seed {seed} {e['export']}: {n}")
            elif "unreadable" not in n and not n.startswith("["):
                self.notes[n] += 1

    def add_gspmd_crash(self, seed: int, reason: str) -> None:
        """gspmd brought the worker process down (the package backend runs it in-process)."""
        self.count["crash"] += 1
        self.failures.append(f"seed {seed}: crash: {reason}")

    def add_xla_crash(self, seed: int, code: int, stderr: str) -> None:
        lines = [l for l in stderr.splitlines() if "Check failed" in l or l.startswith("F0")]
        self.xla_crashes.append(f"seed {seed}: exit {code}: {(lines or ['(no message)'])[0][:240]}")

    @property
    def total(self) -> int:
        return sum(self.count.values())

    def agreed(self) -> bool:
        return self.total == self.count["equal"]

    def last_line(self) -> str:
        c = self.count
        return (f"{self.total} programs: {c['equal']} equal, {c['mismatch']} mismatches, {c['crash']} crashes, "
                f"{c['refused']} refused, comm <= XLA on {self.comm_ok}")

    def summary(self) -> str:
        lines = []
        if self.failures:
            lines.append(f"failures ({len(self.failures)}):")
            lines += ["  " + f for f in self.failures]
        if self.refusals:
            lines.append("refusals by message:")
            lines += [f"  {n} x {m}" for m, n in self.refusals.most_common()]
        if self.above:
            lines.append(f"communication above XLA's ({len(self.above)} program exports):")
            lines += ["  " + a for a in self.above]
        if self.comm_xla:
            lines.append(f"communication summed over compared exports: ours {self.comm_ours:.0f} bytes, "
                         f"XLA's {self.comm_xla:.0f} ({self.comm_ours / self.comm_xla:.3f})")
        if self.unknown_comm:
            lines.append("equal programs whose communication was not compared:")
            lines += [f"  {n} x {m}" for m, n in self.unknown_comm.most_common()]
        if self.xla_inconsistent:
            lines.append(f"XLA disagreeing with itself ({len(self.xla_inconsistent)}; ours matches one of its "
                         f"results; not counted against gspmd):")
            lines += ["  " + x for x in self.xla_inconsistent]
        if self.xla_rounding:
            lines.append(f"XLA:CPU's rounding ({len(self.xla_rounding)}; ours is within f32 tolerance of XLA's own f64 run, "
                         f"or several times nearer to it than XLA's f32 result; counted as equal):")
            lines += ["  " + x for x in self.xla_rounding]
        if self.xla_crashes:
            lines.append(f"not counted: {len(self.xla_crashes)} programs XLA itself aborted on:")
            lines += ["  " + x for x in self.xla_crashes]
        if self.invalid:
            lines.append(f"not counted: {len(self.invalid)} programs JAX or XLA would not take (at build or lower: "
                         f"the generator's bug; at XLA compile or run: XLA's):")
            lines += ["  " + i for i in self.invalid[:20]]
        lines += [f"note: {n} x {m}" for m, n in self.notes.most_common()]
        lines.append(self.last_line())
        return "\n".join(lines)
