"""Reading the bits of HLO text the oracle compares: the entry root's sharding, any sharding as the
devices that hold each tile, and XLA's replica groups in the one form gspmd's parser lacks.

Shardings are compared by what they mean, not how they are printed: ``{devices=[2,1,4]<=[8]
last_tile_dim_replicate}`` and ``{mesh['x'=2,'y'=4], [{'x'}, {}]}`` are the same layout::

    layout("{mesh['x'=2,'y'=4], [{'x'}, {}]}", rank=2, devices=8)
    == layout("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", rank=2, devices=8)
"""

from __future__ import annotations

import re
from typing import Optional

import numpy as np

__all__ = ["Layout", "layout", "root_shardings", "rewrite_for_reading"]

# ('tiled', tile counts per dim, devices holding each tile in row-major tile order), or
# ('maximal', device) or ('manual',).
Layout = tuple


# ---------------------------------------------------------------------------------------------
# XLA's text that gspmd's parser does not read yet.

_MESH_GROUPS = re.compile(
    r"replica_groups=mesh\[([^\]]*)\], device_ids=\((\[[0-9,]+\](?:T\([0-9,]+\))?|[0-9,\s]*)\) \{([^}]*)\}")


def _iota_ids(dims: str, perm: Optional[str]) -> list[int]:
    shape = [int(d) for d in dims.split(",")]
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    if perm:
        ids = ids.transpose([int(p) for p in perm.split(",")])
    return ids.reshape(-1).tolist()


def _device_ids(text: str) -> list[int]:
    """'0,2,1,3' or '[2,4]T(1,0)' (an iota list) -> the ids."""
    m = re.fullmatch(r"\[([0-9,]+)\](?:T\(([0-9,]+)\))?", text.strip())
    if m:
        return _iota_ids(m.group(1), m.group(2))
    return [int(i) for i in text.replace(" ", "").split(",") if i]


def _explicit_groups(m: re.Match) -> Optional[str]:
    axes = [(a.group(1), int(a.group(2))) for a in re.finditer(r"'([^']+)'=(\d+)", m.group(1))]
    chosen = [c.strip().strip("'") for c in m.group(3).split(",") if c.strip()]
    names = [a for a, _ in axes]
    if any(":" in c or c not in names for c in chosen):
        return None                                   # sub-axes: left as they are
    ids = np.array(_device_ids(m.group(2))).reshape([n for _, n in axes])
    order = [k for k, a in enumerate(names) if a not in chosen] + [names.index(c) for c in chosen]
    size = int(np.prod([dict(axes)[c] for c in chosen] or [1]))
    groups = ids.transpose(order).reshape(-1, size)
    return "replica_groups={" + ",".join("{" + ",".join(str(d) for d in g) + "}" for g in groups) + "}"


def rewrite_for_reading(text: str) -> tuple[str, int]:
    """XLA's text with replica groups printed as ``mesh['a'=2,'b'=4], device_ids=(...) {'a'}`` (as
    XLA 0.10 prints them when the devices are not in mesh order; the ids may be an iota list
    ``[2,4]T(1,0)``) written as the explicit groups they stand for, which gspmd reads; and how many
    were rewritten (each is a gap in gspmd's HLO parser, reported as such)."""
    count = 0

    def explicit(m: re.Match) -> str:
        nonlocal count
        groups = _explicit_groups(m)
        if groups is None:
            return m.group(0)
        count += 1
        return groups

    return _MESH_GROUPS.sub(explicit, text), count


# ---------------------------------------------------------------------------------------------
# The entry root's sharding.

def _braced(text: str, start: int) -> str:
    """The balanced {...} starting at text[start] == '{'."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return text[start:k + 1]
    raise ValueError("unbalanced braces in a sharding")


def _split_top(body: str) -> list[str]:
    """'{a}, {b}' -> ['{a}', '{b}'] (top-level elements of a tuple sharding's body)."""
    parts, k = [], 0
    while k < len(body):
        if body[k] == "{":
            part = _braced(body, k)
            parts.append(part)
            k += len(part)
        else:
            k += 1
    return parts


_OUTPUT_PROPAGATION = re.compile(r"allow_spmd_sharding_propagation_to_output=\{([a-z, ]*)\}")


def output_propagation(hlo: str) -> Optional[list[bool]]:
    """Which results XLA was allowed to choose the sharding of (JAX sets it for results the user
    left free), from the module header of XLA's compiled HLO; None when it does not say."""
    m = _OUTPUT_PROPAGATION.search(hlo)
    if not m:
        return None
    values = [v.strip() for v in m.group(1).split(",") if v.strip()]
    if not values or any(v not in ("true", "false") for v in values):
        return None
    return [v == "true" for v in values]


def root_shardings(hlo: str, count: int) -> Optional[list[str]]:
    """The sharding text of each of the entry root's `count` results; None when the root has none."""
    entry = hlo.find("\nENTRY ")
    if entry < 0:
        return None
    end = hlo.find("\n}", entry)
    root = [line for line in hlo[entry:end].splitlines() if line.lstrip().startswith("ROOT ")]
    if not root:
        return None
    at = root[0].find("sharding={")
    if at < 0:
        return None
    text = _braced(root[0], at + len("sharding="))
    body = text[1:-1].strip()
    if body.startswith("{"):
        parts = _split_top(body)
        return parts if len(parts) == count else None
    return [text] if count == 1 else None


# ---------------------------------------------------------------------------------------------
# Any sharding as tiles and the devices holding them.

def layout(text: str, rank: int, devices: int) -> Layout:
    """What `text` (one array's sharding, in any of XLA's or gspmd's printed forms) places where."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    body = re.sub(r",?\s*metadata=\{.*\}\s*$", "", body)
    if body in ("replicated", ""):
        return _tiled([1] * rank, [list(range(devices))])
    if body == "manual":
        return ("manual",)
    m = re.fullmatch(r"maximal device=(\d+)", body)
    if m:
        return ("maximal", int(m.group(1)))
    if body.startswith("maximal_mesh["):
        return ("maximal", int(re.search(r"device_id=(\d+)", body).group(1)))
    if body.startswith("devices="):
        return _from_devices(body, rank)
    if body.startswith("mesh["):
        return _from_mesh(body, rank)
    raise ValueError(f"unknown sharding form: {text}")


def _tiled(tiles: list[int], holders: list[list[int]]) -> Layout:
    return ("tiled", tuple(tiles), tuple(tuple(sorted(h)) for h in holders))


def _from_devices(body: str, rank: int) -> Layout:
    m = re.match(r"devices=\[([0-9,]+)\]", body)
    dims = [int(d) for d in m.group(1).split(",")]
    rest = body[m.end():]
    iota = re.match(r"<=\[([0-9,]+)\](?:T\(([0-9,]+)\))?", rest)
    if iota:
        ids = _iota_ids(iota.group(1), iota.group(2))
        rest = rest[iota.end():]
    else:
        listed = re.match(r"\s*([0-9,\s]+)", rest)
        ids = [int(i) for i in listed.group(1).replace(" ", "").split(",") if i]
        rest = rest[listed.end():]
    subgroups = 0
    if "last_tile_dim_replicate" in rest:
        subgroups = 1
    sub = re.search(r"last_tile_dims=\{([^}]*)\}", rest)
    if sub:
        subgroups = len([s for s in sub.group(1).split(",") if s.strip()])
    data = dims[: len(dims) - subgroups]
    if len(data) != rank:
        raise ValueError(f"sharding {body} has {len(data)} data dims for an array of rank {rank}")
    array = np.array(ids).reshape(dims)
    holders = array.reshape(int(np.prod(data or [1])), -1).tolist()
    return _tiled(data, holders)


def _axis_refs(text: str) -> list[tuple[str, int, int]]:
    """"'x', 'y':(2)2" -> [('x', 1, 0), ('y', 2, 2)] (name, pre-size, size; size 0 = the whole axis)."""
    refs = []
    for m in re.finditer(r"'([^']+)'(?::\((\d+)\)(\d+))?", text):
        refs.append((m.group(1), int(m.group(2) or 1), int(m.group(3) or 0)))
    return refs


def _from_mesh(body: str, rank: int) -> Layout:
    m = re.match(r"mesh\[([^\]]*)\]", body)
    axes = [(a.group(1), int(a.group(2))) for a in re.finditer(r"'([^']+)'=(\d+)", m.group(1))]
    rest = body[m.end():]
    n = int(np.prod([s for _, s in axes] or [1]))
    ids = list(range(n))
    listed = re.match(r"\s*,\s*device_ids=\(([0-9,\s]*)\)", rest)
    if listed:
        ids = [int(i) for i in listed.group(1).replace(" ", "").split(",") if i]
        rest = rest[listed.end():]
    rest = rest.lstrip(", ")
    if rest.startswith("replicated") and not rest.startswith("replicated="):
        return _tiled([1] * rank, [ids])
    if rest.startswith("manual"):
        return ("manual",)
    dims_text = rest[1:rest.index("]")] if rest.startswith("[") else ""
    dim_refs = [_axis_refs(d) for d in re.findall(r"\{([^}]*)\}", dims_text)]
    if len(dim_refs) != rank:
        raise ValueError(f"sharding {body} has {len(dim_refs)} dims for an array of rank {rank}")
    size = dict(axes)
    # Each device's coordinate along every axis, then each dim's tile index (major to minor).
    coords = np.array(np.unravel_index(np.arange(n), [s for _, s in axes])).T if axes else np.zeros((n, 0), int)
    position = {name: k for k, (name, _) in enumerate(axes)}
    tiles, index = [], np.zeros((n, rank), int)
    for d, refs in enumerate(dim_refs):
        count = 1
        for name, pre, sub in refs:
            whole = size[name]
            part = sub or whole // pre
            digit = (coords[:, position[name]] // (whole // (pre * part))) % part
            index[:, d] = index[:, d] * part + digit
            count *= part
        tiles.append(count)
    holders: dict[int, list[int]] = {}
    for k in range(n):
        flat = int(np.ravel_multi_index(index[k], tiles)) if rank else 0
        holders.setdefault(flat, []).append(ids[k])
    return _tiled(tiles, [holders.get(t, []) for t in range(int(np.prod(tiles or [1])))])
