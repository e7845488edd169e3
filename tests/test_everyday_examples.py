"""The sidebar's everyday examples: chosen by computation (pick), written into the card, read for the model."""

from __future__ import annotations

import json
import shutil

from apptest import EN, app, run

from transformer.inspection.everyday_examples import Scored, card_examples, everyday_like, pick
from transformer.layout import SHIPPED_ROOT


def test_everyday_like_sentences_are_short_and_have_no_names():
    assert everyday_like("Where is the train station?") and everyday_like("I think I'm lost.")
    assert not everyday_like("Where is Deoran going now?")  # a name
    assert not everyday_like("Go now.") and not everyday_like("where is the station")
    assert not everyday_like("This sentence is far too long to be offered as a short everyday example here.")


def test_pick_keeps_the_best_translated_distinct_sentences():
    rows = [
        Scored("The road is open now.", "La route est ouverte.", "La route est ouverte maintenant.", 70.0, -0.5),
        Scored("The road is closed now.", "La route est fermée.", "La route est fermée maintenant.", 72.0, -0.6),
        Scored("We must go home.", "Nous devons rentrer.", "Nous devons rentrer.", 100.0, -0.4),
        Scored("It is getting late.", "C'est la nuit.", "Il se fait tard.", 20.0, -1.5),  # badly translated
        Scored("We saw Deoran at home.", "Nous avons vu Deoran.", "Nous avons vu Deoran.", 100.0, -0.3),  # a name
    ]
    chosen = pick(rows, n=3)
    assert [r.source for r in chosen] == ["We must go home.", "The road is closed now."]  # one "the road"
    # Tatoeba's held-out sentences first (issue 61), however well the others are translated
    assert [r.source for r in pick(rows, n=2, prefer=frozenset({"The road is open now."}))] == [
        "The road is open now.",
        "We must go home.",
    ]
    card = {"everyday_examples": [r.to_dict() for r in chosen] + [{"source": 3}, "x"]}
    assert card_examples(card) == ["We must go home.", "The road is closed now."]
    assert card_examples({}) == [] and card_examples({"everyday_examples": "bad"}) == []


def test_a_cards_everyday_examples_join_the_sidebar(tmp_path, monkeypatch):
    from pages._ui.session import EXAMPLES

    ckpt = tmp_path / "everyday-tiny"
    shutil.copytree(SHIPPED_ROOT / "tiny", ckpt, ignore=shutil.ignore_patterns("snapshots"))
    card = json.loads((ckpt / "card.json").read_text(encoding="utf-8"))
    card["train_config"]["real_data"] = ["everyday"]
    card["everyday_examples"] = [{"source": "We must go home."}]
    card["reordering_examples"] = [{"source": "The selected file opens."}]
    (ckpt / "card.json").write_text(json.dumps(card), encoding="utf-8")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    at = run(app())
    box = at.selectbox(key="example")
    assert box.options == [
        *EXAMPLES,
        EN("conf.everyday_example", text="We must go home."),
        EN("sidebar.reorder_example", text="The selected file opens."),
    ]
    box.select("We must go home.")
    run(at)
    assert at.session_state["text"] == "We must go home."


def test_the_examples_are_drawn_from_held_out_tatoeba_typed_and_everyday_sentences_in_both_languages():
    """held_out_pairs: both languages' pools hold Tatoeba's dev sentences (issue 61); given a card, none of the
    sentences its model trained on (a game's line that is also a Tatoeba training sentence); the bar for
    "translated well" is lower into Chinese, whose chrF runs lower."""
    from transformer.corpus.real import load_real
    from transformer.inspection.everyday_examples import MIN_CHRF, MIN_CHRF_ZH, held_out_pairs, min_chrf

    for target, tatoeba, everyday in (("fr", "tatoeba", "everyday"), ("zh", "zh/tatoeba", "zh/everyday")):
        dev = {s for s, _ in load_real("dev", (tatoeba,))}
        trained = {s for s, _ in load_real("train", (tatoeba, everyday))}
        pool = {s for s, _ in held_out_pairs(target)}
        assert len(pool & dev) > 100 and pool & trained  # "Are you sure about this?": a game's dev line too
        card = {"train_config": {"real_data": [tatoeba, everyday], "corpus": {"n_examples": 10}}}
        mine = [s for s, _ in held_out_pairs(target, card)]
        assert all(everyday_like(s) for s in mine) and len(set(mine) & dev) > 100 and not set(mine) & trained
    assert min_chrf("zh") == MIN_CHRF_ZH < min_chrf("fr") == MIN_CHRF


def test_the_shipped_models_offer_held_out_tatoeba_sentences_they_translate_well():
    """Issue 61: en-fr's and en-zh's sidebar examples are held-out Tatoeba sentences (its dev split, never trained
    on), each translated at the language's bar, as scripts/everyday_examples.py --write chose them."""
    from transformer.checkpoint import load_checkpoint
    from transformer.corpus.real import load_real
    from transformer.inspection.everyday_examples import min_chrf, tatoeba_corpus
    from transformer.inspection.roles import training_sources

    for name, target in (("en-fr", "fr"), ("en-zh", "zh")):
        card = load_checkpoint(SHIPPED_ROOT / name).card
        dev: dict[str, set[str]] = {}  # an English sentence may have several translations in the split
        for source, reference in load_real("dev", (tatoeba_corpus(target),)):
            dev.setdefault(source, set()).add(reference)
        examples = card["everyday_examples"]
        assert len(card_examples(card)) == len(examples) == 4
        assert all(e["reference"] in dev.get(e["source"], ()) for e in examples)
        assert all(e["chrf"] >= min_chrf(target) for e in examples)
        assert not {e["source"] for e in examples} & set(training_sources(card))
