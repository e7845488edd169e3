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
