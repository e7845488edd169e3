"""The checkpoints folder as the sidebar sees it (pages/_ui/folder.py): a card is read again only when it changed."""

from __future__ import annotations

import json
import os

from pages._ui import folder


def test_a_cards_pair_is_read_once_per_version_of_the_card(tmp_path, monkeypatch):
    reads = []
    real = folder.pair_label
    monkeypatch.setattr(folder, "pair_label", lambda card: reads.append(1) or real(card))
    run = tmp_path / "run"
    run.mkdir()
    card = run / folder.CARD_FILE
    card.write_text(json.dumps({"source_lang": "en", "target_lang": "fr"}))
    assert folder._pair(str(run)) == folder._pair(str(run)) == "en → fr"
    assert len(reads) == 1  # the folder's scans expire each minute; the card is not parsed again
    card.write_text(json.dumps({"source_lang": "en", "target_lang": "zh", "note": "longer"}))
    os.utime(card, ns=(1, 1))
    assert folder._pair(str(run)) == "en → zh" and len(reads) == 2  # a changed card is read again
    card.write_text("{not json")
    assert folder._pair(str(run)) is None  # an unreadable card: no pair, and no error
    card.write_text("[1, 2]")
    assert folder._pair(str(run)) == "? → ?"  # a card that is not an object says nothing
    card.unlink()
    assert folder._pair(str(run)) is None
