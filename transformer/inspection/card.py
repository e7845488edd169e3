"""What a checkpoint's card says about its heads, read defensively (a card is data from disk)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..attention import AttentionKind, HeadId
from ..config import TransformerConfig
from ..evaluate import ProbeRow
from ..provenance import coreference_applies, target_language


@dataclass(frozen=True)
class ProbeScore:
    head: HeadId
    query: ProbeRow
    score: float


def probe_scores(
    card: dict[str, Any], config: TransformerConfig, kind: AttentionKind, query: ProbeRow = ProbeRow.PRONOUN
) -> list[ProbeScore]:
    """The coreference probe's scores recorded in the card for one kind of row, best first.

    Malformed entries and heads the model does not have are skipped.
    """
    kind, query = AttentionKind(kind), ProbeRow(query)
    evaluation = card.get("evaluation") if isinstance(card, dict) else None
    heads = evaluation.get("heads", []) if isinstance(evaluation, dict) else []
    picked = []
    for h in heads if isinstance(heads, list) else []:
        try:
            if h.get("kind") == kind.value and h.get("query") == query.value:
                entry = ProbeScore(HeadId(kind, int(h["layer"]), int(h["head"])), query, float(h["score"]))
                if entry.head.in_model(config) and 0.0 <= entry.score <= 1.0:
                    picked.append(entry)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
    return sorted(picked, key=lambda h: -h.score)


def best_probe_head(
    card: dict[str, Any], config: TransformerConfig, kind: AttentionKind, query: ProbeRow = ProbeRow.PRONOUN
) -> ProbeScore | None:
    """The best head for one row kind, or None when the card has no probe scores."""
    scores = probe_scores(card, config, kind, query)
    return scores[0] if scores else None


ROUTE_THRESHOLD = 0.8  # a pronoun row that finds the antecedent in this share of held-out sentences decides


def route_kind(card: dict[str, Any], config: TransformerConfig, threshold: float = ROUTE_THRESHOLD) -> AttentionKind:
    """Where the checkpoint decides il/elle, by its card's probe: the encoder when an encoder head's "it" row
    finds the antecedent (>= threshold), else cross-attention (the route of most of our models, and where
    the pronoun is written; also the answer for a card without probe scores)."""
    enc = best_probe_head(card, config, AttentionKind.ENCODER)
    return AttentionKind.ENCODER if enc is not None and enc.score >= threshold else AttentionKind.CROSS


def has_probe_set(card: dict[str, Any]) -> bool:
    """Whether held-out probe sentences can be generated for the checkpoint: not when it was trained on a file,
    nor for a model whose target language is not French (an import's, or ours into Chinese: the probe sentences
    are English → French, their pronoun rows il/elle)."""

    train = card.get("train_config") if isinstance(card, dict) else None
    if isinstance(train, dict) and train.get("data_file"):
        return False
    return coreference_applies(card) and target_language(card) in ("fr", None)
