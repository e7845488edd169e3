"""Attention masks: the project's single convention.

Convention: a mask is a boolean tensor that broadcasts to the attention scores'
shape (B, H, T_q, T_k). **True means "this query may attend to this key"**; False
entries get -inf before the softmax (§3.2.3), so their weight is exactly 0.

- Padding mask (B, 1, 1, S): hides pad keys from every query.
- Look-ahead ("subsequent") mask (1, 1, T, T): query i may see keys j <= i only,
  which keeps the decoder auto-regressive (§3.1, §3.2.3).
- Band mask (1, 1, S, S): query i may see keys j with |i - j| <= r, the restricted
  self-attention of §4 and Table 1.
"""

from __future__ import annotations

import torch
from torch import Tensor


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Keys that are real tokens.

    Shape: tokens (B, S) -> (B, 1, 1, S) bool, True where tokens != pad_id.
    """
    return (tokens != pad_id)[:, None, None, :]


def subsequent_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """The look-ahead mask: lower triangle (diagonal included) is True.

    Shape: (1, 1, size, size) bool.
    """
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()[None, None]


def band_mask(size: int, window: int, device: torch.device | str | None = None) -> Tensor:
    """Restricted attention: query i sees keys i - window .. i + window.

    Shape: (1, 1, size, size) bool.
    """
    i = torch.arange(size, device=device)
    return ((i[:, None] - i[None, :]).abs() <= window)[None, None]


def target_mask(tgt: Tensor, pad_id: int, look_ahead: bool = True) -> Tensor:
    """Padding and look-ahead masks combined for the decoder's self-attention.

    Shape: tgt (B, T) -> (B, 1, T, T) bool.
    """
    keys = padding_mask(tgt, pad_id)
    if not look_ahead:
        return keys.expand(-1, -1, tgt.size(1), -1)
    return keys & subsequent_mask(tgt.size(1), tgt.device)
