"""Heads as evidence: statistics over a held-out set, switching heads off, heads across training.

Everything is batched and teacher-forced: a head's effect on the pronoun is read at the
decoder row that writes il/elle, given the reference's earlier words, so one forward pass
over the probe set measures accuracy and loss together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..attention import AttentionKind
from ..corpus import Example
from ..decoding import require_eval
from ..evaluate import ProbeRows, probe_batches
from ..model import Transformer
from ..options import DEFAULT, CallOptions, HeadMask
from ..tokenizer import PAD_ID, Tokenizer
from .heads import STATISTICS, head_statistics


@dataclass
class ProbeSet:
    """Held-out pronoun sentences as ready batches: (src, tgt_in, tgt_out, rows) each."""

    batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[ProbeRows]]]
    n: int


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


@torch.inference_mode()
def measure(
    model: Transformer, ps: ProbeSet, options: CallOptions = DEFAULT, memories: list[torch.Tensor] | None = None
) -> Effect:
    """Pronoun accuracy and loss over the probe set. memories: the encoder's output per batch, when the
    options leave the encoder as it is (heads off only in the decoder), so that it is not run again."""
    require_eval(model)
    right = total = 0
    loss_sum, tokens = 0.0, 0
    for i, (src, tgt_in, tgt_out, rows) in enumerate(ps.batches):
        if memories is None:
            logits = model(src, tgt_in, options=options).logits
        else:
            logits = model.decode(tgt_in, memories[i], model.source_mask(src, options), options=options)
        loss_sum += float(
            F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum")
        )
        tokens += int((tgt_out != PAD_ID).sum())
        at = torch.tensor([r.cross_row for r in rows])
        b = torch.arange(len(rows))
        right += int((logits[b, at].argmax(-1) == tgt_out[b, at]).sum())
        total += len(rows)
    return Effect(right / max(total, 1), loss_sum / max(tokens, 1))


@dataclass(frozen=True)
class HeadEffect:
    kind: AttentionKind
    layer: int
    head: int
    accuracy_drop: float  # baseline accuracy − accuracy with this head off
    loss_rise: float  # loss with this head off − baseline loss


def rank_heads(model: Transformer, ps: ProbeSet) -> tuple[Effect, list[HeadEffect]]:
    """Switch each head off alone and measure what it costs; the most harmful first."""
    base = measure(model, ps)
    cfg = model.config
    with torch.inference_mode():
        memories = [model.encode(src) for src, _, _, _ in ps.batches]  # unchanged when a decoder head is off
    effects = []
    for kind in AttentionKind:
        n_layers = cfg.n_encoder_layers if kind.in_encoder else cfg.n_decoder_layers
        for layer in range(n_layers):
            for head in range(cfg.n_heads):
                options = CallOptions(head_mask=HeadMask.without(cfg, [(kind, layer, head)]))
                e = measure(model, ps, options, None if kind.in_encoder else memories)
                effects.append(HeadEffect(kind, layer, head, base.accuracy - e.accuracy, e.loss - base.loss))
    effects.sort(key=lambda h: (-h.accuracy_drop, -h.loss_rise))
    return base, effects


@torch.inference_mode()
def set_statistics(model: Transformer, ps: ProbeSet) -> dict[AttentionKind, dict[str, np.ndarray]]:
    """Head statistics averaged over the probe set's sentences (each on its own unpadded length)."""
    require_eval(model)
    sums: dict[AttentionKind, dict[str, np.ndarray]] = {}
    count = 0
    for src, tgt_in, _, _ in ps.batches:
        att = model(src, tgt_in, return_attention=True).attention
        S = (src != PAD_ID).sum(1).tolist()
        T = (tgt_in != PAD_ID).sum(1).tolist()
        for kind in AttentionKind:
            maps = torch.stack(att.of(kind), 1).numpy()  # (B, L, H, T_q, T_k)
            for i in range(len(S)):
                tq = S[i] if kind is AttentionKind.ENCODER else T[i]
                tk = T[i] if kind is AttentionKind.DECODER else S[i]
                stats = head_statistics(maps[i, :, :, :tq, :tk], kind)
                acc = sums.setdefault(kind, {name: np.zeros_like(stats[name]) for name in STATISTICS})
                for name in STATISTICS:
                    acc[name] = acc[name] + stats[name]
        count += len(S)
    return {kind: {name: v / max(count, 1) for name, v in stats.items()} for kind, stats in sums.items()}
