"""Attention maps regrouped: pieces merged into words, one token's row across heads, differences."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def word_labels(pieces: list[str], groups: list[list[int]]) -> list[str]:
    return ["".join(pieces[i] for i in g).replace("▁", "") or "▁" for g in groups]


def merge_words(weights: np.ndarray, row_groups: list[list[int]], col_groups: list[list[int]]) -> np.ndarray:
    """(..., T_q, T_k) piece attention -> (..., W_q, W_k) word attention (rows: mean, columns: sum)."""
    cols = np.stack([weights[..., g].sum(-1) for g in col_groups], axis=-1)  # (..., T_q, W_k)
    return np.stack([cols[..., g, :].mean(-2) for g in row_groups], axis=-2)  # (..., W_q, W_k)


def token_focus(weights: np.ndarray, query: int) -> np.ndarray:
    """One query row in every layer and head: (L, H, T_q, T_k) -> (L·H, T_k), row = layer·H + head."""
    L, H = weights.shape[:2]
    return weights[:, :, query, :].reshape(L * H, -1)


@dataclass
class Difference:
    """a − b for two attention maps of the same kind, on the positions they share."""

    delta: np.ndarray  # (L, H, T_q, T_k)
    same_shape: bool
    rows: int
    cols: int


def difference(a: np.ndarray, b: np.ndarray) -> Difference:
    rows, cols = min(a.shape[-2], b.shape[-2]), min(a.shape[-1], b.shape[-1])
    delta = a[..., :rows, :cols] - b[..., :rows, :cols]
    return Difference(delta, a.shape == b.shape, rows, cols)


def diff_labels(a: list[str], b: list[str], n: int) -> list[str]:
    """Axis labels for a difference map: one token where both sentences agree, "a | b" where they differ."""
    return [x if x == y else f"{x} | {y}" for x, y in zip(a[:n], b[:n])]
