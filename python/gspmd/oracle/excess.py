"""Why our communication exceeds XLA's on one program: a one-line reason read off both partitioned programs.

The oracle lists every export whose bytes are above XLA's with its ratio and this reason. The
reason is mechanical, not a verdict: it pairs our collectives with XLA's of the same kind and
dims (XLA often moves a bf16 value as f32, so the element type is not compared), and names what
is left over on our side, largest first, with where it runs (the entry, a loop body, a called
computation), what it moves (the producing op) and what reads it. A label in front says which of
the usual patterns the leftovers make (docs/oracle_comm_gap.md lists them with examples):

    xla-moves-nothing       XLA's program has no collective at all
    in-loop                 every leftover of ours runs in a loop body (per iteration)
    gathers-not-reduces     we all-gather where XLA's leftovers all-reduce or reduce-scatter
    reduces-not-gathers     the reverse
    more-permutes           our leftovers are collective-permutes (halos, resharding by permute)
    larger-same-kinds       every collective has a counterpart; ours move more bytes overall
    extra-KIND              otherwise: the kind of our largest leftover
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Collective", "collectives", "explain_excess"]

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
               "collective-broadcast")
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4,
          "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
_ARRAY = re.compile(r"\b(pred|[sufc]\d+|bf16)\[([0-9,]*)\]")
_INSTR = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*?)\s+(" + "|".join(COLLECTIVES) + r")(-start)?\(")
_COMP = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")


@dataclass
class Collective:
    computation: str
    name: str
    kind: str
    shape: str
    group: int
    bytes: float
    in_loop: bool

    def line(self) -> str:
        loop = " (loop body)" if self.in_loop else ""
        return f"{self.kind:20s} {self.bytes:10.0f} B  n={self.group:<2d} {self.shape:28s} {self.computation}/{self.name}{loop}"


def _array_bytes(text: str) -> int:
    total = 0
    for m in _ARRAY.finditer(text):
        count = 1
        for d in m.group(2).split(","):
            if d:
                count *= int(d)
        total += count * _BYTES.get(m.group(1), 4)
    return total


def _group_size(line: str, devices: int) -> int:
    m = re.search(r"replica_groups=\[(\d+),(\d+)\]<=", line)
    if m:
        return int(m.group(2))
    m = re.search(r"replica_groups=mesh\[([^\]]*)\][^{]*\{([^}]*)\}", line)
    if m:                                          # XLA's mesh['a'=2,'b'=4] {'b'}: the chosen axes
        sizes = {a: int(n) for a, n in re.findall(r"'([^']+)'=(\d+)", m.group(1))}
        size = 1
        for axis in re.findall(r"'([^']+)'", m.group(2)):
            size *= sizes.get(axis, 1)
        return size
    m = re.search(r"replica_groups=\{(\{[^}]*\})", line)
    if m:
        return len([x for x in m.group(1).strip("{}").split(",") if x.strip()])
    if "source_target_pairs" in line:
        return 2
    return devices


def _called_by_loops(text: str) -> set:
    """Computations that are while bodies or conditions (and what they call, one level)."""
    names = set()
    for m in re.finditer(r"\bwhile\(.*?(?:condition|body)=%?([\w.\-]+).*?(?:condition|body)=%?([\w.\-]+)", text):
        names.update(m.groups())
    return names


def _instruction_lines(text: str):
    """(computation name, line) for every line of the module's computations but their headers."""
    computation = ""
    for line in text.splitlines():
        c = _COMP.match(line)
        if c and "=" not in line.split("{")[0]:
            computation = c.group(2)
            continue
        yield computation, line


def collectives(text: str, devices: int) -> list[Collective]:
    """Every collective instruction of a per-device HLO module, in text order."""
    loops = _called_by_loops(text)
    out = []
    for computation, line in _instruction_lines(text):
        m = _INSTR.match(line)
        if not m:
            continue
        kind, shape = m.group(4), m.group(3)
        operands = line[m.end():]
        n = _group_size(line, devices)
        result_bytes = _array_bytes(shape)
        operand_text = operands.split(")")[0]
        operand_bytes = _array_bytes(operand_text) or result_bytes
        if kind == "all-reduce":
            b = 2 * (n - 1) / n * operand_bytes if n > 1 else 0
        elif kind in ("all-gather", "all-to-all"):
            b = (n - 1) / n * result_bytes if n > 1 else 0
        elif kind in ("reduce-scatter", "collective-broadcast"):
            b = (n - 1) / n * operand_bytes if n > 1 else 0
        else:
            b = operand_bytes if "source_target_pairs={}" not in line else 0
        out.append(Collective(computation, m.group(2), kind, shape.split("{")[0] if "(" not in shape else shape,
                              n, b, computation in loops))
    return out


_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(?:\([^=]*?\)|\S+)\s+([\w\-]+)\((.*)$")
_PASS_THROUGH = {"get-tuple-element", "bitcast", "copy", "reshape", "convert", "tuple"}


@dataclass
class _Instr:
    opcode: str
    operands: list


def _instructions(text: str) -> dict:
    """(computation, name) -> opcode and operand names, for every instruction of the module."""
    out = {}
    for computation, line in _instruction_lines(text):
        m = _LINE.match(line)
        if m:
            args = m.group(3).split(")")[0]
            out[(computation, m.group(1))] = _Instr(m.group(2), re.findall(r"%([\w.\-]+)", args))
    return out


def _users(instrs: dict, computation: str, name: str) -> list[str]:
    """The opcodes that read `name`, looking through tuples, bitcasts, copies and converts."""
    found, frontier, seen = [], [name], {name}
    while frontier and len(found) < 3:
        current = frontier.pop(0)
        for (comp, user), instr in instrs.items():
            if comp != computation or current not in instr.operands or user in seen:
                continue
            seen.add(user)
            if instr.opcode in _PASS_THROUGH:
                frontier.append(user)
            else:
                found.append(instr.opcode)
    return sorted(set(found)) or ["the result"]


def _producer(instrs: dict, computation: str, name: str) -> str:
    """The op whose value the collective moves, looking back through data movement."""
    instr = instrs.get((computation, name))
    current = instr.operands[0] if instr and instr.operands else None
    for _ in range(6):
        source = instrs.get((computation, current)) if current else None
        if source is None:
            return "?"
        if source.opcode not in _PASS_THROUGH or not source.operands:
            return source.opcode
        current = source.operands[0]
    return "?"


def _dims(shape: str) -> str:
    return re.sub(r"\b(pred|[sufc]\d+|bf16)\[", "[", shape)


def _parts(c: Collective) -> list[Collective]:
    """A tuple all-reduce (XLA combines independent ones) as one collective per element."""
    if c.kind != "all-reduce" or not c.shape.startswith("("):
        return [c]
    shapes = [re.sub(r"\{[^}]*\}", "", m.group(0)) for m in _ARRAY.finditer(c.shape)]
    sizes = [_array_bytes(s) for s in shapes]
    total = sum(sizes) or 1
    return [Collective(c.computation, c.name, c.kind, s, c.group, c.bytes * n / total, c.in_loop)
            for s, n in zip(shapes, sizes)]


def _leftovers(ours: list[Collective], xla: list[Collective]) -> tuple[list, list]:
    """Pairs each collective with one of the other side's of the same kind and dims, then of the
    same kind and bytes (XLA writes some all-to-alls as a tuple of pieces); returns the unpaired."""
    rest = [p for x in xla for p in _parts(x)]
    left = [p for c in ours for p in _parts(c)]
    for same in (lambda a, b: _dims(a.shape) == _dims(b.shape), lambda a, b: abs(a.bytes - b.bytes) <= 0.01 * b.bytes):
        unpaired = []
        for c in sorted(left, key=lambda c: -c.bytes):
            match = next((x for x in rest if x.kind == c.kind and same(c, x)), None)
            if match is None:
                unpaired.append(c)
            else:
                rest.remove(match)
        left = unpaired
    return left, sorted(rest, key=lambda c: -c.bytes)


def _where(c: Collective) -> str:
    if c.in_loop:
        return f"in loop body {c.computation}"
    return "at entry" if c.computation.startswith("main") else f"in called {c.computation}"


def _label(left: list, xla_left: list, xla: list) -> str:
    if not xla:
        return "xla-moves-nothing"
    if not left:
        return "larger-same-kinds"
    if all(c.in_loop for c in left):
        return "in-loop"
    kinds = {c.kind for c in left}
    xla_kinds = {c.kind for c in xla_left}
    reduces = {"all-reduce", "reduce-scatter"}
    if kinds == {"all-gather"} and xla_kinds and xla_kinds <= reduces:
        return "gathers-not-reduces"
    if kinds <= reduces and xla_kinds == {"all-gather"}:
        return "reduces-not-gathers"
    if kinds == {"collective-permute"}:
        return "more-permutes"
    return "extra-" + left[0].kind


def explain_excess(ours_text: str, xla_text: str, devices: int, most: int = 2) -> str:
    """One line: the pattern, then our largest unpaired collectives and XLA's, each with bytes and place."""
    ours, xla = collectives(ours_text, devices), collectives(xla_text, devices)
    left, xla_left = _leftovers(ours, xla)
    label = _label(left, xla_left, xla)
    instrs = _instructions(ours_text)
    parts = []
    for c in left[:most]:
        moved = _producer(instrs, c.computation, c.name)
        moved = "the loop carry" if moved == "parameter" and c.in_loop else moved
        readers = "/".join(_users(instrs, c.computation, c.name))
        parts.append(f"{c.kind} {c.shape} {c.bytes:.0f} B {_where(c)}, of {moved} for {readers}")
    if len(left) > most:
        parts.append(f"{len(left) - most} more ({sum(c.bytes for c in left[most:]):.0f} B)")
    theirs = "; XLA instead: " + ", ".join(f"{c.kind} {c.shape} {c.bytes:.0f} B" for c in xla_left[:most]) \
        if xla_left else ("" if not xla else "; XLA: nothing unpaired")
    same = "the same collectives by kind and dims (the bytes differ by loop trips, group sizes or element types)"
    return f"{label}: ours " + ("; ".join(parts) if parts else same) + theirs
