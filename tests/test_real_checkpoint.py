"""Checkpoints measured by scripts/evaluate_real_coref.py: their cards' figures re-measured on a sample.

The script wrote "real_coref_sample": every figure on the first SAMPLE sentences of each held-out set.
Greedy decoding is deterministic, so re-measuring gives the same numbers (up to float noise between
thread counts). About a minute on two cores per checkpoint. checkpoints/coref-variants, the real-text
checkpoints/real-kde-align (the default before the first en-fr) and en-fr (the default) ship. real-coref, real-apps and
real-kde, which real-kde-align superseded, were retired from the tree; their presets stay, and their figures
are in docs/models.md (RETIRED below).
"""

from __future__ import annotations

import json

import pytest

from transformer.checkpoint import load_checkpoint
from transformer.corpus import CorpusSpec
from transformer.corpus.real import load_real
from transformer.evaluate_real import GOALS, SAMPLE, coreference_goals_met, real_coref_report
from transformer.layout import DEFAULT_CHECKPOINT, SHIPPED_ROOT
from transformer.training import PRESETS
from transformer.training.presets import TrainConfig

MEASURED = sorted(
    p.parent.name
    for p in SHIPPED_ROOT.glob("*/card.json")
    if "real_coref_sample" in json.loads(p.read_text(encoding="utf-8"))
)
# real-coref, the default before real-kde-align (retired; docs/models.md): its held-out pages' and GIMP's chrF
RETIRED = {"real": 56.3, "gimp": 40.2}


def test_a_shipped_checkpoint_is_measured():
    assert "coref-variants" in MEASURED


REAL_TEXT = ("real-kde-align", "en-fr")


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


def _recorded(preset, recorded: dict) -> dict:
    """The preset as its card recorded it: a field added to TrainConfig since the run (init_from, real_repeat,
    snapshot_dtype, tgt_vocab_size, ...) is left out where it holds its default, which is what the run used."""
    now, default = json.loads(json.dumps(preset.to_dict())), json.loads(json.dumps(TrainConfig().to_dict()))
    added = set(now) - set(recorded)
    assert all(now[k] == default[k] for k in added), added
    return {k: v for k, v in now.items() if k not in added}


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
    for part in ("real", "gimp"):
        assert full[part]["chrf"] > RETIRED[part]
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
def test_en_fr_is_the_default_made_from_nothing_and_betters_real_kde_align():
    """en-fr (issue 61): en-fr-tatoeba-coref-first from nothing (Tatoeba's sentences, a 12,000-piece vocabulary,
    the generated coreference sentences a quarter of an epoch from the first step); every coreference goal met,
    one encoder head carrying "it"; better than real-kde-align on the held-out pages, on GIMP (greedily) and on
    the everyday campaigns; the run in the card with every start and stop; under 100 MB."""
    path = SHIPPED_ROOT / "en-fr"
    card = load_checkpoint(path).card
    assert DEFAULT_CHECKPOINT == path and "init_from" not in card  # from nothing
    cfg = card["train_config"]
    assert cfg == _recorded(PRESETS["en-fr-tatoeba-coref-first"], cfg) and "tatoeba" in cfg["real_data"]
    assert card["vocabulary"] and cfg["vocab_size"] == 12000
    kept = card["sessions"]
    ends = [sum(card["session_steps"][: i + 1]) for i in range(len(kept))]
    assert [s["steps"] for s in kept] == [[a, b] for a, b in zip([0, *ends], ends)] and ends[-1] == card["step"]
    (run,) = kept  # one run, from nothing: every start and stop, each from where the one before stopped
    starts = run["runs"]
    assert starts[0]["from_step"] == 0 and all(b["from_step"] == a["to_step"] for a, b in zip(starts, starts[1:]))
    assert starts[-1]["to_step"] == card["step"] and len(starts) >= 2
    full, before = card["real_coref"], load_checkpoint(ALIGN).card["real_coref"]
    assert coreference_goals_met(full) and full["best_heads"]["encoder/pronoun"]["score"] >= GOALS["best_probe_head"]
    for part in ("real", "gimp"):
        assert full[part]["chrf"] > before[part]["chrf"]
    assert full["gimp"]["chrf"] >= GOALS["gimp_chrf"]  # greedily
    assert card["everyday_eval"]["everyday_test"]["chrf"] > 40  # real-kde-align: 26.2 (docs/models.md)
    sizes = [p.stat().st_size for p in path.rglob("*") if p.is_file()]
    assert sum(sizes) < 100 * 2**20
