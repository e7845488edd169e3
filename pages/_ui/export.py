"""Downloads: a labelled matrix as CSV text."""

from __future__ import annotations

import numpy as np


def _cell(s: str) -> str:
    s = str(s).replace("\u200b", "")
    if s[:1] in ("=", "+", "-", "@"):
        s = "'" + s  # keep spreadsheets from reading a token as a formula
    return '"' + s.replace('"', '""') + '"'


def to_csv(matrix: np.ndarray, row_labels: list[str], col_labels: list[str]) -> str:
    """A matrix as CSV text with labelled rows and columns (quotes doubled, never evaluated)."""
    lines = [",".join([_cell("query \\ key")] + [_cell(c) for c in col_labels])]
    for label, row in zip(row_labels, np.asarray(matrix)):
        lines.append(",".join([_cell(label)] + [f"{x:.6f}" for x in row]))
    return "\n".join(lines) + "\n"
