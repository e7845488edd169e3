"""The coreference probe and the batched measures the head lab builds on."""

from __future__ import annotations

import numpy as np

from transformer.attention import AttentionKind
from transformer.checkpoint import load_checkpoint
from transformer.corpus import CorpusSpec, generate, seed_examples
from transformer.decoding import translate_ids
from transformer.evaluate import (
    PROBE_QUERIES,
    ProbeQuery,
    ProbeRow,
    coreference_probe,
    french_pronoun,
    probe_rows,
    pronoun_accuracy,
    translate_batch,
)


def test_probe_rows_point_at_the_right_pieces(trained_checkpoint):
    tok = load_checkpoint(trained_checkpoint).tokenizer
    tired, wide = seed_examples()
    for ex, antecedent, other, fr in ((tired, "animal", "street", "il"), (wide, "street", "animal", "elle")):
        rows = probe_rows(tok, ex)
        src = tok.pieces(tok.encode(ex.src))
        tgt = tok.pieces(tok.encode(ex.tgt))
        assert "".join(src[i] for i in rows.antecedent).strip("▁") == antecedent
        assert ["".join(src[i] for i in o).strip("▁") for o in rows.others] == [other]
        assert src[rows.pronoun_row].strip("▁") == "it"
        assert "".join(src[i] for i in rows.cue_rows).strip("▁.") == ex.src.split()[ex.cue].strip(".")
        # the decoder row that outputs the pronoun: row t predicts target piece t
        assert tgt[rows.cross_row].strip("▁'").startswith(fr[:2])
        assert french_pronoun(ex.tgt) == fr


def test_probe_scores_are_shares_and_match_the_card_listing(trained_checkpoint):
    ckpt = load_checkpoint(trained_checkpoint)
    test = generate(CorpusSpec(n_examples=600, n_test=100))[1]
    probe = coreference_probe(ckpt.model, ckpt.tokenizer, test)
    cfg = ckpt.config
    assert set(probe.scores) == set(PROBE_QUERIES) == set(ProbeQuery)
    assert probe.scores[ProbeQuery.ENCODER_PRONOUN].shape == (cfg.n_encoder_layers, cfg.n_heads)
    assert probe.scores[ProbeQuery.ENCODER_CUE].shape == (cfg.n_encoder_layers, cfg.n_heads)
    assert probe.scores[ProbeQuery.CROSS_PRONOUN].shape == (cfg.n_decoder_layers, cfg.n_heads)
    for arr in probe.scores.values():
        assert np.all((arr >= 0) & (arr <= 1))
        # a share of n sentences is a multiple of 1/n
        np.testing.assert_allclose(arr * probe.n_sentences, np.round(arr * probe.n_sentences), atol=1e-9)
    card = probe.to_card()
    layer, head, score = probe.best(ProbeQuery.CROSS_PRONOUN)
    listed = [h for h in card["heads"] if h["kind"] == "cross" and h["layer"] == layer and h["head"] == head]
    assert listed == [dict(kind="cross", query="pronoun", layer=layer, head=head, score=round(score, 4))]
    assert len(card["heads"]) == sum(arr.size for arr in probe.scores.values())
    assert sum(probe.family_n.values()) == probe.n_sentences


def test_batched_translation_accuracy_and_loss(trained_checkpoint):
    ckpt = load_checkpoint(trained_checkpoint)
    tired, wide = seed_examples()
    hyps = translate_batch(ckpt.model, ckpt.tokenizer, [tired.src, wide.src])
    one_by_one = []
    for ex in (tired, wide):
        decoded = translate_ids(ckpt.model, ckpt.tokenizer.source_ids(ex.src), return_attention=False)
        one_by_one.append(ckpt.tokenizer.decode(decoded.tokens))
    assert hyps == one_by_one  # batching (and its padding) changes no translation
    assert all(h.strip() for h in hyps)
    assert pronoun_accuracy([tired.tgt, "Le chien."], [tired, wide]) == 0.5
    plain = next(ex for ex in generate(CorpusSpec(n_examples=200, n_test=5))[0] if ex.family == "plain")
    assert pronoun_accuracy(["x"], [plain]) is None  # no pronoun sentence, no accuracy


def test_probe_queries_are_named_by_kind_and_row():
    assert [q.label() for q in PROBE_QUERIES] == ["encoder/pronoun", "encoder/cue", "cross/pronoun"]
    assert ProbeQuery.of(AttentionKind.CROSS, ProbeRow.PRONOUN) is ProbeQuery.CROSS_PRONOUN
    assert ProbeQuery.of(AttentionKind.ENCODER, ProbeRow.CUE) is ProbeQuery.ENCODER_CUE
    assert ProbeQuery.of(AttentionKind.DECODER, ProbeRow.PRONOUN) is None  # the probe reads no decoder self row
