"""Upstream text made safe to print where an operator reads it: a terminal, a spreadsheet.

The text of an order (its ``orderParams``, a status, an error message) comes from the upstream and,
through the launch token or the order form, from whoever made the order. Printed raw, an ESC
starts a terminal escape sequence (it can retitle the window, rewrite what is on screen, or
hide a line with a carriage return; OSC 8 makes a link), and a cell that starts with ``=`` is a
formula to the spreadsheet that opens the CSV (``=HYPERLINK(...)`` sends what it names to
another site when clicked).
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence

# OWASP's CSV injection list, and the full-width forms that some spreadsheets (Japanese or
# Chinese input, say) read as the same sign.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")


def for_terminal(text: str) -> str:
    """``text`` with every character a terminal would act on, rather than show, written as its
    Python escape: ESC as ``\\x1b``, BEL as ``\\x07``, a right-to-left override as ``\\u202e``.
    What ``str.isprintable`` refuses: C0 and C1 controls (newline too: a table's row is one
    line), format characters, separators other than the space."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def cell(text: str | None, width: int) -> str:
    """``text`` as a table's cell of ``width`` characters at most (``-`` for none), cut with an
    ellipsis, safe for a terminal."""
    text = for_terminal(text or "-")
    return text if len(text) <= width else text[: width - 1] + "…"


def for_spreadsheet(cell: str | None) -> str | None:
    """``cell`` as a spreadsheet will show it, not compute it: one that starts with a formula's
    sign is prefixed with ``'`` (OWASP's advice), so the cell is text."""
    if cell and cell.startswith(_FORMULA_STARTS):
        return "'" + cell
    return cell


def csv_lines(rows: Iterable[Mapping[str, str | None]], columns: Sequence[str]) -> Iterator[str]:
    """A CSV of ``rows`` (the header, then a line a row), each cell as :func:`for_spreadsheet`
    makes it: ``flask checkout orders list --format csv`` and the desk's export. Lines end in
    CRLF, as RFC 4180 has it: the csv module then quotes a cell holding a lone CR too (with "\n"
    it leaves it bare, and a spreadsheet starts a new row there). One line at a time, so that a
    long export is sent as it is read."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\r\n")

    def taken() -> str:
        line = out.getvalue()
        out.seek(0)
        out.truncate()
        return line

    writer.writeheader()
    yield taken()
    for row in rows:
        writer.writerow({key: for_spreadsheet(row.get(key)) for key in columns})
        yield taken()
