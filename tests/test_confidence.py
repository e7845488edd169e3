"""The confidence line: computed from the probabilities the decoder produced; lower where the model guesses."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from pages._ui.i18n import Translator
from transformer.analysis import Source, analyse, max_new_tokens
from transformer.checkpoint import load_checkpoint
from transformer.corpus.real import load_real
from transformer.decoding import translate_ids
from transformer.inspection.confidence import ConfidenceLevel, confidence, measured_agreement, produced_probs
from transformer.layout import DEFAULT_CHECKPOINT

pytestmark = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")


@pytest.fixture(scope="module")
def ckpt():
    return load_checkpoint(DEFAULT_CHECKPOINT)


def test_confidence_of_given_probabilities():
    c = confidence([0.9, 0.5, 0.2, 1.0])
    assert c.n_pieces == 4 and c.low_share == 0.25  # 0.2 < 0.5; 0.5 is not below
    assert c.mean_log_prob == pytest.approx((math.log(0.9) + math.log(0.5) + math.log(0.2)) / 4)
    assert c.geometric_mean_prob == pytest.approx((0.9 * 0.5 * 0.2) ** 0.25)
    assert confidence([0.95, 0.9]).level is ConfidenceLevel.SURE
    assert confidence([0.1, 0.2, 0.3]).level is ConfidenceLevel.UNSURE
    assert confidence([]) is None and confidence([0.0]).mean_log_prob < -20  # a ruled-out piece stays finite
    with pytest.raises(ValueError):
        confidence([1.5])
    with pytest.raises(ValueError):
        confidence([0.5], threshold=1.0)


@pytest.mark.parametrize("beam", [1, 3])
def test_the_line_reads_the_probabilities_the_decoder_produced(ckpt, beam):
    text = "The file opens in a new window."
    a = analyse(ckpt.model, ckpt.tokenizer, text, beam_size=beam)
    source = Source.of(ckpt.tokenizer, text, ckpt.config.max_len)
    decoded = translate_ids(ckpt.model, source.ids, beam_size=beam, max_new_tokens=max_new_tokens(source))
    assert a.output_ids == decoded.tokens
    expected = produced_probs(decoded.log_probs.float().numpy(), decoded.tokens)
    np.testing.assert_allclose(a.output_probs, expected, rtol=1e-5)
    if beam == 1:  # greedy produces the most probable piece at each step
        np.testing.assert_allclose(a.output_probs, a.top_probs[:, 0], rtol=1e-5)
    c = confidence(a.output_probs)
    assert c.n_pieces == len(decoded.tokens)
    assert c.mean_log_prob == pytest.approx(float(np.log(expected).mean()), rel=1e-5)
    # greedy's sum of log-probabilities is the decoder's own score
    if beam == 1:
        assert c.mean_log_prob * c.n_pieces == pytest.approx(decoded.score, rel=1e-4)


def test_lower_on_unseen_words_than_on_a_training_sentence(ckpt):
    trained = next(s for s, _ in load_real("train", ("libreoffice",)) if 6 <= len(s.split()) <= 12)
    unseen = "Zorblat quixxes the vrimmelig snorkwhistle behind the glonky pramfoot."
    with torch.no_grad():
        seen_c = confidence(analyse(ckpt.model, ckpt.tokenizer, trained).output_probs)
        unseen_c = confidence(analyse(ckpt.model, ckpt.tokenizer, unseen).output_probs)
    assert unseen_c.mean_log_prob < seen_c.mean_log_prob - 0.3
    assert unseen_c.low_share > seen_c.low_share


def test_the_catalogue_line_in_both_languages(ckpt):
    from pages._ui.confidence import confidence_text

    a = analyse(ckpt.model, ckpt.tokenizer, "The file opens in a new window.")
    en, zh = confidence_text(a, Translator("en")), confidence_text(a, Translator("zh"))
    n = len(a.output_ids)
    assert en.startswith("Confidence: ") and f"of {n} pieces" in en
    assert zh.startswith("置信度") and f"{n} 个子词" in zh


def test_the_app_shows_the_line_beside_the_translation():
    from apptest import app, node_text, run

    at = run(app(text="The file opens in a new window."))
    line = node_text(at.get_by_key("confidence"))
    assert line.startswith("Confidence: ") and "pieces" in line
    m = measured_agreement(load_checkpoint(DEFAULT_CHECKPOINT).card)
    if m is not None:  # the shipped default's own measurement, in the line's help
        helps = [el.help for el in at.get_by_key("confidence") if getattr(el, "help", None)]
        assert any(f"Pearson {m.pearson:.2f}" in h for h in helps), helps


def _entry(n: int, r: float, least: float, most: float, corpus: str = "everyday") -> dict:
    """A card entry in the shape scripts/confidence_vs_chrf.py --write gives it."""
    quarters = [{"mean_log_prob": -1.0, "chrf": least}, {"chrf": 40.0}, {"chrf": 50.0}, {"chrf": most}]
    return {
        "corpus": corpus,
        "split": "test",
        "n_sentences": n,
        "mean_log_prob_vs_chrf": {"pearson": r, "spearman": r},
        "chrf_by_confidence_quarter": quarters,
    }


def test_the_measured_agreement_is_read_from_the_card_and_a_bad_entry_is_skipped():
    assert measured_agreement({}) is None and measured_agreement({"confidence": "no"}) is None
    card = {
        "confidence": {
            "kde/test": _entry(100, 0.4, 30.0, 60.0, "kde"),
            "everyday/test": _entry(200, 0.59, 34.2, 61.5),
            "bad/test": {"n_sentences": 900, "mean_log_prob_vs_chrf": {"pearson": "x"}},
            "nan/test": _entry(900, float("nan"), 1.0, 2.0),
            "empty/test": _entry(0, 0.9, 1.0, 2.0),
        }
    }
    m = measured_agreement(card)  # the largest well-formed set
    assert (m.corpus, m.split, m.n_sentences, m.pearson) == ("everyday", "test", 200, 0.59)
    assert (m.least_confident_chrf, m.most_confident_chrf) == (34.2, 61.5)


def test_a_hostile_measurement_in_a_card_is_skipped_not_shown_or_raised():
    """Values json.loads accepts but the script never writes: each entry is skipped; the page does not fail."""
    ok = _entry(10, 0.4, 30.0, 60.0)
    hostile = json.loads('{"n": Infinity, "r": NaN}')
    bad = {
        "inf_count/test": {**ok, "n_sentences": hostile["n"]},
        "float_count/test": {**ok, "n_sentences": 300.9},
        "str_count/test": {**ok, "n_sentences": "300"},
        "bool_count/test": {**ok, "n_sentences": True},
        "huge_r/test": _entry(300, 10**400, 30.0, 60.0),
        "bool_r/test": _entry(300, True, 30.0, 60.0),
        "r_above_one/test": _entry(300, 5.0, 30.0, 60.0),
        "nan_r/test": _entry(300, hostile["r"], 30.0, 60.0),
        "chrf_below_zero/test": _entry(300, 0.4, -3.0, 60.0),
        "chrf_above_100/test": _entry(300, 0.4, 30.0, 150.0),
        "two_quarters/test": {**ok, "n_sentences": 300, "chrf_by_confidence_quarter": [{"chrf": 1.0}, {"chrf": 2.0}]},
        "no_corpus": {k: v for k, v in {**ok, "n_sentences": 300}.items() if k != "corpus"},
        "null_corpus/test": {**ok, "n_sentences": 300, "corpus": None},
    }
    for key, entry in bad.items():
        assert measured_agreement({"confidence": {key: entry}}) is None, key
    m = measured_agreement({"confidence": {**bad, "everyday/test": ok}})
    assert (m.corpus, m.n_sentences, m.pearson) == ("everyday", 10, 0.4)


def test_a_measurement_against_the_line_changes_what_the_help_claims():
    """Where the model's own measurement found no agreement (Pearson <= 0), the help does not claim there is one."""
    from pages._ui.confidence import confidence_help

    for lang in ("en", "zh"):
        tr = Translator(lang)
        text = confidence_help({"confidence": {"everyday/test": _entry(200, -0.12, 40.0, 38.0)}}, tr)
        assert text.startswith(tr("conf.help_no_agreement")) and tr("conf.help") not in text and "-0.12" in text
        assert confidence_help({"confidence": {"everyday/test": _entry(200, 0.3, 30.0, 50.0)}}, tr).startswith(
            tr("conf.help")
        )


def test_the_help_says_what_was_measured_on_this_model_in_both_languages():
    from pages._ui.confidence import confidence_help

    card = {"confidence": {"zh/everyday/test": _entry(200, 0.47, 5.1, 22.3, "zh/everyday")}}
    for lang in ("en", "zh"):
        tr = Translator(lang)
        assert confidence_help({}, tr) == tr("conf.help")
        text = confidence_help(card, tr)
        assert text.startswith(tr("conf.help")) and "0.47" in text and "5.1" in text and "22.3" in text
        assert tr("zh.name_everyday") in text  # the corpus by its catalogue name
    assert "200 held-out sentences" in confidence_help(card, Translator("en"))
    assert "200 个留出句子" in confidence_help(card, Translator("zh"))
    odd = {"confidence": {"x": _entry(10, 0.3, 1.0, 2.0, "[x](http://e) 1~2 $y$")}}  # a name not in the catalogue
    assert "\\[x\\](http://e) 1\\~2 \\$y\\$" in confidence_help(odd, Translator("en"))  # shown literally
