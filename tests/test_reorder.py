"""Reordering examples chosen by computation: the argmax path of a cross head and its swaps."""

from __future__ import annotations

import pytest
import torch

from transformer.attention import AttentionKind
from transformer.inspection.reorder import alignment_head, find_reorderings, inversions, swaps, word_matrix


def test_paths():
    assert inversions([0, 1, 2, 3]) == 0 and swaps([0, 1, 2, 3]) == 0
    assert inversions([0, 2, 1, 3]) == 1 and swaps([0, 2, 1, 3]) == 1  # the selected file → le fichier sélectionné
    assert inversions([3, 2, 1, 0]) == 6 and swaps([3, 2, 1, 0]) == 3


def test_word_matrix_sums_pieces_of_a_source_word_and_averages_rows_of_a_target_word():
    w = torch.tensor([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # (T=3, S=3) pieces
    m = word_matrix(w, src_groups=[[0], [1, 2]], tgt_groups=[[0, 1], [2]])
    assert torch.allclose(m, torch.tensor([[0.25, 0.75], [0.0, 1.0]]))


def test_alignment_head_is_the_most_peaked():
    flat = torch.full((2, 2, 3, 3), 1 / 3)
    peaked = flat.clone()
    peaked[1, 0] = torch.eye(3)
    head = alignment_head([peaked, None, peaked])
    assert (head.kind, head.layer, head.head) == (AttentionKind.CROSS, 1, 0)


def test_find_reorderings_runs_on_a_model_and_respects_lengths():
    from transformer.checkpoint import load_checkpoint
    from transformer.layout import SHIPPED_ROOT

    ckpt = load_checkpoint(SHIPPED_ROOT / "tiny")
    found = find_reorderings(ckpt.model, ckpt.tokenizer, ["The dog crossed the road.", "Too short"], max_words=8)
    for r in found:  # whatever it finds obeys the rule
        assert r.swaps > 0 and r.inversions <= 2 * r.swaps and len(r.path) == len(r.translation.split())
    assert find_reorderings(ckpt.model, ckpt.tokenizer, ["Too short"]) == []


def test_find_reorderings_keeps_only_translations_close_to_their_reference(monkeypatch):
    """With references, a sentence whose translation scores below min_chrf is never offered; each kept one
    carries its chrF, which is the sentence chrF of its translation against its own reference."""
    from transformer.checkpoint import load_checkpoint
    from transformer.evaluate_real import sentence_chrf
    from transformer.inspection import reorder
    from transformer.layout import SHIPPED_ROOT

    ckpt = load_checkpoint(SHIPPED_ROOT / "tiny")
    # every path reorders, so only the chrF gate decides what is kept
    monkeypatch.setattr(reorder, "swaps", lambda path: 1)
    monkeypatch.setattr(reorder, "inversions", lambda path: 1)
    sources = ["The dog crossed the road.", "The cat saw the small bird.", "Too short"]
    plain = reorder.find_reorderings(ckpt.model, ckpt.tokenizer, sources)
    assert [r.chrf for r in plain] == [None, None] and all("chrf" not in r.to_dict() for r in plain)
    # the references are the model's own translations for the first, nonsense for the second
    refs = [plain[0].translation if plain[0].source == sources[0] else plain[1].translation, "zzzz qqqq", "x"]
    kept = reorder.find_reorderings(ckpt.model, ckpt.tokenizer, sources, references=refs, min_chrf=99.0)
    assert [r.source for r in kept] == [sources[0]] and kept[0].chrf == 100.0 and kept[0].to_dict()["chrf"] == 100.0
    everything = reorder.find_reorderings(ckpt.model, ckpt.tokenizer, sources, references=refs)
    assert {r.source for r in everything} == set(sources[:2])
    for r in everything:
        assert r.chrf == sentence_chrf(r.translation, refs[sources.index(r.source)])
    with pytest.raises(ValueError):
        reorder.find_reorderings(ckpt.model, ckpt.tokenizer, sources, references=refs[:1])


def test_card_examples_are_read_defensively():
    from transformer.inspection.reorder import card_examples

    real = {"train_config": {"real_data": ["libreoffice"]}}
    card = {**real, "reordering_examples": [{"source": "The selected file opens."}, {"source": ""}, "x", {"source": 3}]}
    assert card_examples(card) == ["The selected file opens."]
    assert card_examples({**real, "reordering_examples": "nope"}) == [] and card_examples(None) == []
    many = {**real, "reordering_examples": [{"source": f"Sentence {i} here."} for i in range(9)]}
    assert len(card_examples(many)) == 4
    # a model never trained on real text (e.g. coref-variants, whose card has them) offers none
    assert card_examples({**card, "train_config": {"real_data": []}}) == []
    assert card_examples({k: v for k, v in card.items() if k != "train_config"}) == []
