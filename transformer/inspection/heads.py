"""What each head does, measured from its maps: statistics per head, and one sentence per layer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..attention import AttentionKind

STATISTICS = ("entropy", "distance", "self", "previous", "next", "eos")


def head_statistics(maps: np.ndarray, kind: AttentionKind) -> dict[str, np.ndarray]:
    """Per head, averaged over query rows: (L, H) arrays.

    maps: (L, H, T_q, T_k) weights. entropy: of each row, in bits. distance: mean |i − j| under the
    row's weights. self / previous / next: the weight on keys i, i − 1, i + 1. eos: the weight on the
    last key (</s> of the source). Positions are only comparable within one sequence, so distance,
    self, previous and next are NaN for cross-attention.
    """
    maps = np.asarray(maps, dtype=np.float64)
    L, H, Tq, Tk = maps.shape
    p = np.clip(maps, 1e-12, 1.0)
    out = {"entropy": -(maps * np.log2(p)).sum(-1).mean(-1)}
    if AttentionKind(kind) is AttentionKind.CROSS:
        nan = np.full((L, H), np.nan)
        out.update(distance=nan, self=nan, previous=nan, next=nan)
    else:
        i = np.arange(Tq)[:, None]
        j = np.arange(Tk)[None, :]
        out["distance"] = (maps * np.abs(i - j)).sum(-1).mean(-1)
        for name, offset in (("self", 0), ("previous", -1), ("next", 1)):
            hit = (j == i + offset).astype(float)  # (T_q, T_k)
            rows = hit.sum(-1) > 0  # rows that have such a key
            out[name] = (maps * hit).sum(-1)[..., rows].mean(-1) if rows.any() else np.full((L, H), np.nan)
    out["eos"] = maps[..., -1].mean(-1)
    return out


def argmax_shares(maps: np.ndarray, kind: AttentionKind) -> dict[str, np.ndarray]:
    """Per head: the share of rows whose strongest key is self, the previous, the next, the last (</s>),
    the first, or one and the same key ("same": the key most rows pick)."""
    maps = np.asarray(maps)
    L, H, Tq, Tk = maps.shape
    top = maps.argmax(-1)  # (L, H, T_q)
    i = np.arange(Tq)
    counts = np.apply_along_axis(lambda r: np.bincount(r, minlength=Tk), -1, top)  # (L, H, T_k)
    shares = {"eos": (top == Tk - 1).mean(-1), "first": (top == 0).mean(-1), "same": counts.max(-1) / Tq}
    if AttentionKind(kind) is not AttentionKind.CROSS:
        shares["self"] = (top == i).mean(-1)
        shares["previous"] = (top[..., 1:] == i[1:] - 1).mean(-1) if Tq > 1 else np.zeros((L, H))
        shares["next"] = (top[..., :-1] == i[:-1] + 1).mean(-1) if Tq > 1 else np.zeros((L, H))
    else:  # an alignment moves forward along the source as the target is written
        moves = np.diff(top, axis=-1) >= 0
        shares["monotone"] = moves.mean(-1) if Tq > 1 else np.zeros((L, H))
    return shares


@dataclass(frozen=True)
class HeadSummary:
    """One head's dominant pattern: what most of its rows' strongest key is, and the share of such rows.

    pattern: self | previous | next | eos | first | same (one key: `key`) | monotone (cross: moves forward
    along the source) | spread (no pattern, high entropy) | varies (focused, on different keys).
    """

    head: int
    pattern: str
    share: float
    entropy: float  # mean row entropy, bits
    key: int | None = None  # the key index for "same"


# When two patterns tie, the more specific one names the head.
_ORDER = ("eos", "first", "self", "previous", "next", "monotone", "same")


def summarize_layer(
    maps: np.ndarray, kind: AttentionKind, layer: int, threshold: float = 0.3, spread_bits: float = 1.5
) -> list[HeadSummary]:
    """For each head of one layer, the pattern that at least `threshold` of its rows follow."""
    one = maps[layer : layer + 1]
    shares = argmax_shares(one, kind)
    entropy = head_statistics(one, kind)["entropy"][0]
    top = np.asarray(one).argmax(-1)[0]  # (H, T_q)
    out = []
    for h in range(one.shape[1]):
        candidates = [(n, float(shares[n][0, h])) for n in _ORDER if n in shares]
        name, share = max(candidates, key=lambda x: x[1])  # max keeps the first of equal shares
        key = None
        if share < threshold:
            name, share = ("spread" if entropy[h] > spread_bits else "varies"), float("nan")
        elif name == "same":
            key = int(np.bincount(top[h]).argmax())
        out.append(HeadSummary(h, name, share, float(entropy[h]), key))
    return out


def rollout(maps: np.ndarray, residual: bool = True) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020) through a self-attention stack.

    maps: (L, H, T, T) of one sequence. Heads are averaged, the identity is added for the residual
    connection and rows renormalised: Ã_l = (Ā_l + I) / 2; rollout = Ã_L · … · Ã_1. Rows sum to 1.
    Returns (L, T, T): the rollout up to each layer.
    """
    maps = np.asarray(maps, dtype=np.float64)
    L, _, T, _ = maps.shape
    acc = np.eye(T)
    out = []
    for layer in range(L):
        a = maps[layer].mean(0)
        if residual:
            a = 0.5 * (a + np.eye(T))
        a = a / a.sum(-1, keepdims=True)
        acc = a @ acc
        out.append(acc)
    return np.stack(out)
