"""Why divide by √d_k (§3.2.1), measured: random unit-variance q and k, and the model's own scores.

For large d_k the dot products grow large in magnitude (variance d_k), pushing the softmax into
regions where it is nearly one-hot and its gradient vanishes; dividing by √d_k keeps variance 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..attention import AttentionKind
from ..model import Transformer
from . import on_model_device

D_KS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)


def softmax_stats(scores: np.ndarray, valid: np.ndarray | None = None) -> tuple[float, float, float]:
    """(mean entropy in nats, mean largest weight, mean Frobenius norm of the softmax Jacobian) over rows.

    scores: (..., n) with -inf (or valid False) for keys a row may not see.
    J = diag(p) − p pᵀ is the softmax's gradient; its norm → 0 as the softmax saturates.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if valid is not None:
        scores = np.where(valid, scores, -np.inf)
    z = scores - scores.max(-1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(-1, keepdims=True)
    logp = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    entropy = -(p * logp).sum(-1)
    # ‖diag(p) − ppᵀ‖_F² = Σ p_i² (1 − 2 p_i) + (Σ p_i²)²
    s2 = (p**2).sum(-1)
    jac = np.sqrt(np.maximum((p**2 * (1 - 2 * p)).sum(-1) + s2**2, 0.0))
    return float(entropy.mean()), float(p.max(-1).mean()), float(jac.mean())


@dataclass
class ScalingExperiment:
    d_ks: list[int]
    n_keys: int
    variance: list[float]  # var(q·k): grows like d_k
    variance_scaled: list[float]  # var(q·k/√d_k): stays near 1
    entropy: list[float]
    entropy_scaled: list[float]
    max_weight: list[float]
    max_weight_scaled: list[float]
    gradient: list[float]
    gradient_scaled: list[float]


def random_scaling(n_keys: int = 32, trials: int = 500, seed: int = 0, d_ks=D_KS) -> ScalingExperiment:
    """Softmax of q·kᵀ for random q, k with unit-variance entries, with and without ÷√d_k."""
    rng = np.random.default_rng(seed)
    out = {name: [] for name in ScalingExperiment.__dataclass_fields__ if name not in ("d_ks", "n_keys")}
    for d_k in d_ks:
        q = rng.standard_normal((trials, 1, d_k))
        k = rng.standard_normal((trials, n_keys, d_k))
        scores = (q @ k.transpose(0, 2, 1))[:, 0]  # (trials, n_keys)
        for suffix, s in (("", scores), ("_scaled", scores / np.sqrt(d_k))):
            ent, mx, grad = softmax_stats(s)
            out[f"variance{suffix}"].append(float(s.var()))
            out[f"entropy{suffix}"].append(ent)
            out[f"max_weight{suffix}"].append(mx)
            out[f"gradient{suffix}"].append(grad)
    return ScalingExperiment(list(d_ks), n_keys, **out)


@dataclass
class LayerScaling:
    """The same statistics on one model's real scores, per (kind, layer), over every head and real row."""

    kind: AttentionKind
    layer: int
    variance: float
    variance_scaled: float
    entropy: float
    entropy_unscaled: float  # what the softmax would give without ÷√d_k
    max_weight: float
    max_weight_unscaled: float


@on_model_device
@torch.inference_mode()
def model_scaling(model: Transformer, src_ids: list[int], decoder_input: list[int]) -> list[LayerScaling]:
    out = model(torch.tensor([src_ids]), torch.tensor([decoder_input]), return_intermediates=True)
    inter = out.intermediates
    rows = []
    for kind in AttentionKind:
        n = model.config.n_layers(kind)
        for layer in range(n):
            t = inter.trace(kind, layer)
            valid = torch.isfinite(t.masked[0]).cpu().numpy()  # (H, T_q, T_k)
            scores = t.scores[0].double().cpu().numpy()
            scaled = t.scaled[0].double().cpu().numpy()
            ent, mx, _ = softmax_stats(scaled, valid)
            ent_u, mx_u, _ = softmax_stats(scores, valid)
            rows.append(
                LayerScaling(kind, layer, float(scores[valid].var()), float(scaled[valid].var()), ent, ent_u, mx, mx_u)
            )
    return rows
