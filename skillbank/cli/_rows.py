"""Tables for listings that must read at any width: no cell is ever cut.

A listing has short, fixed columns (names, statuses, numbers), printed in full however wide they
are, and at most one long text column (a reason, a task), printed last. The long text wraps in
its own column when at least :data:`MIN_TEXT` characters, and its longest word, fit there;
otherwise it moves below its row, indented, wrapped to the terminal's width. When even the short columns do not fit
on one line, the first (a name) takes a line of its own above the others. Piped output is the same plain text
(rich prints no styles when stdout is not a terminal).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Sequence, Union

from rich.console import Console
from rich.text import Text

__all__ = ["Column", "MIN_TEXT", "print_rows"]

MIN_TEXT = 24  # narrower than this, the long text column moves below its row
_GAP = "  "
_INDENT = "    "

Cell = Union[str, Text]


@dataclass(frozen=True)
class Column:
    header: str
    right: bool = False  # right-justified (numbers)


def print_rows(out: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]], *,
               text_header: str | None = None, texts: Sequence[str] | None = None,
               title: str | None = None, caption: str | None = None, stack: bool = True) -> None:
    """Print ``rows`` (one cell per column) under a header line; ``texts`` (one per row, may be
    empty) is the long text column headed ``text_header``. ``stack=False`` keeps each row on one
    line however wide it gets."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in row] for row in rows]
    widths = [max([len(col.header)] + [row[i].cell_len for row in cells]) for i, col in enumerate(columns)]
    # Too wide for one line: the first column (a name) goes on a line of its own, the rest
    # below it, indented.
    stacked = stack and len(columns) > 1 and _width(widths) > out.width
    lead = _INDENT if stacked else ""
    shown = list(zip(columns, widths))[1:] if stacked else list(zip(columns, widths))
    fixed = len(lead) + _width([w for _, w in shown])
    room = out.width - fixed - len(_GAP)
    inline = texts is not None and room >= MIN_TEXT
    if title:
        out.print(Text(title, style="bold"), soft_wrap=True)
    header = Text(lead + _GAP.join(_pad(Text(col.header), w, col.right).plain for col, w in shown))
    if stacked:
        header = Text(columns[0].header + "\n") + header
    if inline and text_header:
        header.append(_GAP + text_header)
    elif texts is not None and text_header and header.cell_len + len(text_header) + 10 <= out.width:
        header.append(f"{_GAP}({text_header} below)")
    header.stylize("bold")
    header.rstrip()
    if header.plain.strip():  # a listing of labelled values has no header
        out.print(header, soft_wrap=True, crop=False)
    for n, row in enumerate(cells):
        if stacked:
            out.print(row[0], soft_wrap=True, crop=False)
            row = row[1:]
        line = Text(lead) + Text(_GAP).join(_pad(cell, w, col.right) for cell, (col, w) in zip(row, shown))
        text = (texts[n] if texts is not None else "") or ""
        if inline and max(map(len, text.split()), default=0) <= room:
            wrapped = _wrap(text, room) or [""]
            line.append(_GAP + wrapped[0])
            line.rstrip()
            out.print(line, soft_wrap=True, crop=False)
            for more in wrapped[1:]:
                out.print(Text(" " * (fixed + len(_GAP)) + more), soft_wrap=True, crop=False)
        else:
            line.rstrip()
            out.print(line, soft_wrap=True, crop=False)
            for more in _wrap(text, max(MIN_TEXT, out.width - len(_INDENT) * 2)):
                out.print(Text(_INDENT * 2 + more, style="dim"), soft_wrap=True, crop=False)
    if caption:
        out.print(Text(caption, style="dim"), soft_wrap=True)


def _wrap(text: str, width: int) -> list[str]:
    # Words (names, hashes, paths) are never split: one longer than the width gets a line of its own.
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def _width(widths: Sequence[int]) -> int:
    return sum(widths) + len(_GAP) * max(0, len(widths) - 1)


def _pad(cell: Text, width: int, right: bool) -> Text:
    cell = cell.copy()
    gap = width - cell.cell_len
    if gap > 0:
        if right:
            cell = Text(" " * gap) + cell
        else:
            cell.append(" " * gap)
    return cell
