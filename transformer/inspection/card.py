"""What a checkpoint's card says about its heads, read defensively (a card is data from disk)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..attention import AttentionKind
from ..config import TransformerConfig


@dataclass(frozen=True)
class ProbeScore:
    kind: AttentionKind
    query: str  # "pronoun" | "cue"
    layer: int
    head: int
    score: float


def probe_scores(card: dict[str, Any], config: TransformerConfig, kind: AttentionKind, query: str = "pronoun"):
    """The coreference probe's scores recorded in the card for one kind of row, best first.

    Malformed entries and heads the model does not have are skipped.
    """
    kind = AttentionKind(kind)
    evaluation = card.get("evaluation") if isinstance(card, dict) else None
    heads = evaluation.get("heads", []) if isinstance(evaluation, dict) else []
    n_layers = config.n_encoder_layers if kind.in_encoder else config.n_decoder_layers
    picked = []
    for h in heads if isinstance(heads, list) else []:
        try:
            if h.get("kind") == kind.value and h.get("query") == query:
                entry = ProbeScore(kind, query, int(h["layer"]), int(h["head"]), float(h["score"]))
                if 0 <= entry.layer < n_layers and 0 <= entry.head < config.n_heads and 0.0 <= entry.score <= 1.0:
                    picked.append(entry)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
    return sorted(picked, key=lambda h: -h.score)


def best_probe_head(card: dict[str, Any], config: TransformerConfig, kind: AttentionKind, query: str = "pronoun"):
    """The best head for one row kind, or None when the card has no probe scores."""
    scores = probe_scores(card, config, kind, query)
    return scores[0] if scores else None
