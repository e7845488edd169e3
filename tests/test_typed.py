"""The everyday sentences typed as a new user would (transformer/corpus/typed.py): a held-out test set.

The set is written by hand; these tests check that it is well formed, that it is really held out (none of its
English is in any committed corpus, whatever the split or target language), and that the figures
scripts/evaluate_typed.py wrote into the shipped cards re-measure (greedy decoding is deterministic).
"""

from __future__ import annotations

import json

import pytest

from transformer.corpus.real import SPLITS, read_pairs, real_files
from transformer.corpus.typed import TARGETS, load_typed, typed_pairs
from transformer.layout import SHIPPED_ROOT


def test_every_row_has_english_and_both_references():
    rows = load_typed()
    assert len(rows) == 125
    for r in rows:
        assert r.topic and r.en and r.fr and r.zh, r
        assert r.en != r.fr
        assert any("\u4e00" <= ch <= "\u9fff" for ch in r.zh), r.zh  # the Chinese reference is Chinese
        assert "\t" not in r.en + r.fr + r.zh
    assert len({r.en.casefold() for r in rows}) == len(rows)  # no sentence twice


def test_pairs_follow_the_target_and_refuse_another():
    assert typed_pairs("fr")[0] == (load_typed()[0].en, load_typed()[0].fr)
    assert typed_pairs("zh")[-1] == (load_typed()[-1].en, load_typed()[-1].zh)
    assert set(TARGETS) == {"fr", "zh"}
    with pytest.raises(ValueError, match="de"):
        typed_pairs("de")


def test_a_target_without_references_is_refused_before_translating():
    from transformer.evaluate_real import typed_report

    with pytest.raises(ValueError, match="not 'de'"):
        typed_report(None, None, "de")  # an imported opus-mt en-de model: no German references


def test_no_typed_sentence_is_in_any_committed_corpus():
    """Held out means held out: every split of every committed corpus, French and Chinese targets."""
    typed = {r.en.casefold().strip() for r in load_typed()}
    seen = []
    for name, path in real_files().items():
        if name.endswith("public_tests"):  # a test set too (Tatoeba's and FLORES's): never trained on
            continue
        for split in SPLITS:
            seen += [(name, split, p.src) for p in read_pairs(path, split) if p.src.casefold().strip() in typed]
    assert seen == []


MEASURED = sorted(
    p.parent.name
    for p in SHIPPED_ROOT.glob("*/card.json")
    if "greedy" in json.loads(p.read_text(encoding="utf-8")).get("typed_eval", {})
)


@pytest.mark.slow
@pytest.mark.parametrize("name", MEASURED)
def test_the_cards_typed_figures_re_measure(name):
    from transformer.checkpoint import load_checkpoint
    from transformer.evaluate_real import typed_report

    ckpt = load_checkpoint(SHIPPED_ROOT / name)
    recorded = ckpt.card["typed_eval"]["greedy"]
    again = typed_report(ckpt.model, ckpt.tokenizer, recorded["target"])
    assert again["n_sentences"] == recorded["n_sentences"] == 125
    assert again["chrf"] == pytest.approx(recorded["chrf"], abs=0.5)
    assert again["bleu"] == pytest.approx(recorded["bleu"], abs=1.0)
    same = sum(a["translation"] == b["translation"] for a, b in zip(again["sentences"], recorded["sentences"]))
    assert same >= 120  # float noise between thread counts may flip a near tie or two


def test_the_default_is_measured_on_the_typed_set():
    assert "en-fr" in MEASURED and "en-zh" in MEASURED
