"""What the app asks of an imported checkpoint's card: whether it is an import, its target language, whether
our English -> French coreference probe applies to it; and the probe run on it in chunks, with progress.
"""

from __future__ import annotations

import re
from typing import Any

IMPORTED = "imported-marian"  # card.json's "kind" of an imported checkpoint
FRENCH = ("fr", "fra", "fre", "french")


def is_imported(card: Any) -> bool:
    """Whether a checkpoint's card says it was imported from a Marian folder (not trained here)."""
    return isinstance(card, dict) and card.get("kind") == IMPORTED


def target_language(card: Any) -> str | None:
    """The target language an imported card states ("fr", "de", ...); None when it states none."""
    lang = card.get("target_lang") if isinstance(card, dict) else None
    return lang.strip() if isinstance(lang, str) and lang.strip() else None


def coreference_applies(card: Any) -> bool:
    """Whether our English -> French coreference sentences can probe the model: ours always; an import when
    its target language is French."""
    if not is_imported(card):
        return True
    lang = target_language(card)
    return lang is not None and re.split(r"[_\-]", lang.lower())[0] in FRENCH


def coreference_evaluation(model, tokenizer, examples, progress=None, chunk: int = 16) -> dict[str, Any]:
    """The coreference probe on examples in the card's "evaluation" format ({"n_sentences", "heads"}).

    One sentence per model call (no padding, so nothing depends on a tokenizer's pad id), in chunks
    of ``chunk`` sentences; progress(done, total) is called after each chunk.
    """
    import numpy as np

    from ..evaluate import PROBE_QUERIES, ProbeResult, coreference_probe

    total = len(examples)
    wins: dict[Any, np.ndarray] = {}
    n = 0
    for start in range(0, total, chunk):
        part = coreference_probe(model, tokenizer, examples[start : start + chunk], batch_size=1)
        for q in PROBE_QUERIES:
            wins[q] = wins.get(q, 0) + part.scores[q] * part.n_sentences
        n += part.n_sentences
        if progress is not None:
            progress(min(start + chunk, total), total)
    scores = {q: (w / n if n else w * 0.0) for q, w in wins.items()}
    return {"n_sentences": n, "heads": ProbeResult(n, scores).to_card()["heads"]}
