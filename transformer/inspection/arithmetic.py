"""Scaled dot-product attention, step by step, on one model's own numbers (§3.2.1, §3.2.2, §3.1).

For one kind of attention, layer, head and query token, every stage is recomputed here in
float64 numpy from the layer's weights (q = x W_Q, q·Kᵀ, ÷√d_k, mask, softmax, ·V, Concat·W_O,
residual, LayerNorm, on to the layer's output) and compared with what the model itself
computed (its traces and Add & Norm outputs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ..attention import AttentionKind, HeadId, MultiHeadAttention
from ..model import LayerTrace, Transformer
from . import on_model_device


@dataclass
class Stage:
    """One step: our float64 recomputation and the model's own number, when it keeps one."""

    name: str  # stage id (q, K, V, scores, scaled, masked, weights, head, heads, attention, ...)
    value: np.ndarray
    reference: np.ndarray | None = None

    @property
    def delta(self) -> float | None:
        """Largest |ours − model's| (−∞ entries must match exactly and are left out)."""
        if self.reference is None:
            return None
        a, b = np.asarray(self.value, dtype=np.float64), np.asarray(self.reference, dtype=np.float64)
        same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
        if np.any(np.isinf(a) != np.isinf(b)):
            return float("inf")
        finite = ~same_inf
        return float(np.abs(a[finite] - b[finite]).max(initial=0.0))


@dataclass
class Walkthrough:
    kind: AttentionKind
    layer: int
    head: int
    query: int  # row index (source piece for the encoder, decoder input position otherwise)
    query_labels: list[str]
    key_labels: list[str]
    d_k: int
    stages: dict[str, Stage] = field(default_factory=dict)

    def add(self, name: str, value, reference=None) -> np.ndarray:
        value = np.asarray(value, dtype=np.float64)
        ref = None if reference is None else reference.detach().double().cpu().numpy()
        self.stages[name] = Stage(name, value, ref)
        return value

    @property
    def final_delta(self) -> float:
        return self.stages["output"].delta


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().cpu().numpy()


def _linear(x: np.ndarray, layer: nn.Linear) -> np.ndarray:
    return x @ _np(layer.weight).T + _np(layer.bias)


def _layer_norm(x: np.ndarray, norm: nn.LayerNorm) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + norm.eps) * _np(norm.weight) + _np(norm.bias)


def _softmax(x: np.ndarray) -> np.ndarray:
    finite = np.where(np.isfinite(x), x, -np.inf)
    e = np.exp(finite - finite.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _attention(mha: MultiHeadAttention, x_q: np.ndarray, y: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, ...]:
    """All heads for one query row: q (H, d_k), K, V (H, T_k, d_k), weights (H, T_k), heads (H, d_k)."""
    H, d_k = mha.n_heads, mha.d_k
    q = _linear(x_q, mha.w_q).reshape(H, d_k)
    k = _linear(y, mha.w_k).reshape(len(y), H, d_k).transpose(1, 0, 2)
    v = _linear(y, mha.w_v).reshape(len(y), H, d_k).transpose(1, 0, 2)
    scores = np.einsum("hd,htd->ht", q, k)
    scaled = scores / math.sqrt(d_k)
    masked = np.where(keep[None, :], scaled, -np.inf)
    weights = _softmax(masked)
    heads = np.einsum("ht,htd->hd", weights, v)
    return q, k, v, scores, scaled, masked, weights, heads


ACTIVATIONS = {"relu": lambda z: np.maximum(z, 0.0), "swish": lambda z: z / (1.0 + np.exp(-z))}  # swish = z·σ(z)


def _feed_forward(h: np.ndarray, layer, activation: str) -> np.ndarray:
    ff = layer.feed_forward
    return _linear(ACTIVATIONS[activation](_linear(h, ff.w_1)), ff.w_2)


@on_model_device
@torch.inference_mode()
def walkthrough(
    model: Transformer,
    src_ids: list[int],
    decoder_input: list[int],
    which: HeadId,
    query: int,
    labels: tuple[list[str], list[str]],
) -> Walkthrough:
    """Recompute one head's attention for one query, then the layer around it, and compare every stage.

    src_ids: the encoder input (EOS last); decoder_input: BOS + the translation (teacher forcing).
    labels: (query labels, key labels) for display.
    """
    kind, layer, head = HeadId.of(*which)
    src = torch.tensor([src_ids])
    tgt = torch.tensor([decoder_input or [model.config.bos_id]])
    out = model(src, tgt, return_intermediates=True)
    inter = out.intermediates
    record: LayerTrace = (inter.encoder if kind.in_encoder else inter.decoder)[layer]
    module = (model.encoder_layers if kind.in_encoder else model.decoder_layers)[layer]
    trace = inter.trace(kind, layer)
    w = Walkthrough(kind, layer, head, query, labels[0], labels[1], model.config.d_k)

    if kind is AttentionKind.CROSS:
        mha, x_all = module.cross_attn, _np(record.after_self[0])  # queries come from the decoder's first sub-layer
        y, keep = _np(out.memory[0]), np.ones(len(src_ids), dtype=bool)
    else:
        mha, x_all = module.self_attn, _np(record.input[0])
        y = x_all
        n = len(x_all)
        keep = np.ones(n, dtype=bool) if kind.in_encoder else np.arange(n) <= query
    x = w.add("x", x_all[query], (record.after_self if kind is AttentionKind.CROSS else record.input)[0, query])
    q, k, v, scores, scaled, masked, weights, heads = _attention(mha, x, y, keep)
    w.add("q", q[head], trace.q[0, head, query])
    w.add("K", k[head], trace.k[0, head])
    w.add("V", v[head], trace.v[0, head])
    w.add("scores", scores[head], trace.scores[0, head, query])
    w.add("scaled", scaled[head], trace.scaled[0, head, query])
    w.add("masked", masked[head], trace.masked[0, head, query])
    w.add("weights", weights[head], trace.weights[0, head, query])
    w.add("head", heads[head], trace.head_outputs[0, head, query])
    w.add("heads", heads, trace.head_outputs[0, :, query])
    concat = w.add("concat", heads.reshape(-1))
    attention = w.add("attention", _linear(concat, mha.w_o), trace.output[0, query])
    residual = w.add("residual", x + attention)
    if kind is AttentionKind.ENCODER:
        h = w.add("norm", _layer_norm(residual, module.norm_1), record.after_self[0, query])
        ff = w.add("ffn", _feed_forward(h, module, model.config.activation))
        w.add("output", _layer_norm(h + ff, module.norm_2), record.output[0, query])
        return w
    if kind is AttentionKind.DECODER:
        h1 = w.add("norm", _layer_norm(residual, module.norm_1), record.after_self[0, query])
        *_, cross_heads = _attention(module.cross_attn, h1, _np(out.memory[0]), np.ones(len(src_ids), dtype=bool))
        cross = _linear(cross_heads.reshape(-1), module.cross_attn.w_o)
        h2 = w.add("cross", _layer_norm(h1 + cross, module.norm_2), record.after_cross[0, query])
    else:
        h2 = w.add("norm", _layer_norm(residual, module.norm_2), record.after_cross[0, query])
    ff = w.add("ffn", _feed_forward(h2, module, model.config.activation))
    w.add("output", _layer_norm(h2 + ff, module.norm_3), record.output[0, query])
    return w
