"""The exceptions gspmd raises: one base class and a subclass per kind of bad input.

Every message says where the problem is (``FILE:LINE:COL``, the instruction, the input or the
path) and what was expected, exactly as the ``gspmd`` command prints it::

    try:
        gspmd.load("model.hlo")
    except gspmd.ParseError as error:
        print(error)   # model.hlo:3:17: error: expected ']' ...
"""

from __future__ import annotations

__all__ = ["Error", "ParseError", "ShardingError", "InputError", "ResourceError"]


class Error(Exception):
    """Base class of every error gspmd raises for bad input (never for its own bugs)."""


class ParseError(Error):
    """Program text (HLO or StableHLO) that does not read."""


class ShardingError(Error):
    """Shardings that do not read, or do not fit the program, the mesh or the devices."""


class InputError(Error, ValueError):
    """Arrays, options, chips or other arguments that do not fit the program."""


class ResourceError(Error):
    """Memory that runs out, a file that cannot be written, a failed device."""
