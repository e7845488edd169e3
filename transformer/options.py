"""How one model call may differ from the trained model, without touching the model.

A cached model is shared by every session of the app, so nothing here is ever set on
a module: switching a mask off, removing the positions, restricting the encoder's
attention to a window or switching heads off are all arguments of the call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor

from .attention import AttentionKind, HeadId
from .config import TransformerConfig


@dataclass(frozen=True)
class HeadMask:
    """Heads switched off: their output is zeroed before W_O (their slice of Concat(head_1..head_h)).

    Hashable (a frozenset of HeadId), so a call with heads switched off can be cached.
    """

    off: frozenset[HeadId] = frozenset()

    def layer(self, kind: AttentionKind, index: int, n_heads: int) -> Tensor | None:
        """(H,) multipliers of one layer (1 keeps, 0 switches off), or None when it keeps every head."""
        heads = [h.head for h in self.off if h.kind is kind and h.layer == index]
        if not heads:
            return None
        keep = torch.ones(n_heads)
        keep[heads] = 0.0
        return keep

    @classmethod
    def without(cls, config: TransformerConfig, heads: Iterable[HeadId]) -> HeadMask:
        """Every head kept except the heads given (checked against the config)."""
        off = {HeadId.of(*h) for h in heads}
        for h in off:
            if not h.in_model(config):
                raise ValueError(f"no head L{h.layer} H{h.head} in {h.kind.value} attention")
        return cls(frozenset(off))


@dataclass(frozen=True)
class CallOptions:
    """What a call may switch; the default is the model exactly as trained.

    Args:
        padding_mask: hide pad keys (§3.2.3). Off, pad tokens are attended to like words.
        look_ahead_mask: hide later target positions from the decoder's self-attention.
        positions: add the positional encoding to the embeddings (§3.5).
        window: restricted self-attention in the encoder (§4, Table 1): a query at i sees
            keys j with |i - j| <= window only. None is full attention.
        head_mask: heads switched off.
    """

    padding_mask: bool = True
    look_ahead_mask: bool = True
    positions: bool = True
    window: int | None = None
    head_mask: HeadMask | None = None

    def heads(self, kind: AttentionKind, layer: int, n_heads: int) -> Tensor | None:
        """(H,) multipliers of one layer's heads, or None when every head is kept."""
        return None if self.head_mask is None else self.head_mask.layer(kind, layer, n_heads)

    def __post_init__(self) -> None:
        if self.window is not None and (not isinstance(self.window, int) or self.window < 0):
            raise ValueError(f"window must be a non-negative integer or None, got {self.window!r}")


DEFAULT = CallOptions()
