"""numpy arrays to and from the extension module: dtypes mapped to HLO element types.

Arrays cross as ``(element type, dims, bytes)``: an input's bytes are a ``uint8`` view of the
array (no copy when it is C-contiguous; the library copies it once into its own value), and a
result's bytes are the library's own buffer, which numpy then owns (no copy). bfloat16 and the
float8 types are ``ml_dtypes``' dtypes, as JAX uses them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ._errors import InputError

_NUMPY_TYPES = {
    "pred": np.bool_,
    "s8": np.int8,
    "s16": np.int16,
    "s32": np.int32,
    "s64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "c64": np.complex64,
    "c128": np.complex128,
}
# HLO name -> ml_dtypes attribute.
_ML_DTYPES = {
    "bf16": "bfloat16",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
    "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e4m3": "float8_e4m3",
    "f8e3m4": "float8_e3m4",
}


def _ml_dtypes():
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes is installed wherever JAX is
        return None
    return ml_dtypes


_DTYPE_OF_TYPE: dict[str, np.dtype] = {}   # filled on first use (ml_dtypes is imported only then)
_TYPE_OF_DTYPE: dict[np.dtype, str] = {}


def _fill_tables() -> None:
    for name, numpy_type in _NUMPY_TYPES.items():
        _DTYPE_OF_TYPE[name] = np.dtype(numpy_type)
    ml_dtypes = _ml_dtypes()
    if ml_dtypes is not None:
        for name, attribute in _ML_DTYPES.items():
            if hasattr(ml_dtypes, attribute):
                _DTYPE_OF_TYPE[name] = np.dtype(getattr(ml_dtypes, attribute))
    for name, dtype in _DTYPE_OF_TYPE.items():
        _TYPE_OF_DTYPE[dtype] = name


def numpy_dtype(type_name: str) -> np.dtype:
    """The numpy dtype of an HLO element type (``"f32"`` -> ``float32``, ``"bf16"`` -> bfloat16)."""
    if not _DTYPE_OF_TYPE:
        _fill_tables()
    dtype = _DTYPE_OF_TYPE.get(type_name)
    if dtype is not None:
        return dtype
    if type_name in _ML_DTYPES:
        raise InputError(f"gspmd: error: {type_name} arrays need the ml_dtypes package (pip install ml_dtypes)")
    raise InputError(f"gspmd: error: no numpy dtype for the element type {type_name}")


def hlo_type(dtype: np.dtype) -> str | None:
    """The HLO element type of a numpy dtype, or None when there is none."""
    if not _TYPE_OF_DTYPE:
        _fill_tables()
    return _TYPE_OF_DTYPE.get(np.dtype(dtype))


class Parameter(NamedTuple):
    """An entry parameter: its name (without ``%``), HLO element type and dims."""

    index: int
    name: str
    type: str
    shape: tuple[int, ...]

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype an input for this parameter must have."""
        return numpy_dtype(self.type)


def to_inputs(arrays: Sequence[Any], parameters: Sequence[Parameter], where: str) -> list:
    """Checks each array's dtype against its parameter and views it as bytes.

    Python scalars take their parameter's dtype (as JAX's weak types do); numpy arrays must
    have it exactly. Shapes are checked by the library, which names both shapes.
    """
    inputs = []
    for i, value in enumerate(arrays):
        parameter = parameters[i] if i < len(parameters) else None
        if isinstance(value, (bool, int, float, complex)) and parameter is not None and parameter.type != "tuple":
            array = np.asarray(value, dtype=parameter.dtype)
        else:
            array = np.asarray(value)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))  # big-endian data: one copy
        type_name = hlo_type(array.dtype)
        if type_name is None:
            raise InputError(
                f"{where}: error: input {i} has dtype {array.dtype}, which has no HLO element type (expected bool, "
                "int8..int64, uint8..uint64, float16, bfloat16, float32, float64, complex64 or complex128)")
        if parameter is not None and parameter.type not in ("tuple", type_name):
            wanted = parameter.dtype
            raise InputError(
                f"{where}: error: input {i} is {array.dtype} but parameter {i} (%{parameter.name}) is "
                f"{parameter.type}{list(parameter.shape)}; cast it with .astype(np.{wanted.name})"
                if wanted.name in np.sctypeDict else
                f"{where}: error: input {i} is {array.dtype} but parameter {i} (%{parameter.name}) is "
                f"{parameter.type}{list(parameter.shape)}; cast it with .astype({wanted.name})")
        if not array.flags.c_contiguous:
            array = array.copy(order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
        inputs.append((type_name, list(array.shape), array.reshape(-1).view(np.uint8)))
    return inputs


def from_outputs(outputs: Sequence[tuple[str, list[int], Any]]) -> list[np.ndarray]:
    """numpy arrays over the library's result buffers (no copy)."""
    arrays = []
    for type_name, dims, raw in outputs:
        dtype = numpy_dtype(type_name)
        if raw is None:
            arrays.append(np.zeros(dims, dtype=dtype))
        else:
            arrays.append(raw.view(dtype).reshape(dims))
    return arrays
