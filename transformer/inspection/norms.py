"""Norm-weighted attention (Kobayashi et al. 2020, "Attention is Not Only a Weight").

A head's output at query i is Σ_j α_ij f(x_j) with f(x_j) = (x_j W_V + b_V)^h W_O^h: the value of key j
in head h, carried through that head's slice of the output projection (the columns h·d_k .. (h+1)·d_k of
W_O; the bias of W_O is shared by all keys and left out, as in the paper). ‖α_ij f(x_j)‖ says how much
key j moves query i's output, which the weight α_ij alone does not: a key with a small transformed
value counts for little however large its weight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from ..attention import AttentionKind, AttentionTrace


def transformed_norms(v: Tensor, w_o: Tensor) -> Tensor:
    """‖f(x_j)‖ per head and key: (B, H, T_k).

    v: (B, H, T_k, d_k) values of the trace (x W_V + b_V, split into heads).
    w_o: (d_model, d_model) weight of the output projection (nn.Linear layout: out × in).
    """
    B, H, T_k, d_k = v.shape
    w = w_o.reshape(w_o.shape[0], H, d_k)  # (d_model, H, d_k): head h owns input columns h·d_k ..
    f = torch.einsum("bhtk,dhk->bhtd", v, w)  # (B, H, T_k, d_model)
    return f.norm(dim=-1)


def norm_weighted(trace: AttentionTrace, w_o: Tensor) -> Tensor:
    """‖α_ij f(x_j)‖: (B, H, T_q, T_k), from one attention call's trace and its W_O weight."""
    with torch.no_grad():
        return trace.weights * transformed_norms(trace.v, w_o)[:, :, None, :]


def top_disagreement(weights: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Per head: the share of query rows whose strongest key differs between weights and norms.

    weights, norms: (..., H, T_q, T_k); returns (..., H).
    """
    weights, norms = np.asarray(weights), np.asarray(norms)
    if weights.shape != norms.shape:
        raise ValueError(f"weights {weights.shape} and norms {norms.shape} differ in shape")
    return (weights.argmax(-1) != norms.argmax(-1)).mean(-1)


def output_weight(model, kind: AttentionKind, layer: int) -> Tensor:
    """The W_O weight of one attention of a model."""
    kind = AttentionKind(kind)
    if kind is AttentionKind.ENCODER:
        return model.encoder_layers[layer].self_attn.w_o.weight
    block = model.decoder_layers[layer]
    return (block.self_attn if kind is AttentionKind.DECODER else block.cross_attn).w_o.weight


def sentence_maps(model, src_ids: list[int], tgt_in: list[int]) -> dict[AttentionKind, tuple[np.ndarray, np.ndarray]]:
    """Raw weights and norm-weighted maps of one sentence pair (teacher forced), per kind: two (L, H, T_q, T_k)."""
    device = next(model.parameters()).device
    src = torch.tensor([src_ids], device=device)
    tgt = torch.tensor([tgt_in], device=device)
    with torch.no_grad():
        out = model(src, tgt, return_intermediates=True)
    maps = {}
    for kind in AttentionKind:
        n_layers = model.config.n_layers(kind)
        raw, normed = [], []
        for layer in range(n_layers):
            trace = out.intermediates.trace(kind, layer)
            raw.append(trace.weights[0].float().cpu().numpy())
            normed.append(norm_weighted(trace, output_weight(model, kind, layer))[0].float().cpu().numpy())
        maps[kind] = (np.stack(raw), np.stack(normed))
    return maps


@dataclass(frozen=True)
class Disagreement:
    """Per kind: (L, H) share of query rows whose top key differs, and the rows counted."""

    shares: dict[AttentionKind, np.ndarray]
    rows: dict[AttentionKind, int]
    sentences: int

    def overall(self, kind: AttentionKind) -> float:
        return float(self.shares[kind].mean())


def disagreement(
    model,
    tokenizer,
    pairs,
    max_len: int | None = None,
    progress: Callable[[float], None] = lambda fraction: None,
) -> Disagreement:
    """How often raw weights and ‖α f(x)‖ disagree on a row's top key, per head, over (source, reference) pairs.

    Each row counts once (rows are weighted equally across sentences); progress(fraction) after each pair.
    """
    max_len = max_len or model.config.max_len
    sums: dict[AttentionKind, np.ndarray] = {}
    rows: dict[AttentionKind, int] = {k: 0 for k in AttentionKind}
    n = 0
    for i, (src_text, tgt_text) in enumerate(pairs):
        src_ids = tokenizer.source_ids(src_text)
        tgt_in, _ = tokenizer.target_ids(tgt_text)
        if len(src_ids) <= max_len and len(tgt_in) <= max_len:
            n += 1
            for kind, (raw, normed) in sentence_maps(model, src_ids, tgt_in).items():
                differ = (raw.argmax(-1) != normed.argmax(-1)).sum(-1)  # (L, H)
                sums[kind] = sums.get(kind, 0) + differ
                rows[kind] += raw.shape[-2]
        progress((i + 1) / max(len(pairs), 1))
    if n == 0:
        raise ValueError("no sentence pair fits the model's max_len")
    return Disagreement({k: sums[k] / rows[k] for k in sums}, rows, n)
