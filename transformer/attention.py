"""Scaled dot-product attention and multi-head attention (§3.2).

Nothing is stored on the modules: weights and intermediates are return values,
so one model instance can serve many callers at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class AttentionKind(StrEnum):
    """The three attentions of the encoder-decoder (§3.2.3); the value names them in files and URLs."""

    ENCODER = "encoder"  # encoder self-attention: (S, S)
    DECODER = "decoder"  # masked decoder self-attention: (T, T)
    CROSS = "cross"  # encoder-decoder attention, queries from the decoder, keys from the memory: (T, S)

    @property
    def in_encoder(self) -> bool:
        return self is AttentionKind.ENCODER


class HeadId(NamedTuple):
    """One attention head: its kind, its layer and its index, counting from 0 (the one type for a head)."""

    kind: AttentionKind
    layer: int
    head: int

    @property
    def label(self) -> str:
        """Language-neutral short name, e.g. "cross L1 H1"."""
        return f"{self.kind.value} L{self.layer} H{self.head}"

    @classmethod
    def of(cls, kind: AttentionKind | str, layer: int, head: int) -> HeadId:
        """A head from loose parts (a kind's value from a file or a URL, numpy integers); raises ValueError."""
        return cls(AttentionKind(kind), int(layer), int(head))

    def in_model(self, config) -> bool:
        """Whether a model of this config has this head."""
        return 0 <= self.layer < config.n_layers(self.kind) and 0 <= self.head < config.n_heads

    @classmethod
    def all(cls, config, kind: AttentionKind | None = None) -> list[HeadId]:
        """Every head of a model (of one kind when given), kind by kind, layer by layer."""
        kinds = list(AttentionKind) if kind is None else [AttentionKind(kind)]
        return [
            cls(k, layer, head) for k in kinds for layer in range(config.n_layers(k)) for head in range(config.n_heads)
        ]


@dataclass
class AttentionTrace:
    """Every intermediate of one attention call, per head (never averaged).

    Shapes: B batch, H heads, T_q queries, T_k keys, d_k head width.
    """

    q: Tensor  # (B, H, T_q, d_k)  queries  Q = X W_Q, split into heads
    k: Tensor  # (B, H, T_k, d_k)  keys     K = Y W_K
    v: Tensor  # (B, H, T_k, d_k)  values   V = Y W_V
    scores: Tensor  # (B, H, T_q, T_k)  Q Kᵀ
    scaled: Tensor  # (B, H, T_q, T_k)  Q Kᵀ / √d_k
    masked: Tensor  # (B, H, T_q, T_k)  scaled, with -inf where the mask is False
    weights: Tensor  # (B, H, T_q, T_k)  softmax(masked), rows sum to 1
    head_outputs: Tensor  # (B, H, T_q, d_k)  weights · V, before W_O
    output: Tensor | None = None  # (B, T_q, d_model)  Concat(heads) W_O


class AttentionResult(NamedTuple):
    """What one multi-head attention call returns (weights and trace only when asked for)."""

    output: Tensor  # (B, T_q, d_model)
    weights: Tensor | None  # (B, H, T_q, T_k) when asked for
    trace: AttentionTrace | None  # when asked for
    kv: tuple[Tensor, Tensor]  # this call's keys and values (B, H, T_k, d_k), for a cache


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    return_trace: bool = False,
) -> tuple[Tensor, Tensor, AttentionTrace | None]:
    """Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V, written out step by step (§3.2.1).

    Args:
        q, k, v: (B, H, T_q, d_k), (B, H, T_k, d_k), (B, H, T_k, d_k).
        mask: bool, broadcastable to (B, H, T_q, T_k); True = may attend (see masks.py).
        dropout_p: dropout on the weights (training only; pass 0.0 in eval).
        return_trace: also return every intermediate.

    Returns:
        (B, H, T_q, d_k) head outputs, (B, H, T_q, T_k) weights, and the trace or None.
    """
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1)  # (B, H, T_q, T_k)
    scaled = scores / math.sqrt(d_k)
    masked = scaled if mask is None else scaled.masked_fill(~mask, float("-inf"))
    weights = masked.softmax(dim=-1)  # (B, H, T_q, T_k)
    dropped = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
    out = dropped @ v  # (B, H, T_q, d_k)
    trace = None
    if return_trace:
        trace = AttentionTrace(q, k, v, scores, scaled, masked, weights, out)
    return out, weights, trace


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O, head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i) (§3.2.2).

    The h per-head projections are stored as one (d_model, d_model) matrix each,
    head i owning columns i·d_k .. (i+1)·d_k.

    Args:
        d_model: model width.
        n_heads: number of heads h; d_k = d_model / h.
        dropout: dropout on the attention weights.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, T, d_model) -> (B, H, T, d_k)."""
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_k).transpose(1, 2)

    def project_kv(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values split into heads: (B, T_k, d_model) -> 2 × (B, H, T_k, d_k)."""
        return (
            self.split_heads(F.linear(key, self.w_k.weight, self.w_k.bias)),
            self.split_heads(F.linear(value, self.w_v.weight, self.w_v.bias)),
        )

    def forward(
        self,
        query: Tensor,
        key: Tensor | None,
        value: Tensor | None,
        mask: Tensor | None = None,
        *,
        need_weights: bool = False,
        need_trace: bool = False,
        past_kv: tuple[Tensor, Tensor] | None = None,
        static_kv: tuple[Tensor, Tensor] | None = None,
        head_mask: Tensor | None = None,
    ) -> AttentionResult:
        """
        Args:
            query: (B, T_q, d_model).
            key, value: (B, T_k, d_model); ignored when static_kv is given.
            mask: bool, broadcastable to (B, H, T_q, T_k); True = may attend.
            need_weights: return the (B, H, T_q, T_k) attention weights.
            need_trace: return every intermediate (Q, K, V, scores, ..., head outputs).
            past_kv: cached keys/values of earlier positions, prepended to this call's
                (incremental decoding of self-attention).
            static_kv: precomputed keys/values used as they are (cross-attention on a
                cached encoder memory).
            head_mask: (H,) multiplier per head output (1 keeps, 0 ablates a head).
        """
        B, T_q, _ = query.shape
        # F.linear on the modules' own weights: the same maths without the module-call overhead,
        # which dominates a one-token decoding step of a small model
        q = self.split_heads(F.linear(query, self.w_q.weight, self.w_q.bias))  # (B, H, T_q, d_k)
        if static_kv is not None:
            k, v = static_kv
        else:
            k, v = self.project_kv(key, value)  # (B, H, T_k, d_k)
            if past_kv is not None:
                k = torch.cat([past_kv[0], k], dim=2)
                v = torch.cat([past_kv[1], v], dim=2)
        dropout_p = self.dropout if self.training else 0.0
        weights = trace = None
        if need_weights or need_trace:
            heads, weights, trace = scaled_dot_product_attention(q, k, v, mask, dropout_p, need_trace)
        else:
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        if head_mask is not None:
            heads = heads * head_mask.to(heads.device, heads.dtype)[None, :, None, None]
        concat = heads.transpose(1, 2).reshape(B, T_q, self.d_model)  # (B, T_q, d_model)
        output = F.linear(concat, self.w_o.weight, self.w_o.bias)
        if trace is not None:
            trace.output = output
        return AttentionResult(output, weights, trace, (k, v))
