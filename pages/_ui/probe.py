"""Probe scores as the pages use them: marks on heads, default heads."""

from __future__ import annotations

from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint
from transformer.inspection.card import best_probe_head, probe_scores

MARK_THRESHOLD = 0.8


def probe_kind(kind: AttentionKind) -> AttentionKind:
    """The probe reads encoder rows and cross rows; decoder self-attention has no probe row."""
    return AttentionKind.ENCODER if AttentionKind(kind).in_encoder else AttentionKind.CROSS


def probe_marks(
    ckpt: Checkpoint, kind: AttentionKind, threshold: float = MARK_THRESHOLD
) -> dict[tuple[int, int], float]:
    """(layer, head) -> score for heads whose pronoun row finds the antecedent in >= threshold of sentences."""
    if AttentionKind(kind) is AttentionKind.DECODER:
        return {}
    return {(s.layer, s.head): s.score for s in probe_scores(ckpt.card, ckpt.config, kind) if s.score >= threshold}


def default_head(ckpt: Checkpoint, kind: AttentionKind) -> tuple[int, int]:
    """Where a picker opens: the probe's best head for the kind, else the last layer's head 0."""
    kind = AttentionKind(kind)
    best = None if kind is AttentionKind.DECODER else best_probe_head(ckpt.card, ckpt.config, kind)
    if best is not None:
        return best.layer, best.head
    n_layers = ckpt.config.n_encoder_layers if kind.in_encoder else ckpt.config.n_decoder_layers
    return n_layers - 1, 0
