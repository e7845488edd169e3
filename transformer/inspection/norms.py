"""Norm-weighted attention (Kobayashi et al. 2020, "Attention is Not Only a Weight").

A head's output at query i is Σ_j α_ij f(x_j) with f(x_j) = (x_j W_V + b_V)^h W_O^h: the value of key j
in head h, carried through that head's slice of the output projection (the columns h·d_k .. (h+1)·d_k of
W_O; the bias of W_O is shared by all keys and left out, as in the paper). ‖α_ij f(x_j)‖ says how much
key j moves query i's output, which the weight α_ij alone does not: a key with a small transformed
value counts for little however large its weight.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ..attention import AttentionTrace


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
