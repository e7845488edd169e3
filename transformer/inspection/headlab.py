"""Heads as evidence: statistics over a held-out set, switching heads off, heads across training.

Everything is batched and teacher-forced: a head's effect on the pronoun is read at the
decoder row that writes il/elle, given the reference's earlier words, so one forward pass
over the probe set measures accuracy and loss together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..attention import AttentionKind, HeadId
from ..corpus import Example
from ..decoding import model_device, require_eval
from ..evaluate import ProbeQuery, ProbeResult, ProbeRow, ProbeRows, probe_batches
from ..model import Transformer
from ..options import DEFAULT, CallOptions, HeadMask
from ..tokenizer import Tokenizer
from . import on_model_device
from .heads import STATISTICS, head_statistics


@dataclass
class ProbeSet:
    """Held-out pronoun sentences as ready batches: (src, tgt_in, tgt_out, rows) each."""

    batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[ProbeRows]]]
    n: int

    def on(self, model: Transformer) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[ProbeRows]]]:
        """The batches on the model's device (the set itself stays where it was built: one set, any model)."""
        dev = model_device(model)
        return [(src.to(dev), tgt_in.to(dev), tgt_out.to(dev), rows) for src, tgt_in, tgt_out, rows in self.batches]


def probe_set(tokenizer: Tokenizer, examples: list[Example], n: int = 300, batch_size: int = 300) -> ProbeSet:
    pronoun = [ex for ex in examples if ex.pronoun >= 0][:n]
    batches, count = [], 0
    for exs, rows, src, tgt_in, tgt_out in probe_batches(tokenizer, pronoun, batch_size):
        batches.append((src, tgt_in, tgt_out, rows))
        count += len(exs)
    return ProbeSet(batches, count)


@dataclass(frozen=True)
class Effect:
    accuracy: float  # share of sentences whose pronoun row predicts the reference pronoun (teacher forcing)
    loss: float  # mean cross-entropy per target piece


@on_model_device
@torch.inference_mode()
def measure(
    model: Transformer, ps: ProbeSet, options: CallOptions = DEFAULT, memories: list[torch.Tensor] | None = None
) -> Effect:
    """Pronoun accuracy and loss over the probe set. memories: the encoder's output per batch, when the
    options leave the encoder as it is (heads off only in the decoder), so that it is not run again."""
    require_eval(model)
    pad = model.config.pad_id
    right = total = 0
    loss_sum, tokens = 0.0, 0
    for i, (src, tgt_in, tgt_out, rows) in enumerate(ps.on(model)):
        if memories is None:
            logits = model(src, tgt_in, options=options).logits
        else:
            logits = model.decode(tgt_in, memories[i], model.source_mask(src, options), options=options)
        loss_sum += float(F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad, reduction="sum"))
        tokens += int((tgt_out != pad).sum())
        at = torch.tensor([r.cross_row for r in rows])
        b = torch.arange(len(rows))
        right += int((logits[b, at].argmax(-1) == tgt_out[b, at]).sum())
        total += len(rows)
    return Effect(right / max(total, 1), loss_sum / max(tokens, 1))


@dataclass(frozen=True)
class HeadEffect:
    head: HeadId
    accuracy_drop: float  # baseline accuracy − accuracy with this head off
    loss_rise: float  # loss with this head off − baseline loss


@on_model_device
def rank_heads(
    model: Transformer, ps: ProbeSet, progress: Callable[[int, int], None] | None = None
) -> tuple[Effect, list[HeadEffect]]:
    """Switch each head off alone and measure what it costs; the most harmful first.

    progress(done, total) is called after each head (it changes no result)."""
    base = measure(model, ps)
    with torch.inference_mode():
        memories = [model.encode(src) for src, _, _, _ in ps.on(model)]  # unchanged when a decoder head is off
    effects = []
    heads = HeadId.all(model.config)
    for done, head in enumerate(heads, 1):
        options = CallOptions(head_mask=HeadMask.without(model.config, [head]))
        e = measure(model, ps, options, None if head.kind.in_encoder else memories)
        effects.append(HeadEffect(head, base.accuracy - e.accuracy, e.loss - base.loss))
        if progress is not None:
            progress(done, len(heads))
    effects.sort(key=lambda h: (-h.accuracy_drop, -h.loss_rise))
    return base, effects


def pronoun_query(kind: AttentionKind) -> ProbeQuery | None:
    """The probe's row of the pronoun for a kind (the encoder's "it", the decoder row writing il/elle), if any."""
    return ProbeQuery.of(kind, ProbeRow.PRONOUN)


def probe_ranking(probe: ProbeResult, query: ProbeQuery) -> list[tuple[HeadId, float]]:
    """Every head of the query's kind with its probe score, the best first."""
    arr = probe.scores[query]  # (L, H)
    heads = [HeadId(query.kind, layer, head) for layer in range(arr.shape[0]) for head in range(arr.shape[1])]
    return sorted(((h, float(arr[h.layer, h.head])) for h in heads), key=lambda x: -x[1])


def pronoun_scores(probe: ProbeResult) -> dict[HeadId, float]:
    """head -> the share of sentences in which its pronoun row weighs the antecedent highest."""
    out: dict[HeadId, float] = {}
    for kind in AttentionKind:
        q = pronoun_query(kind)
        if q is not None:
            out.update(probe_ranking(probe, q))
    return out


BYSTANDER_SCORE = 0.8  # a head that finds the antecedent in at least this share of sentences ...
BYSTANDER_DROP = 0.005  # ... yet costs less than this pronoun accuracy when switched off alone


def bystanders(
    effects: list[HeadEffect],
    scores: dict[HeadId, float],
    min_score: float = BYSTANDER_SCORE,
    max_drop: float = BYSTANDER_DROP,
) -> list[HeadId]:
    """Heads that look like the mechanism (a high probe score) but which the model does not need: switching
    one off alone leaves pronoun accuracy within max_drop (attention is not explanation)."""
    return [e.head for e in effects if scores.get(e.head, -1.0) >= min_score and abs(e.accuracy_drop) < max_drop]


def statistics_rows(
    stats: dict[AttentionKind, dict[str, np.ndarray]], coreference: dict[HeadId, float] | None = None
) -> list[tuple[HeadId, dict[str, float | None]]]:
    """One row per head: every statistic (None where undefined, e.g. distance for cross-attention), and its
    pronoun probe score when given (none for decoder self-attention, which the probe does not read)."""
    rows = []
    for kind in AttentionKind:
        L, H = stats[kind]["entropy"].shape
        for layer in range(L):
            for h in range(H):
                head = HeadId(kind, layer, h)
                values = {name: _number(stats[kind][name][layer, h]) for name in STATISTICS}
                if coreference is not None and kind is not AttentionKind.DECODER:
                    values["coreference"] = coreference.get(head)
                rows.append((head, values))
    return rows


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


@on_model_device
@torch.inference_mode()
def head_map(model: Transformer, src: list[int], dec: list[int], head: HeadId) -> np.ndarray:
    """One head's (T_q, T_k) weights on a teacher-forced pair: encoder input src, decoder input dec."""
    require_eval(model)
    att = model(torch.tensor([src]), torch.tensor([dec]), return_attention=True)
    return att.attention.of(head.kind)[head.layer][0, head.head].float().cpu().numpy()


@on_model_device
@torch.inference_mode()
def set_statistics(model: Transformer, ps: ProbeSet) -> dict[AttentionKind, dict[str, np.ndarray]]:
    """Head statistics averaged over the probe set's sentences (each on its own unpadded length)."""
    require_eval(model)
    sums: dict[AttentionKind, dict[str, np.ndarray]] = {}
    count = 0
    for src, tgt_in, _, _ in ps.on(model):
        att = model(src, tgt_in, return_attention=True).attention
        S = (src != model.config.pad_id).sum(1).tolist()
        T = (tgt_in != model.config.pad_id).sum(1).tolist()
        for kind in AttentionKind:
            maps = torch.stack(att.of(kind), 1).cpu().numpy()  # (B, L, H, T_q, T_k)
            for i in range(len(S)):
                tq = S[i] if kind is AttentionKind.ENCODER else T[i]
                tk = T[i] if kind is AttentionKind.DECODER else S[i]
                stats = head_statistics(maps[i, :, :, :tq, :tk], kind)
                acc = sums.setdefault(kind, {name: np.zeros_like(stats[name]) for name in STATISTICS})
                for name in STATISTICS:
                    acc[name] = acc[name] + stats[name]
        count += len(S)
    return {kind: {name: v / max(count, 1) for name, v in stats.items()} for kind, stats in sums.items()}
