"""Attention scoring functions side by side, and restricted (windowed) self-attention.

- dot product (Luong "dot", the Transformer's core):   score(q, k) = qᵀk            (÷√d_k when scaled)
- general (Luong "general", multiplicative):            score(q, k) = qᵀ W k
- additive (Bahdanau, concat):                          score(q, k) = vᵀ tanh(W₁q + W₂k)

§3.2.1: additive attention outperforms unscaled dot products for large d_k, whose softmax
saturates; scaling by 1/√d_k fixes that while keeping the speed of matrix multiplication.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ..decoding import greedy_decode, require_eval
from ..model import Transformer
from ..options import CallOptions
from ..tokenizer import Tokenizer
from . import on_model_device
from .scaling import softmax_stats


def dot_scores(q: Tensor, k: Tensor, scaled: bool = True) -> Tensor:
    """q (n_q, d_k), k (n_k, d_k) -> (n_q, n_k)."""
    s = q @ k.transpose(-2, -1)
    return s / k.size(-1) ** 0.5 if scaled else s


class GeneralScorer(nn.Module):
    """score(q, k) = qᵀ W k; d_k² parameters. W starts as N(0, 1/d_k) entries."""

    def __init__(self, d_k: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(d_k, d_k) / d_k**0.5)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        """q (n_q, d_k), k (n_k, d_k) -> (n_q, n_k)."""
        return q @ self.w @ k.transpose(-2, -1)


class AdditiveScorer(nn.Module):
    """score(q, k) = vᵀ tanh(W₁q + W₂k); 2·d_k·d_a + d_a parameters (Bahdanau et al., 2015)."""

    def __init__(self, d_k: int, d_a: int | None = None) -> None:
        super().__init__()
        d_a = d_a or d_k
        self.w1 = nn.Linear(d_k, d_a, bias=False)
        self.w2 = nn.Linear(d_k, d_a, bias=False)
        self.v = nn.Linear(d_a, 1, bias=False)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        """q (n_q, d_k), k (n_k, d_k) -> (n_q, n_k). The hidden (n_q, n_k, d_a) tensor is why it is slower."""
        return self.v(torch.tanh(self.w1(q)[:, None, :] + self.w2(k)[None, :, :])).squeeze(-1)


def parameter_counts(d_k: int, d_a: int | None = None) -> dict[str, int]:
    d_a = d_a or d_k
    return {"dot": 0, "scaled_dot": 0, "general": d_k * d_k, "additive": 2 * d_k * d_a + d_a}


@dataclass
class Timing:
    n: list[int]
    d_k: list[int]
    ms: dict[str, list[float]]  # scorer -> milliseconds per call, one per (n, d_k) pair


def _median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times) * 1e3)


@torch.inference_mode()
def time_scorers(sizes: list[tuple[int, int]], repeat: int = 5, seed: int = 0) -> Timing:
    """Milliseconds to score n queries against n keys, per scorer, on this machine."""
    gen = torch.Generator().manual_seed(seed)
    ms: dict[str, list[float]] = {"scaled_dot": [], "general": [], "additive": []}
    for n, d_k in sizes:
        q, k = torch.randn(n, d_k, generator=gen), torch.randn(n, d_k, generator=gen)
        general, additive = GeneralScorer(d_k), AdditiveScorer(d_k)
        ms["scaled_dot"].append(_median_ms(lambda q=q, k=k: dot_scores(q, k), repeat))
        ms["general"].append(_median_ms(lambda q=q, k=k, g=general: g(q, k), repeat))
        ms["additive"].append(_median_ms(lambda q=q, k=k, a=additive: a(q, k), repeat))
    return Timing([n for n, _ in sizes], [d for _, d in sizes], ms)


@dataclass
class Saturation:
    d_ks: list[int]
    max_weight: dict[str, list[float]]  # scorer -> mean largest softmax weight
    entropy: dict[str, list[float]]


@torch.inference_mode()
def saturation(d_ks=(4, 16, 64, 256, 1024), n_keys: int = 32, trials: int = 200, seed: int = 0) -> Saturation:
    """Softmax statistics of each scorer on random unit-variance q, k (freshly initialised scorers)."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    mx: dict[str, list[float]] = {"dot": [], "scaled_dot": [], "general": [], "additive": []}
    ent: dict[str, list[float]] = {k: [] for k in mx}
    for d_k in d_ks:
        q = torch.randn(trials, d_k, generator=gen)
        k = torch.randn(n_keys, d_k, generator=gen)
        scorers = {
            "dot": lambda q, k: dot_scores(q, k, scaled=False),
            "scaled_dot": dot_scores,
            "general": GeneralScorer(d_k),
            "additive": AdditiveScorer(d_k),
        }
        for name, scorer in scorers.items():
            e, m, _ = softmax_stats(scorer(q, k).double().cpu().numpy())
            mx[name].append(m)
            ent[name].append(e)
    return Saturation(list(d_ks), mx, ent)


@dataclass
class WindowRun:
    window: int | None
    translation: str
    maps: np.ndarray  # (L, H, S, S) encoder self-attention
    pronoun: str | None


@on_model_device
@torch.inference_mode()
def restricted_runs(model: Transformer, tokenizer: Tokenizer, text: str, windows: list[int | None]) -> list[WindowRun]:
    """Translate with the encoder's self-attention restricted to |i − j| <= r, for each r (None = full)."""
    from ..evaluate import french_pronoun

    require_eval(model)
    ids = tokenizer.source_ids(text, model.config.max_len)
    src = torch.tensor([ids])
    runs = []
    for r in windows:
        options = CallOptions(window=r)
        att = model(src, src[:, :1], options=options, return_attention=True).attention.encoder
        tokens = greedy_decode(model, src, 2 * len(ids) + 8, return_attention=False, options=options).tokens
        translation = tokenizer.decode(tokens)
        maps = torch.stack([a[0] for a in att]).cpu().numpy()  # (L, H, S, S)
        runs.append(WindowRun(r, translation, maps, french_pronoun(translation)))
    return runs


def windowed_attention(q: Tensor, k: Tensor, v: Tensor, window: int) -> Tensor:
    """Restricted self-attention computed in O(n·r): each query scores only its 2r + 1 neighbours.

    q, k, v: (n, d). Keys beyond the ends are padded and masked. Returns (n, d).
    """
    n, d = q.shape
    width = 2 * window + 1
    pad = torch.zeros(window, d, dtype=k.dtype)
    kp, vp = torch.cat([pad, k, pad]), torch.cat([pad, v, pad])
    kw = kp.unfold(0, width, 1).transpose(1, 2)  # (n, width, d) views, no copy
    vw = vp.unfold(0, width, 1).transpose(1, 2)
    scores = torch.einsum("nd,nwd->nw", q, kw) / d**0.5  # (n, width)
    pos = torch.arange(n)[:, None] + torch.arange(width)[None, :] - window
    scores = scores.masked_fill((pos < 0) | (pos >= n), float("-inf"))
    return torch.einsum("nw,nwd->nd", scores.softmax(-1), vw)


def full_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    return (dot_scores(q, k)).softmax(-1) @ v


@dataclass
class Complexity:
    n: list[int]
    window: int
    ms_full: list[float]
    ms_restricted: list[float]
    mb_full: list[float]  # bytes of the new tensors the call allocated, in MB
    mb_restricted: list[float]


class _Allocations(TorchDispatchMode):
    """Counts the bytes of every new storage the ops inside the block allocate (views are free)."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0
        self.seen: set[int] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, Tensor):
                storage = t.untyped_storage()
                if storage.data_ptr() not in self.seen:
                    self.seen.add(storage.data_ptr())
                    self.bytes += storage.nbytes()
        return out


def _allocated_mb(fn) -> float:
    with _Allocations() as counter:
        fn()
    return counter.bytes / 2**20


@torch.inference_mode()
def complexity(ns=(128, 256, 512, 1024, 2048), d: int = 64, window: int = 16, repeat: int = 3) -> Complexity:
    """Measured time and memory of one self-attention call, full (O(n²·d)) against restricted (O(n·r·d))."""
    gen = torch.Generator().manual_seed(0)
    out = Complexity(list(ns), window, [], [], [], [])
    for n in ns:
        qkv = [torch.randn(n, d, generator=gen) for _ in range(3)]
        full = lambda qkv=qkv: full_attention(*qkv)  # noqa: E731
        restricted = lambda qkv=qkv: windowed_attention(*qkv, window)  # noqa: E731
        out.ms_full.append(_median_ms(full, repeat))
        out.ms_restricted.append(_median_ms(restricted, repeat))
        out.mb_full.append(_allocated_mb(full))
        out.mb_restricted.append(_allocated_mb(restricted))
    return out
