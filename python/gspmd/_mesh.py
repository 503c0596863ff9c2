"""gspmd.Mesh and partition specs, in JAX's vocabulary, for Program.annotate."""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

from ._errors import ShardingError

__all__ = ["Mesh", "Spec"]

# One entry per leading dim: None (not split), an axis name, or a tuple of axis names.
Spec = Sequence[Union[None, str, Sequence[str]]]


class Mesh:
    """A named mesh of devices, major axis first, devices in iota order (as ``jax.make_mesh``)::

        >>> mesh = gspmd.Mesh({"data": 2, "model": 4})   # device (d, m) = 4 * d + m
        >>> mesh.size
        8
    """

    def __init__(self, axes: Union[Mapping[str, int], Iterable[Tuple[str, int]]]) -> None:
        items = list(axes.items()) if isinstance(axes, Mapping) else [tuple(axis) for axis in axes]
        self.axes: dict[str, int] = {}
        for name, size in items:
            if not isinstance(name, str) or isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise ShardingError(f"gspmd.Mesh: error: axis {name!r} of size {size!r} (expected a name and a positive size)")
            if name in self.axes:
                raise ShardingError(f"gspmd.Mesh: error: axis {name!r} is named twice")
            self.axes[name] = size
        if not self.axes:
            raise ShardingError("gspmd.Mesh: error: no axes (expected e.g. Mesh({'data': 2, 'model': 4}))")

    @property
    def size(self) -> int:
        """The number of devices."""
        n = 1
        for size in self.axes.values():
            n *= size
        return n

    @property
    def shape(self) -> dict[str, int]:
        return dict(self.axes)

    def text(self) -> str:
        """The mesh as ``gspmd model --mesh`` takes it: ``data=2,model=4``."""
        return ",".join(f"{name}={size}" for name, size in self.axes.items())

    def __repr__(self) -> str:
        return f"Mesh({self.axes!r})"


def _dim_axes(entry: Union[None, str, Sequence[str]], key: object) -> list[str]:
    if entry is None:
        return []
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, (tuple, list)) and all(isinstance(axis, str) for axis in entry):
        return list(entry)
    raise ShardingError(f"annotate: error: the spec of {key!r} has entry {entry!r} (expected None, an axis name "
                        "or a tuple of axis names)")


def specs_for_library(specs: Mapping[Union[str, int], Optional[Spec]]) -> list:
    """(index or None, name, [[axes of dim 0], [axes of dim 1], ...]) for each parameter."""
    entries = []
    for key, spec in specs.items():
        spec = () if spec is None else spec
        if isinstance(spec, str) or not isinstance(spec, Sequence):
            raise ShardingError(f"annotate: error: the spec of {key!r} is {spec!r} (expected a tuple such as "
                                "('data', None))")
        dims = [_dim_axes(entry, key) for entry in spec]
        if isinstance(key, bool) or not isinstance(key, (int, str)):
            raise ShardingError(f"annotate: error: {key!r} names no parameter (expected a name or an index)")
        if isinstance(key, int):
            entries.append((key, "", dims))
        else:
            entries.append((None, key, dims))
    return entries
