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

    def layer(
        self, kind: AttentionKind, index: int, n_heads: int, *, device=None, dtype: torch.dtype | None = None
    ) -> Tensor | None:
        """(H,) multipliers of one layer (1 keeps, 0 switches off), or None when it keeps every head.

        device, dtype: those of the scores it multiplies (a CUDA model's mask is built on its GPU)."""
        heads = [h.head for h in self.off if h.kind is kind and h.layer == index]
        if not heads:
            return None
        keep = torch.ones(n_heads, device=device, dtype=dtype)
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


@dataclass(frozen=True, eq=False)
class HeadGate:
    """A float gate ξ on every head's output (Michel et al., 2019): head h's slice of Concat(head_1..head_h)
    is multiplied by ξ_h before W_O. With ξ = 1 the call is the trained model; ∂L/∂ξ_h is head h's
    importance. The gates are tensors of the caller (they may require grad), never stored on a module.

    gates: kind -> (L, H) tensor. A kind that is absent keeps its heads as they are. Compared and
    hashed by identity (tensors), so a call with a gate is not cached by value.
    """

    gates: dict[AttentionKind, Tensor]

    def layer(self, kind: AttentionKind, index: int) -> Tensor | None:
        """(H,) gates of one layer, or None when the kind has none."""
        g = self.gates.get(AttentionKind(kind))
        return None if g is None else g[index]

    @classmethod
    def ones(cls, config: TransformerConfig, device=None, requires_grad: bool = True) -> HeadGate:
        """ξ = 1 for every head of every kind (the trained model), each a leaf that records its gradient."""
        return cls(
            {
                kind: torch.ones(config.n_layers(kind), config.n_heads, device=device, requires_grad=requires_grad)
                for kind in AttentionKind
            }
        )


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
        head_gate: a float gate on every head (head importance, :class:`HeadGate`); multiplied with head_mask.
    """

    padding_mask: bool = True
    look_ahead_mask: bool = True
    positions: bool = True
    window: int | None = None
    head_mask: HeadMask | None = None
    head_gate: HeadGate | None = None

    def heads(self, kind: AttentionKind, layer: int, n_heads: int, like: Tensor | None = None) -> Tensor | None:
        """(H,) multipliers of one layer's heads, or None when every head is kept; built on like's device and
        dtype (the layer's input)."""
        on = {} if like is None else {"device": like.device, "dtype": like.dtype}
        keep = None if self.head_mask is None else self.head_mask.layer(kind, layer, n_heads, **on)
        gate = None if self.head_gate is None else self.head_gate.layer(kind, layer)
        if gate is None:
            return keep
        return gate if keep is None else gate * keep.to(gate.device, gate.dtype)

    def __post_init__(self) -> None:
        if self.window is not None and (not isinstance(self.window, int) or self.window < 0):
            raise ValueError(f"window must be a non-negative integer or None, got {self.window!r}")


DEFAULT = CallOptions()
