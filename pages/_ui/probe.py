"""Probe scores as the pages use them: marks on heads, default heads."""

from __future__ import annotations

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint
from transformer.inspection.card import best_probe_head, probe_scores

MARK_THRESHOLD = 0.8


def probe_marks(ckpt: Checkpoint, kind: AttentionKind, threshold: float = MARK_THRESHOLD) -> dict[HeadId, float]:
    """head -> score for heads whose pronoun row finds the antecedent in >= threshold of sentences."""
    if AttentionKind(kind) is AttentionKind.DECODER:
        return {}
    return {s.head: s.score for s in probe_scores(ckpt.card, ckpt.config, kind) if s.score >= threshold}


def default_head(ckpt: Checkpoint, kind: AttentionKind) -> HeadId:
    """Where a picker opens: the probe's best head for the kind, else the last layer's head 0."""
    kind = AttentionKind(kind)
    best = None if kind is AttentionKind.DECODER else best_probe_head(ckpt.card, ckpt.config, kind)
    if best is not None:
        return best.head
    return HeadId(kind, ckpt.config.n_layers(kind) - 1, 0)


ROUTE_THRESHOLD = 0.8


def route_statement(ckpt: Checkpoint, tr) -> str | None:
    """Where this checkpoint decides il/elle, in one sentence built from its card's probe scores."""
    enc = best_probe_head(ckpt.card, ckpt.config, AttentionKind.ENCODER)
    cross = best_probe_head(ckpt.card, ckpt.config, AttentionKind.CROSS)
    if enc is None or cross is None:
        return None
    values = dict(
        enc_layer=enc.head.layer,
        enc_head=enc.head.head,
        enc_score=enc.score,
        cross_layer=cross.head.layer,
        cross_head=cross.head.head,
        cross_score=cross.score,
    )
    if enc.score >= ROUTE_THRESHOLD:
        text = tr("route.encoder", **values)
    elif cross.score >= ROUTE_THRESHOLD:
        text = tr("route.cross", **values)
    else:
        text = tr("route.none", **values)
    train = ckpt.card.get("train_config") if isinstance(ckpt.card, dict) else None
    if isinstance(train, dict) and isinstance(train.get("align_pronoun"), (int, float)) and train["align_pronoun"] > 0:
        text += " " + tr("route.supervised")
    return text
