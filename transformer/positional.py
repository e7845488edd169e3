"""Positional encodings (§3.5): sinusoidal, learned, or none."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .config import Positional


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).

    Shape: (max_len, d_model).
    """
    position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div[: d_model // 2])
    return table.float()


class PositionalEncoding(nn.Module):
    """Adds position information to the (already √d_model-scaled) embeddings.

    Args:
        kind: "sinusoidal" (fixed table of §3.5), "learned" (one trained vector per
            position, Table 3 row E) or "none" (the model sees a bag of tokens).
        max_len: positions covered.
        d_model: embedding width.
    """

    def __init__(self, kind: Positional, max_len: int, d_model: int) -> None:
        super().__init__()
        self.kind = kind
        self.max_len = max_len
        if kind == "sinusoidal":
            self.register_buffer("table", sinusoidal_table(max_len, d_model), persistent=False)
        elif kind == "learned":
            self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        elif kind == "none":
            self.table = None
        else:
            raise ValueError(f"unknown positional encoding {kind!r}")

    def forward(self, x: Tensor, start: int | Tensor = 0) -> Tensor:
        """Shape: x (B, T, d_model) -> (B, T, d_model); positions start..start+T-1, or for a (B,) tensor
        start, row b's positions start[b]..start[b]+T-1 (rows of a batch that joined at different steps)."""
        if self.table is None:
            return x
        if isinstance(start, Tensor):
            positions = start[:, None] + torch.arange(x.size(1), device=start.device)  # (B, T)
            end = int(positions.max()) + 1 if positions.numel() else 0
        else:
            end = start + x.size(1)
        if end > self.max_len:
            raise ValueError(f"sequence of {end} tokens is longer than max_len={self.max_len}")
        return x + (self.table[positions] if isinstance(start, Tensor) else self.table[start:end])
