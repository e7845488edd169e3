"""The checkpoint whose encoder points "it" at its antecedent, and the route statements of both checkpoints."""

from __future__ import annotations

import pytest
from apptest import app, node_text, run

from pages._ui.i18n import Translator
from transformer.checkpoint import load_checkpoint
from transformer.corpus import CorpusSpec, generate_test, seed_examples
from transformer.evaluate import ProbeQuery, coreference_probe, french_pronoun, pronoun_accuracy, translate_batch
from transformer.inspection.card import best_probe_head
from transformer.layout import SHIPPED_ROOT

ENCODER = SHIPPED_ROOT / "coref-en-fr-encoder"
pytestmark = pytest.mark.skipif(not ENCODER.exists(), reason="the encoder checkpoint is not shipped")
EN = Translator("en")


def test_a_fresh_evaluation_agrees_with_the_card():
    """Pronoun accuracy and the encoder "it"-row probe, re-measured on 400 held-out sentences."""
    ckpt = load_checkpoint(ENCODER)
    sample = generate_test(CorpusSpec.from_card(ckpt.card))[:400]
    hyps = translate_batch(ckpt.model, ckpt.tokenizer, [ex.src for ex in sample])
    assert pronoun_accuracy(hyps, sample) >= 0.995
    tired, wide = seed_examples()
    seeds = translate_batch(ckpt.model, ckpt.tokenizer, [tired.src, wide.src])
    assert [french_pronoun(h) for h in seeds] == ["il", "elle"]
    probe = coreference_probe(ckpt.model, ckpt.tokenizer, sample)
    layer, head, score = probe.best(ProbeQuery.ENCODER_PRONOUN)  # the encoder row of it/they
    card = best_probe_head(ckpt.card, ckpt.config, "encoder")
    assert (layer, head) == (card.head.layer, card.head.head)
    assert score >= 0.95 and abs(score - card.score) < 0.03
    for family, scores in probe.by_family.items():
        assert scores[ProbeQuery.ENCODER_PRONOUN][layer, head] >= 0.9, family  # one head, in every family


def test_the_route_statement_differs_between_the_checkpoints_and_names_the_head():
    statements = {}
    for name in ("coref-en-fr", "coref-en-fr-encoder"):
        at = run(app(checkpoint=name))
        statements[name] = node_text(at.get_by_key("route"))
        ckpt = load_checkpoint(SHIPPED_ROOT / name)
        kind = "encoder" if name.endswith("encoder") else "cross"
        best = best_probe_head(ckpt.card, ckpt.config, kind)
        assert f"L{best.head.layer} H{best.head.head}" in statements[name]
        # the explorer's encoder picker opens on this checkpoint's best encoder head
        enc = best_probe_head(ckpt.card, ckpt.config, "encoder")
        assert (at.session_state["heads_encoder_layer"], at.session_state["heads_encoder_head"]) == (
            enc.head.layer,
            enc.head.head,
        )
    assert statements["coref-en-fr"] != statements["coref-en-fr-encoder"]
    assert (
        EN("route.encoder", enc_layer=0, enc_head=0, enc_score=0, cross_layer=0, cross_head=0, cross_score=0)[:20]
        in statements["coref-en-fr-encoder"]
    )
    assert EN("route.supervised")[:30] in statements["coref-en-fr-encoder"]


def test_pickers_that_offer_every_kind_open_where_the_checkpoint_decides():
    """route_kind reads the card: the encoder for a model whose encoder resolves "it" (the default real-kde-align,
    coref-en-fr-encoder), cross-attention for coref-en-fr and for a card without probe scores; the explorer's
    overview, the arithmetic and the head lab's training tab open there."""
    from transformer.attention import AttentionKind
    from transformer.inspection.card import route_kind
    from transformer.layout import DEFAULT_CHECKPOINT

    kinds = {}
    for path in (DEFAULT_CHECKPOINT, ENCODER, SHIPPED_ROOT / "coref-en-fr"):
        ckpt = load_checkpoint(path)
        kinds[path.name] = route_kind(ckpt.card, ckpt.config)
        assert route_kind({}, ckpt.config) is AttentionKind.CROSS  # no probe: where the pronoun is written
    assert kinds == {
        DEFAULT_CHECKPOINT.name: AttentionKind.ENCODER,
        "coref-en-fr-encoder": AttentionKind.ENCODER,
        "coref-en-fr": AttentionKind.CROSS,
    }
    for name, kind in kinds.items():
        at = run(app(checkpoint=name, explorer_tab="overview"))
        assert at.session_state["pick_kind"] is kind
        best = best_probe_head(
            load_checkpoint(SHIPPED_ROOT / name).card, load_checkpoint(SHIPPED_ROOT / name).config, kind
        )
        assert (at.session_state["pick_layer"], at.session_state["pick_head"]) == (best.head.layer, best.head.head)
