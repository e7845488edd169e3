"""Moving a trained model onto a new vocabulary (transformer/training/revocab.py, TrainConfig.revocab): onto its own
vocabulary it computes exactly what it did; a piece both vocabularies have keeps its trained row, a new one starts
from the rows of the old pieces that spell it; a run that does it learns its vocabulary on its corpora, records the
transfer in its card and resumes from its own last/."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from conftest import stopped_run

from transformer.attention import AttentionKind
from transformer.checkpoint import load_checkpoint
from transformer.config import TransformerConfig
from transformer.layout import REPO_ROOT
from transformer.model import Transformer
from transformer.tokenizer import Tokenizer, train_separate
from transformer.training import PRESETS, Trainer, TrainingError
from transformer.training.revocab import transfer_vocabulary

TINY = load_checkpoint(REPO_ROOT / "checkpoints" / "tiny")
SENTENCES = [
    "the doctor reads a book in the kitchen",
    "my brother wants to become a doctor",
    "the teacher opens the window",
    "le médecin lit un livre dans la cuisine",
    "mon frère veut devenir médecin",
] * 40


def _ids(tokenizer, text: str) -> tuple[torch.Tensor, torch.Tensor]:
    src = torch.tensor([tokenizer.source_ids(text)])
    bos, *_ = tokenizer.target_ids(text)
    return src, torch.tensor([bos])


def test_onto_its_own_vocabulary_the_model_computes_what_it_did():
    model = TINY.model.eval()
    moved, report = transfer_vocabulary(model, TINY.tokenizer, TINY.tokenizer)
    assert report == {"source": {"kept": TINY.tokenizer.vocab_size, "composed": 0, "fresh": 0}}
    src, tgt = _ids(TINY.tokenizer, "the cat sat on the mat")
    with torch.no_grad():
        a, b = model(src, tgt, return_attention=True), moved(src, tgt, return_attention=True)
    torch.testing.assert_close(b.logits, a.logits, rtol=0, atol=0)
    for kind in AttentionKind:
        for x, y in zip(a.attention.of(kind), b.attention.of(kind), strict=True):
            torch.testing.assert_close(y, x, rtol=0, atol=0)
    assert not {p.data_ptr() for p in model.parameters()} & {p.data_ptr() for p in moved.parameters()}


def test_a_new_vocabulary_keeps_shared_pieces_and_spells_new_ones_from_old_rows():
    old = TINY.tokenizer
    new = Tokenizer.train(iter(SENTENCES), vocab_size=120)
    moved, report = transfer_vocabulary(TINY.model, old, new, seed=1)
    assert moved.config.vocab_size == new.vocab_size == 120
    assert sum(report["source"].values()) == 120 and report["source"]["kept"] >= 4  # at least the special tokens
    assert report["source"]["composed"] > 0
    old_emb, new_emb = TINY.model.src_embed.weight, moved.src_embed.weight
    old_ids = {p: i for i, p in enumerate(old.source_pieces(range(old.vocab_size)))}
    composed = 0
    for i, piece in enumerate(new.source_pieces(range(new.vocab_size))):
        if piece in old_ids:
            torch.testing.assert_close(new_emb[i], old_emb[old_ids[piece]], rtol=0, atol=0)
        else:
            parts = [j for j in old.encode(piece.replace("▁", " ").strip()) if j != old.special.unk]
            if parts:
                torch.testing.assert_close(new_emb[i], old_emb[parts].mean(0), rtol=1e-6, atol=1e-7)
                composed += 1
    assert composed == report["source"]["composed"]
    # the tied projection is the new embedding; every other weight is the old model's
    assert moved.generator.weight.data_ptr() == moved.tgt_embed.weight.data_ptr()
    old_state = TINY.model.state_dict()
    for name, value in moved.state_dict().items():
        if "embed" not in name and "generator" not in name:
            torch.testing.assert_close(value, old_state[name], rtol=0, atol=0, msg=name)


def test_separate_vocabularies_move_side_by_side():
    pairs = [(s, s.upper()) for s in SENTENCES]
    old = train_separate((s for s, _ in pairs), (t for _, t in pairs), 80, 60)
    new = train_separate((s for s, _ in pairs), (t for _, t in pairs), 100, 70)
    torch.manual_seed(0)
    model = Transformer(TransformerConfig.preset("tiny", vocab_size=80, tgt_vocab_size=60))
    moved, report = transfer_vocabulary(model, old, new)
    assert (moved.config.vocab_size, moved.config.tgt_vocab_size) == (100, 70)
    assert set(report) == {"source", "target"} and sum(report["target"].values()) == 70
    shared = set(new.target_vocab) & set(old.target_vocab)
    assert report["target"]["kept"] == len(shared) > 4
    for piece in shared:  # each side's rows come from that side's table
        i, j = new.target_vocab[piece], old.target_vocab[piece]
        torch.testing.assert_close(moved.tgt_embed.weight[i], model.tgt_embed.weight[j], rtol=0, atol=0)
    for piece in set(new.vocab) & set(old.vocab):
        i, j = new.vocab[piece], old.vocab[piece]
        torch.testing.assert_close(moved.src_embed.weight[i], model.src_embed.weight[j], rtol=0, atol=0)
    with pytest.raises(ValueError, match="separate vocabularies"):
        transfer_vocabulary(TINY.model, TINY.tokenizer, new)


@pytest.mark.slow  # trains two tiny runs
def test_a_run_moves_its_starting_checkpoint_onto_its_own_vocabulary_records_it_and_resumes(tmp_path):
    tiny = dataclasses.replace(PRESETS["tiny"], steps=6, snapshot_steps=(0,), checkpoint_every=100)
    start = tmp_path / "start"
    Trainer(dataclasses.replace(tiny, steps=3, snapshot_steps=()), start).train()
    cfg = dataclasses.replace(tiny, init_from=str(start), revocab=True, vocab_size=tiny.vocab_size + 40)
    straight = tmp_path / "straight"
    Trainer(cfg, straight).train()
    final, first = load_checkpoint(straight), load_checkpoint(start)
    assert final.model.config.vocab_size == tiny.vocab_size + 40 != first.model.config.vocab_size
    revocab = final.card["init_from"]["revocab"]["source"]
    assert sum(revocab.values()) == final.model.config.vocab_size and revocab["kept"] > 0
    # step 0: the moved model, with every weight past the embeddings the starting checkpoint's
    s0 = load_checkpoint(straight / "snapshots" / "step-000000")
    first_state = first.model.state_dict()
    for name, value in s0.model.state_dict().items():
        if "embed" not in name and "generator" not in name:
            torch.testing.assert_close(value, first_state[name], rtol=0, atol=0, msg=name)
    # stopped after step 4 and resumed from its own last/ (already on the new vocabulary): the same weights
    out = tmp_path / "resumed"
    assert stopped_run(cfg, out, 4)["stopped"]
    Trainer(cfg, out).train()
    resumed = load_checkpoint(out)
    assert resumed.tokenizer.files() == final.tokenizer.files()
    for k, v in final.model.state_dict().items():
        torch.testing.assert_close(resumed.model.state_dict()[k], v, rtol=0, atol=0)
    with pytest.raises(TrainingError, match="needs init_from"):
        Trainer(dataclasses.replace(tiny, revocab=True), tmp_path / "bad").train()


def test_the_shipped_en_zh_reads_a_classs_words_whole_on_its_moved_vocabulary():
    """Issue 61: the manuals' vocabulary cut "doctor" into ▁do ctor (and 医生 became 扇形的医生); en-zh's tenth
    session moved it onto a vocabulary learnt with Tatoeba's sentences in, and its card says how many rows moved."""
    en_zh = load_checkpoint(REPO_ROOT / "checkpoints" / "en-zh")
    tok = en_zh.tokenizer
    assert tok.source_pieces(tok.encode("My brother wants to become a doctor.")) == [
        "▁My", "▁brother", "▁wants", "▁to", "▁become", "▁a", "▁doctor", ".",
    ]  # fmt: skip
    start = en_zh.card["init_from"]  # each later session nests the one it continued: find the one that moved it
    while "revocab" not in start:
        start = start["init_from"]
    moved = start["revocab"]
    for side, size in (("source", tok.vocab_size), ("target", tok.target_vocab_size)):
        assert sum(moved[side].values()) == size and moved[side]["kept"] > size / 2
