"""Head importance and pruning curves (Michel et al., 2019, "Are Sixteen Heads Really Better than One?").

A float gate ξ_h multiplies each head's output before W_O (:class:`~transformer.options.HeadGate`, a value
of the call: nothing is set on the shared model). With every ξ = 1 the model is as trained, and

    I_h = E_x |∂L(x)/∂ξ_h|

(the mean cross-entropy per target piece of a batch x of held-out sentences, teacher-forced; the absolute
gradient of each batch, averaged over the batches) estimates how much the loss would change if the head
were removed. Pruning then switches heads off (:class:`~transformer.options.HeadMask`) in increasing order
of importance, and measures chrF of greedy translations of held-out sentences and, where the checkpoint has
the coreference probe set, the pronoun accuracy, against the number of heads kept: for each kind of
attention alone, and for all heads together (one order over every head, by raw importance).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..attention import AttentionKind, HeadId
from ..decoding import greedy_decode_batch, model_device, require_eval
from ..model import Transformer
from ..options import CallOptions, HeadGate, HeadMask
from ..tokenizer import TokenizerBase
from . import on_model_device
from .headlab import ProbeSet, measure
from .heldout import batches, fitting

Progress = Callable[[float], None] | None


def gated_loss(model: Transformer, src, tgt_in, tgt_out, gate: HeadGate) -> torch.Tensor:
    """Mean cross-entropy per target piece with the heads gated by ξ (a differentiable scalar)."""
    logits = model(src, tgt_in, options=CallOptions(head_gate=gate)).logits
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=model.config.pad_id)


def head_gradient(
    model: Transformer, src, tgt_in, tgt_out, gate: HeadGate | None = None
) -> dict[AttentionKind, np.ndarray]:
    """∂L/∂ξ per kind, (L, H) each, at ξ = gate (default: every ξ = 1). The model's own parameters get no
    gradient (torch.autograd.grad with respect to the gates only)."""
    require_eval(model)
    with torch.inference_mode(False), torch.enable_grad():
        gate = gate or HeadGate.ones(model.config, model_device(model))
        src, tgt_in, tgt_out = (t.clone() for t in (src, tgt_in, tgt_out))  # not inference tensors
        loss = gated_loss(model, src, tgt_in, tgt_out, gate)
        kinds = list(gate.gates)
        grads = torch.autograd.grad(loss, [gate.gates[k] for k in kinds])
    return {k: g.detach().double().cpu().numpy() for k, g in zip(kinds, grads)}


@dataclass(frozen=True)
class Importance:
    """I_h per kind, (L, H) each; measured over n_sentences in n_batches."""

    scores: dict[AttentionKind, np.ndarray]
    n_sentences: int
    n_batches: int

    def of(self, head: HeadId) -> float:
        return float(self.scores[AttentionKind(head.kind)][head.layer, head.head])

    def order(self, kind: AttentionKind | None = None) -> list[HeadId]:
        """The heads of a kind (every head when None), least important first (the pruning order); ties keep
        the model's order of heads."""
        heads = [h for k in AttentionKind for h in self._heads(k) if kind is None or k is AttentionKind(kind)]
        return sorted(heads, key=self.of)

    def _heads(self, kind: AttentionKind) -> list[HeadId]:
        L, H = self.scores[kind].shape
        return [HeadId(kind, layer, h) for layer in range(L) for h in range(H)]


@on_model_device
def head_importance(
    model: Transformer, tokenizer: TokenizerBase, pairs, progress: Progress = None, batch_size: int = 8
) -> Importance:
    """Michel et al.'s I_h over (source, reference) pairs, in batches of batch_size sentences."""
    require_eval(model)
    cfg = model.config
    items = fitting(tokenizer, pairs, cfg.max_len)
    total = {k: np.zeros((cfg.n_layers(k), cfg.n_heads)) for k in AttentionKind}
    n = nb = 0
    for src, tgt_in, tgt_out in batches(items, cfg.pad_id, batch_size, model_device(model)):
        for k, g in head_gradient(model, src, tgt_in, tgt_out).items():
            total[k] += np.abs(g)
        n += len(src)
        nb += 1
        if progress is not None:
            progress(n / max(len(items), 1))
    return Importance({k: v / max(nb, 1) for k, v in total.items()}, n, nb)


def pruning_points(n_heads: int, n_points: int = 7) -> list[int]:
    """How many heads are pruned at each point of a curve: 0, ..., n_heads, n_points at most, half included."""
    points = {round(i * n_heads / (n_points - 1)) for i in range(n_points)} | {0, n_heads // 2, n_heads}
    return sorted(p for p in points if 0 <= p <= n_heads)


@dataclass(frozen=True)
class PruningCurve:
    """Heads pruned in order; at each point the heads kept, chrF and pronoun accuracy (None without a probe set)."""

    kind: AttentionKind | None  # None: every head, all kinds together
    order: tuple[HeadId, ...]  # the pruning order, least important first
    pruned: tuple[int, ...]
    chrf: tuple[float, ...]
    accuracy: tuple[float | None, ...]

    @property
    def kept(self) -> tuple[int, ...]:
        return tuple(len(self.order) - p for p in self.pruned)

    def off(self, i: int) -> list[HeadId]:
        """The heads switched off at point i."""
        return list(self.order[: self.pruned[i]])

    def half_cost(self) -> tuple[float, float | None]:
        """(chrF lost, pronoun accuracy lost) when half of the heads are pruned."""
        i = self.pruned.index(len(self.order) // 2)
        acc = None if self.accuracy[0] is None else self.accuracy[0] - self.accuracy[i]
        return self.chrf[0] - self.chrf[i], acc


def translate_chrf(
    model: Transformer, tokenizer: TokenizerBase, pairs, options: CallOptions, batch_size: int = 64
) -> float:
    """chrF (sacrebleu) of greedy translations of the pairs' sources under options."""
    import sacrebleu

    sources = [s for s, _ in pairs]
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    hyps = [""] * len(sources)
    limit = model.config.max_len - 1
    for b in range(0, len(order), batch_size):
        idx = order[b : b + batch_size]
        ids = [tokenizer.source_ids(sources[i], model.config.max_len) for i in idx]
        out = greedy_decode_batch(model, ids, min(limit, 2 * max(map(len, ids)) + 10), options)
        for i, h in zip(idx, out):
            hyps[i] = tokenizer.decode(h)
    return float(sacrebleu.corpus_chrf(hyps, [[t for _, t in pairs]]).score)


@on_model_device
@torch.inference_mode()
def pruning_curve(
    model: Transformer,
    tokenizer: TokenizerBase,
    pairs,
    importance: Importance,
    kind: AttentionKind | None = None,
    probe: ProbeSet | None = None,
    n_points: int = 7,
    progress: Progress = None,
) -> PruningCurve:
    """Prune the heads of kind (all when None) least important first; chrF and pronoun accuracy at each point."""
    require_eval(model)
    order = tuple(importance.order(kind))
    points = pruning_points(len(order), n_points)
    chrf, accuracy = [], []
    for i, p in enumerate(points):
        options = CallOptions(head_mask=HeadMask.without(model.config, order[:p])) if p else CallOptions()
        chrf.append(translate_chrf(model, tokenizer, pairs, options))
        accuracy.append(None if probe is None else measure(model, probe, options).accuracy)
        if progress is not None:
            progress((i + 1) / len(points))
    return PruningCurve(
        None if kind is None else AttentionKind(kind), order, tuple(points), tuple(chrf), tuple(accuracy)
    )


CURVE_KINDS: tuple[AttentionKind | None, ...] = (*AttentionKind, None)


def pruning_curves(
    model: Transformer,
    tokenizer: TokenizerBase,
    pairs,
    importance: Importance,
    probe: ProbeSet | None = None,
    n_points: int = 7,
    progress: Progress = None,
) -> list[PruningCurve]:
    """A curve for each kind and one for every head together (CURVE_KINDS' order); progress over all."""
    out = []
    for j, kind in enumerate(CURVE_KINDS):

        def step(f: float, j: int = j) -> None:
            if progress is not None:
                progress((j + f) / len(CURVE_KINDS))

        out.append(pruning_curve(model, tokenizer, pairs, importance, kind, probe, n_points, step))
    return out
