"""Probe scores as the pages use them: marks on heads, default heads.

Our checkpoints carry the coreference probe in their card. An imported opus-mt model has none:
for a French target it is computed here, on demand (the route statement asks), once per
checkpoint for every session, in the background lane with a progress bar; for other targets the route statement says
why it does not apply.
"""

from __future__ import annotations

import functools
from typing import Any

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint
from transformer.corpus import CorpusSpec, generate_test
from transformer.evaluate import coreference_evaluation
from transformer.inspection.card import ROUTE_THRESHOLD, best_probe_head, probe_scores, route_kind
from transformer.inspection.languages import writes_without_spaces
from transformer.provenance import coreference_applies, is_imported, stated_target, target_language

from . import background, cache

MARK_THRESHOLD = 0.8
PROBE_SENTENCES = 200  # held-out coreference sentences probed on an imported model (~20 s at base size)


@functools.lru_cache(maxsize=1)
def probe_examples() -> tuple:
    """The held-out coreference sentences an imported model is probed on (the same for every model)."""
    return tuple(generate_test(CorpusSpec())[:PROBE_SENTENCES])


def _probe_args(ckpt: Checkpoint) -> tuple:
    return (ckpt.model, ckpt.tokenizer, list(probe_examples()))


def _computed(ckpt: Checkpoint) -> dict | None:
    """The probe if the lane has computed it already; never computes nor waits for one in flight."""
    return cache.results().peek(cache.call_key(coreference_evaluation, _probe_args(ckpt), {}))


def compute_probe(ckpt: Checkpoint, tr, key: str) -> dict | None:
    """The probe of an imported French-target checkpoint; while the background lane computes it (once per
    checkpoint for every session, off the page thread and holding no work slot), None and a progress bar
    under container `key`."""
    value, job = background.start(coreference_evaluation, *_probe_args(ckpt))
    if job is not None:
        background.progress(job, key, tr, tr("marian.probe_running", n=PROBE_SENTENCES))
    return value


def probe_card(ckpt: Checkpoint) -> dict[str, Any]:
    """The card the probe readers use: ours as written; an import's with the probe once it is computed."""
    if not is_imported(ckpt.card):
        return ckpt.card
    computed = _computed(ckpt) if coreference_applies(ckpt.card) else None
    return {**ckpt.card, "evaluation": computed} if computed is not None else ckpt.card


def probe_marks(ckpt: Checkpoint, kind: AttentionKind, threshold: float = MARK_THRESHOLD) -> dict[HeadId, float]:
    """head -> score for heads whose pronoun row finds the antecedent in >= threshold of sentences."""
    if AttentionKind(kind) is AttentionKind.DECODER:
        return {}
    return {s.head: s.score for s in probe_scores(probe_card(ckpt), ckpt.config, kind) if s.score >= threshold}


def default_head(ckpt: Checkpoint, kind: AttentionKind) -> HeadId:
    """Where a picker opens: the probe's best head for the kind, else the last layer's head 0."""
    kind = AttentionKind(kind)
    best = None if kind is AttentionKind.DECODER else best_probe_head(probe_card(ckpt), ckpt.config, kind)
    if best is not None:
        return best.head
    return HeadId(kind, ckpt.config.n_layers(kind) - 1, 0)


def default_kind(ckpt: Checkpoint) -> AttentionKind:
    """Where a picker that offers every kind opens: where this checkpoint decides il/elle (its probe)."""
    return route_kind(probe_card(ckpt), ckpt.config)


def route_statement(ckpt: Checkpoint, tr, key: str = "route_probe") -> str | None:
    """Where this checkpoint decides il/elle, in one sentence built from its card's probe scores.

    For an imported model: computed on demand for a French target, in the background lane (None and a progress
    bar under container `key` meanwhile); for another target, why it does not apply.
    """
    card = ckpt.card
    if not is_imported(card) and writes_without_spaces(target_language(card)):
        return chinese_route_statement(ckpt, tr)
    if is_imported(card):
        if not coreference_applies(card):
            return tr("marian.probe_not_french", lang=stated_target(card) or "?")
        computed = compute_probe(ckpt, tr, key)
        if computed is None:
            return None
        card = {**card, "evaluation": computed}
    enc = best_probe_head(card, ckpt.config, AttentionKind.ENCODER)
    cross = best_probe_head(card, ckpt.config, AttentionKind.CROSS)
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
    prefix = tr("marian.probe_prefix", n=card["evaluation"]["n_sentences"]) + " " if is_imported(card) else ""
    if route_kind(card, ckpt.config) is AttentionKind.ENCODER:  # the rule the pickers open by
        text = tr("route.encoder", **values)
    elif cross.score >= ROUTE_THRESHOLD:
        text = tr("route.cross", **values)
    else:
        text = tr("route.none", **values)
    train = ckpt.card.get("train_config") if isinstance(ckpt.card, dict) else None
    if isinstance(train, dict) and isinstance(train.get("align_pronoun"), (int, float)) and train["align_pronoun"] > 0:
        text += " " + tr("route.supervised")
    return prefix + text


def chinese_route_statement(ckpt: Checkpoint, tr) -> str:
    """What the coreference probe measures on an English → Chinese model: the encoder's "it" row only (Chinese
    has no il/elle, so no target row depends on the antecedent), from the card's encoder probe
    (scripts/evaluate_zh.py), stated whether or not a head resolves the reference."""
    enc = best_probe_head(ckpt.card, ckpt.config, AttentionKind.ENCODER)
    evaluation = ckpt.card.get("evaluation") if isinstance(ckpt.card, dict) else None
    n = evaluation.get("n_sentences") if isinstance(evaluation, dict) else None
    if enc is None or not isinstance(n, int):
        return tr("zh.coref_unmeasured")
    verdict = tr("zh.coref_resolves" if enc.score >= ROUTE_THRESHOLD else "zh.coref_not")
    return tr("zh.coref", n=n, layer=enc.head.layer, head=enc.head.head, score=enc.score, verdict=verdict)


def no_probe_set(ckpt: Checkpoint, tr) -> str:
    """Why a page has no held-out probe set for this checkpoint: a Chinese target (our probe sentences are
    English → French), else a corpus of the user's."""
    if not is_imported(ckpt.card) and writes_without_spaces(target_language(ckpt.card)):
        return tr("zh.no_probe_set")
    return tr("lab.no_probe_set")
