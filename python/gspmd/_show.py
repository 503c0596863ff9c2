"""What Program.show returns: the tile grids as text, drawn as coloured HTML in a notebook."""

from __future__ import annotations

import html
import re
from typing import Callable, Union

__all__ = ["Shown"]

# The colours `gspmd show --color always` gives tiles (ANSI background codes 41-47, black text).
_BACKGROUNDS = {
    "41": "#f4a6a6", "42": "#a8e6a1", "43": "#f5e17a", "44": "#9fc3f7",
    "45": "#e0a8f0", "46": "#9ee7e7", "47": "#e6e6e6", "106": "#c8f7f7",
}
_ESCAPE = re.compile(r"\x1b\[([0-9;]*)m")


def _html_of_ansi(text: str) -> str:
    """The coloured text as HTML spans with inline styles (no stylesheet, nothing fetched)."""
    out = []
    open_span = False
    position = 0
    for match in _ESCAPE.finditer(text):
        out.append(html.escape(text[position:match.start()]))
        position = match.end()
        if open_span:
            out.append("</span>")
            open_span = False
        codes = match.group(1).split(";")
        background = next((_BACKGROUNDS[c] for c in codes if c in _BACKGROUNDS), None)
        if background is not None:
            out.append(f'<span style="background:{background};color:#000">')
            open_span = True
    out.append(html.escape(text[position:]))
    if open_span:
        out.append("</span>")
    return "".join(out)


class Shown(str):
    """The text of ``gspmd show`` (a ``str``); in a notebook it draws the grids in colour."""

    def __new__(cls, text: str, colored: Union[str, Callable[[], str], None] = None) -> "Shown":
        shown = super().__new__(cls, text)
        shown._colored = colored  # the coloured text, or how to make it (only a notebook asks)
        return shown

    def _repr_html_(self) -> str:
        colored = self._colored() if callable(self._colored) else self._colored
        return ('<pre style="font-family:monospace;line-height:1.25;background:#fff;color:#000">'
                + _html_of_ansi(colored or str(self)) + "</pre>")

    def __repr__(self) -> str:
        return str(self)
