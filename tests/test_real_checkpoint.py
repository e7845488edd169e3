"""Checkpoints measured by scripts/evaluate_real_coref.py: their cards' figures re-measured on a sample.

The script wrote "real_coref_sample": every figure on the first SAMPLE sentences of each held-out set.
Greedy decoding is deterministic, so re-measuring gives the same numbers (up to float noise between
thread counts). About a minute on two cores per checkpoint. checkpoints/coref-variants and the
real-text checkpoints/real-kde-align (the default: it meets every coreference goal and is the best on real
text, see the README), real-coref (the default before it) and real-apps and real-kde (beside it: more real
text, a probe head short of the goal) ship.
"""

from __future__ import annotations

import json
import statistics

import pytest

from transformer.checkpoint import load_checkpoint
from transformer.corpus import CorpusSpec
from transformer.corpus.real import load_real
from transformer.evaluate_real import GOALS, SAMPLE, coreference_goals_met, real_coref_report
from transformer.layout import DEFAULT_CHECKPOINT, SHIPPED_ROOT
from transformer.training import PRESETS
from transformer.training.presets import TrainConfig

PATH = SHIPPED_ROOT / "real-coref"
MEASURED = sorted(
    p.parent.name
    for p in SHIPPED_ROOT.glob("*/card.json")
    if "real_coref_sample" in json.loads(p.read_text(encoding="utf-8"))
)


def test_a_shipped_checkpoint_is_measured():
    assert "coref-variants" in MEASURED


@pytest.mark.skipif(not (PATH / "card.json").is_file(), reason="checkpoints/real-coref not present")
def test_card_records_how_it_was_made():
    card = load_checkpoint(PATH).card
    cfg = card["train_config"]
    preset = PRESETS["real-coref"]
    assert cfg["steps"] == preset.steps == card["step"]
    assert cfg["real_data"] == list(preset.real_data) == ["libreoffice", "handbook", "gnome", "ui"]
    assert sorted(card["real_data"]) == ["gnome", "handbook", "libreoffice", "ui"]
    assert cfg["model_overrides"] == preset.model_overrides and cfg["vocab_size"] == preset.vocab_size
    assert card["real_data"]["libreoffice"]["packages"]["libreoffice-help-fr"].startswith("4:7.4.7")
    # The hour, on these cores: the run's own pace (the median time per 10 steps in metrics.jsonl)
    # times its steps, and its wall time (card["wall_time_s"], 3,522 s, which also holds minutes where test
    # runs shared the two cores); the README gives both.
    rows = [json.loads(line) for line in (PATH / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if "loss" in r]
    pace = statistics.median(
        (b["elapsed_s"] - a["elapsed_s"]) / (b["step"] - a["step"]) for a, b in zip(rows, rows[1:])
    )
    assert pace * card["step"] <= 60 * 60 and card["wall_time_s"] <= 75 * 60
    full = card["real_coref"]
    for key in GOALS:
        assert key in full["goals"]
    assert coreference_goals_met(full)  # the rule made it the default, until real-kde-align
    assert full["real"]["n_sentences"] > 500 and full["coref"]["n_sentences"] == 2000
    # the files the repository carries: every one under 30 MB, all together under 100 MB
    sizes = [p.stat().st_size for p in PATH.rglob("*") if p.is_file()]
    assert max(sizes) < 30 * 2**20 and sum(sizes) < 100 * 2**20


REAL_TEXT = ("real-coref", "real-apps", "real-kde", "real-kde-align")


@pytest.mark.parametrize("name", [n for n in REAL_TEXT if (SHIPPED_ROOT / n / "card.json").is_file()])
def test_the_gimp_figure_covers_the_whole_manual(name):
    """Each real-text card scores the committed GIMP set whole (7,575 sentences of 555 pages)."""
    full = load_checkpoint(SHIPPED_ROOT / name).card["real_coref"]
    gimp = full["gimp"]
    assert gimp["n_sentences"] == len(load_real("test", ("gimp",))) > 7000
    assert full["real"]["n_sentences"] == len(load_real("test"))
    judged = full.get("beam", full)  # a card that chose its beam's α on the dev pages is judged under that search
    assert judged["gimp"]["n_sentences"] == gimp["n_sentences"]
    assert judged["real"]["n_sentences"] == full["real"]["n_sentences"]
    assert full["goals"]["gimp_chrf"]["value"] == judged["gimp"]["chrf"]
    assert full["goals"]["real_chrf"]["value"] == judged["real"]["chrf"]
    if "beam" in full:
        assert full["goals"]["gimp_chrf"]["greedy"] == gimp["chrf"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MEASURED)
def test_sample_figures_reproduce(name):
    ckpt = load_checkpoint(SHIPPED_ROOT / name)
    stored = ckpt.card["real_coref_sample"]
    search = {"beam": stored["beam"]["beam_size"], "alpha": ckpt.alpha} if "beam" in stored else {}
    again = real_coref_report(
        ckpt.model, ckpt.tokenizer, CorpusSpec.from_card(ckpt.card), limit=SAMPLE, gimp_limit=SAMPLE, **search
    )
    assert ("beam" in again) == ("beam" in stored) == ("decoding" in ckpt.card)
    for figures, was in [(again, stored), *([(again["beam"], stored["beam"])] if search else [])]:
        for part in ("real", "gimp"):
            assert figures[part]["n_sentences"] == was[part]["n_sentences"] == SAMPLE
            assert figures[part]["chrf"] == pytest.approx(was[part]["chrf"], abs=0.5)
            assert figures[part]["bleu"] == pytest.approx(was[part]["bleu"], abs=0.5)
        assert [s["translation"] for s in figures["flagship"]] == [s["translation"] for s in was["flagship"]]
    one = 1 / SAMPLE + 1e-9  # at most one sentence may flip between thread counts
    for key in ("coref_pronoun_accuracy", "variants_pronoun_accuracy") if search else ():
        assert again["beam"][key] == pytest.approx(stored["beam"][key], abs=one)
    assert again["coref"]["pronoun_accuracy"] == pytest.approx(stored["coref"]["pronoun_accuracy"], abs=one)
    assert again["variants"]["pronoun_accuracy"] == pytest.approx(stored["variants"]["pronoun_accuracy"], abs=one)
    assert [s["translation"] for s in again["flagship"]] == [s["translation"] for s in stored["flagship"]]
    for q, best in stored["best_heads"].items():
        assert again["best_heads"][q]["score"] == pytest.approx(best["score"], abs=one)
    assert coreference_goals_met(again) == coreference_goals_met(stored)


def test_coref_variants_meets_its_coreference_goals():
    """What the README and its card claim: every held-out pronoun right, on typed variants too."""
    full = load_checkpoint(SHIPPED_ROOT / "coref-variants").card["real_coref"]
    assert full["coref"]["n_sentences"] == 2000 and full["coref"]["pronoun_accuracy"] == 1.0
    assert full["variants"]["pronoun_accuracy"] >= GOALS["variants_pronoun_accuracy"]
    assert [s["correct"] for s in full["flagship"]] == [True, True]


def test_every_shipped_card_carries_its_vocabulary():
    """The notes on unseen and rare words read the card's vocabulary; a card without one made a first visit
    regenerate the model's whole corpus (5-10 s for coref-en-fr's 60,000 sentences)."""
    from transformer.vocabulary import Vocabulary

    cards = sorted(SHIPPED_ROOT.glob("*/card.json")) + sorted(SHIPPED_ROOT.glob("*/snapshots/*/card.json"))
    assert len(cards) > 10
    for path in cards:
        entry = json.loads(path.read_text(encoding="utf-8")).get("vocabulary")
        assert Vocabulary.from_card_entry(entry) is not None, path


# the checkpoints beside the default: the corpora each trained on, its help packages per corpus, the one it betters
BESIDE = {
    "real-apps": (["apps", "gnome", "handbook", "libreoffice", "ui"], {"apps": 64}, "real-coref"),
    "real-kde": (["apps", "gnome", "handbook", "kde", "libreoffice", "ui"], {"apps": 64, "kde": 110}, "real-apps"),
}


def _recorded(preset, recorded: dict) -> dict:
    """The preset as its card recorded it: a field added to TrainConfig since the run (init_from, real_repeat,
    snapshot_dtype, tgt_vocab_size, ...) is left out where it holds its default, which is what the run used."""
    now, default = json.loads(json.dumps(preset.to_dict())), json.loads(json.dumps(TrainConfig().to_dict()))
    added = set(now) - set(recorded)
    assert all(now[k] == default[k] for k in added), added
    return {k: v for k, v in now.items() if k not in added}


@pytest.mark.parametrize("name", [n for n in BESIDE if (SHIPPED_ROOT / n / "card.json").is_file()])
def test_the_checkpoints_beside_the_default_record_how_they_were_made(name):
    """real-apps and real-kde: more real text, ended by their preset's time limit; each misses the probe goal, so
    neither is the default (the issue's rule), and each is better on the GIMP manual than the one before it."""
    path = SHIPPED_ROOT / name
    corpora, packages, bettered = BESIDE[name]
    card = load_checkpoint(path).card
    cfg, preset = card["train_config"], PRESETS[name]
    assert cfg == _recorded(preset, cfg)
    assert card["time_limited"] is True and 4000 < card["step"] < preset.steps
    assert card["wall_time_s"] <= preset.time_limit_s + 60 <= 60 * 60
    assert sorted(card["real_data"]) == corpora
    for corpus, n in packages.items():
        assert len(card["real_data"][corpus]["packages"]) == n
    full = card["real_coref"]
    assert not coreference_goals_met(full) and not full["goals"]["best_probe_head"]["met"]
    assert DEFAULT_CHECKPOINT != path
    before = load_checkpoint(SHIPPED_ROOT / bettered).card["real_coref"]
    assert full["gimp"]["chrf"] > before["gimp"]["chrf"] and full["goals"]["real_chrf"]["met"]
    sizes = [p.stat().st_size for p in path.rglob("*") if p.is_file()]
    assert max(sizes) < 30 * 2**20 and sum(sizes) < 100 * 2**20


ALIGN = SHIPPED_ROOT / "real-kde-align"


@pytest.mark.skipif(not (ALIGN / "card.json").is_file(), reason="checkpoints/real-kde-align not present")
def test_the_default_meets_every_coreference_goal_and_betters_the_one_before():
    """real-kde-align: real-kde's preset with the alignment loss; every coreference goal met, so it was the default
    (before en-fr); better than real-coref, the default before it, on the held-out pages and on GIMP."""
    card = load_checkpoint(ALIGN).card
    cfg, preset = card["train_config"], PRESETS["real-kde-align"]
    assert cfg == _recorded(preset, cfg) and preset.align_pronoun > 0
    assert card["time_limited"] is True and 4000 < card["step"] < preset.steps
    assert card["wall_time_s"] <= preset.time_limit_s + 60 <= 60 * 60
    assert sorted(card["real_data"]) == ["apps", "gnome", "handbook", "kde", "libreoffice", "ui"]
    full = card["real_coref"]
    assert coreference_goals_met(full)
    assert full["best_heads"]["encoder/pronoun"]["score"] >= GOALS["best_probe_head"]  # the encoder resolves "it"
    assert full["variants"]["pronoun_accuracy"] >= GOALS["variants_pronoun_accuracy"]
    before = load_checkpoint(PATH).card["real_coref"]
    for part in ("real", "gimp"):
        assert full[part]["chrf"] > before[part]["chrf"]
    # GIMP: missed greedily (43.69), met under the beam search its card chose on the dev pages (beam 4, α 3: 45.02)
    gimp = full["goals"]["gimp_chrf"]
    assert gimp["greedy"] == full["gimp"]["chrf"] < GOALS["gimp_chrf"] <= gimp["value"] == full["beam"]["gimp"]["chrf"]
    assert gimp["met"] and gimp["decoding"] == "beam 4, alpha 3" and card["decoding"]["alpha"] == 3.0
    beam = full["beam"]  # under it the coreference goals still hold
    assert beam["coref_pronoun_accuracy"] >= GOALS["coref_pronoun_accuracy"]
    assert all(s["correct"] for s in beam["flagship"])
    assert beam["variants_pronoun_accuracy"] >= GOALS["variants_pronoun_accuracy"]
    sizes = [p.stat().st_size for p in ALIGN.rglob("*") if p.is_file()]
    assert max(sizes) < 30 * 2**20 and sum(sizes) < 100 * 2**20


@pytest.mark.skipif(not (SHIPPED_ROOT / "en-fr" / "card.json").is_file(), reason="checkpoints/en-fr not present")
def test_en_fr_is_the_default_and_betters_real_kde_align():
    """en-fr (real-kde-align continued on everyday text, issue 33): every coreference goal still met, better than
    real-kde-align on the held-out pages, on GIMP (greedily) and on the held-out everyday campaigns; under 100 MB."""
    path = SHIPPED_ROOT / "en-fr"
    card = load_checkpoint(path).card
    assert DEFAULT_CHECKPOINT == path and card["init_from"]["name"] == "real-kde-align"
    full, before = card["real_coref"], load_checkpoint(ALIGN).card["real_coref"]
    assert coreference_goals_met(full) and full["best_heads"]["encoder/pronoun"]["score"] >= GOALS["best_probe_head"]
    for part in ("real", "gimp"):
        assert full[part]["chrf"] > before[part]["chrf"]
    assert full["gimp"]["chrf"] >= GOALS["gimp_chrf"]  # greedily, this time
    assert card["everyday_eval"]["everyday_test"]["chrf"] > 40  # real-kde-align: 26.2 (docs/models.md)
    sizes = [p.stat().st_size for p in path.rglob("*") if p.is_file()]
    assert sum(sizes) < 100 * 2**20
