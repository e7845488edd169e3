"""Downloads: every CSV the app writes is written here, one way.

Text cells are quoted (quotes doubled) and guarded against spreadsheet formulas: a cell that
starts with = + - @, a tab or a carriage return gets a leading apostrophe, so a token such as
"=cmd" or "-1" stays text. Numbers are written as numbers (six decimals for floats), None as empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Integral, Real

import numpy as np

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> str:
    """One CSV cell: a number as it is, anything else as guarded, quoted text."""
    if value is None:
        return ""
    if isinstance(value, Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, Real) and not isinstance(value, bool):
        return "" if np.isnan(value) else f"{float(value):.6f}"
    s = str(value).replace("\u200b", "")  # the zero-width spaces figures put in labels
    if s.startswith(FORMULA_START):
        s = "'" + s  # keep spreadsheets from reading a token as a formula
    return '"' + s.replace('"', '""') + '"'


def csv_text(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A header and rows as CSV text, every cell through cell()."""
    return "".join(",".join(cell(v) for v in line) + "\n" for line in (header, *rows))


def to_csv(matrix: np.ndarray, row_labels: list[str], col_labels: list[str]) -> str:
    """A matrix as CSV text with labelled rows and columns."""
    return csv_text(
        ["query \\ key", *col_labels], ([label, *row] for label, row in zip(row_labels, np.asarray(matrix)))
    )


def table_csv(rows: list[dict]) -> str:
    """Table rows (dicts, as st.dataframe shows them) as CSV text; the columns in order of first appearance."""
    header = list(dict.fromkeys(k for r in rows for k in r))
    return csv_text(header, ([r.get(k) for k in header] for r in rows))
