"""Tatoeba's exports and the public test sets (issue 61): the extraction on small fixtures, and the guard that no
public test sentence is trained on."""

from __future__ import annotations

import io
import zipfile

import pytest

from transformer.corpus import tatoeba
from transformer.corpus.real import read_pairs, real_files
from transformer.corpus.tatoeba import (
    TatoebaError,
    held_out_keys,
    match_key,
    merge_exports,
    read_export,
    read_test_set,
    simplified,
    split_tatoeba,
    without_test_sentences,
    zip_member,
)


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_a_zipped_export_with_attribution_and_a_bom_is_read():
    text = "\ufeffHi.\tSalut !\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123 (CM)\nRun!\tCours\u202f!\n\n"
    data = _zip({"fra-eng/fra.txt": text.encode(), "fra-eng/_about.txt": b"about"})
    # spaces collapsed as in real.clean()
    assert read_export(zip_member(data, "fra-eng/fra.txt")) == [("Hi.", "Salut !"), ("Run!", "Cours !")]
    with pytest.raises(TatoebaError, match="cannot read"):
        zip_member(data, "missing.txt")
    with pytest.raises(TatoebaError, match="line 1"):
        read_export(b"only one field\n")
    with pytest.raises(TatoebaError, match="not UTF-8"):
        read_export(b"\xff\xfe\tx\n")


def test_traditional_lines_are_converted_never_dropped_and_repeats_kept_once():
    to_simple = str.maketrans({"應": "应", "該": "该", "現": "现", "課": "课"})
    first = [("Hi.", "你好。"), ("You should do your homework now.", "你应该现在做功课。")]
    later, changed = simplified(
        [("Hi.", "你好。"), ("You should do your homework now.", "你應該現在做功課。"), ("Run.", "跑。")],
        lambda s: s.translate(to_simple),
    )
    assert changed == 1 and len(later) == 3  # converted, none dropped
    assert merge_exports(first, later) == [*first, ("Run.", "跑。")]  # the converted twin is the first file's pair


def test_match_key_folds_case_punctuation_and_apostrophes():
    assert match_key("Tom's here!") == match_key("toms HERE") == match_key("Tom\u2019s  here.")
    assert match_key("Tom is here.") != match_key("Tom's here.")


def test_the_split_removes_test_english_and_keeps_every_translation_of_a_sentence_on_one_side():
    pairs = [("I'm tired.", "Je suis fatigué."), ("I'm tired.", "Je suis fatiguée."), ("Go!", "Va !")] + [
        (f"Sentence number {i}.", f"Phrase numéro {i}.") for i in range(400)
    ]
    split = split_tatoeba([*pairs, pairs[0]], {match_key("GO")}, page="eng-fra", dev_share=0.05)
    assert split.removed_as_test == 1 and split.duplicates == 1
    rows = split.rows()
    assert not any(p.src == "Go!" for _, p in rows)
    sides = {s for s, p in rows if p.src == "I'm tired."}
    assert len(sides) == 1 and sum(p.src == "I'm tired." for _, p in rows) == 2
    assert 0 < len(split.by_split["dev"]) < len(split.by_split["train"])


def test_a_test_set_keeps_only_its_labelled_lines():
    got = read_test_set(b"a\nb\nc\n", "甲\n乙\n丙\n".encode(), b"cmn_Hans\ncmn_Hant\ncmn_Hans\n", "cmn_Hans")
    assert got == [("a", "甲"), ("c", "丙")]
    with pytest.raises(TatoebaError, match="differ in length"):
        read_test_set(b"a\nb\n", b"x\n")


def test_no_public_test_sentence_is_in_any_training_file():
    """Every committed corpus's training split, and what a training run loads from it, holds no English sentence
    of a public test set (Tatoeba test v2021-08-07, FLORES-200 devtest; matched by match_key)."""
    keys = held_out_keys()
    assert len(keys) > 15000
    files = real_files()
    assert {"public_tests", "zh/public_tests", "tatoeba", "zh/tatoeba"} <= set(files)
    for name in ("tatoeba", "zh/tatoeba"):
        assert not [p.src for p in read_pairs(files[name]) if match_key(p.src) in keys], name
    for name, path in files.items():
        if name in tatoeba.PUBLIC_TESTS:
            continue
        train = read_pairs(path, "train")
        kept = without_test_sentences(((p.src, p.tgt) for p in train), lambda p: p[0])
        assert not [s for s, _ in kept if match_key(s) in keys], name


def test_the_training_loader_applies_the_guard(monkeypatch):
    import dataclasses

    from transformer.corpus import CorpusSpec
    from transformer.training import PRESETS
    from transformer.training.data import load_training_examples

    cfg = dataclasses.replace(PRESETS["tiny"], corpus=CorpusSpec(n_examples=10, n_test=10), real_data=("everyday",))
    examples = load_training_examples(cfg)
    keys = held_out_keys()
    srcs = [e[0] if isinstance(e, tuple) else e.src for e in examples]
    assert not [s for s in srcs if match_key(s) in keys]
    assert "Be careful!" not in srcs  # in the everyday corpus's training split, and a Tatoeba test sentence


def test_the_tatoeba_presets_train_on_tatoeba_and_never_on_a_test_set():
    from transformer.training import PRESETS

    for name, corpus in (("en-fr-tatoeba", "tatoeba"), ("en-zh-tatoeba", "zh/tatoeba")):
        for preset in (PRESETS[name], PRESETS[f"{name}-gpu"]):
            assert corpus in preset.real_data and preset.init_from is None  # from scratch
            assert not [n for n in preset.real_data if n.endswith(("public_tests", "gimp"))]
    assert PRESETS["en-fr-tatoeba"].vocab_size == 12000 and PRESETS["en-fr-tatoeba-gpu"].batch_tokens == 24000
    coref, run = PRESETS["en-fr-tatoeba-coref"], PRESETS["en-fr-tatoeba"]  # the run continued, coreference weighed up
    assert coref.init_from == "checkpoints/en-fr-tatoeba/last" and coref.real_data == run.real_data
    assert coref.real_repeat == run.real_repeat and coref.corpus.n_examples == 4 * run.corpus.n_examples
    assert coref.corpus.variant_share == run.corpus.variant_share and coref.align_pronoun == run.align_pronoun
    first = PRESETS["en-fr-tatoeba-coref-first"]  # from nothing, the stage's share from its first step
    assert first.init_from is None and first.corpus == coref.corpus and first.vocab_size == run.vocab_size
    assert (first.real_data, first.real_repeat, first.steps) == (run.real_data, run.real_repeat, run.steps)
    again = PRESETS["en-fr-tatoeba-coref-2"]  # its final weights continued, at twice its share again
    assert (
        again.init_from == "checkpoints/en-fr-tatoeba-coref" and again.corpus.n_examples == 2 * coref.corpus.n_examples
    )
    assert (again.real_data, again.real_repeat, again.lr_factor) == (
        coref.real_data,
        coref.real_repeat,
        coref.lr_factor,
    )
    # the shipped en-fr continued on its own corpora and mix; en-zh's weights moved onto en-zh-tatoeba's vocabularies
    cont = PRESETS["en-fr-tatoeba-continued"]
    assert cont.init_from == "checkpoints/en-fr" and not cont.revocab and cont.corpus == first.corpus
    assert (cont.real_data, cont.real_repeat, cont.vocab_size) == (first.real_data, first.real_repeat, first.vocab_size)
    zh, moved = PRESETS["en-zh-tatoeba"], PRESETS["en-zh-tatoeba-revocab"]
    assert moved.init_from == "checkpoints/en-zh" and moved.revocab and moved.average_every > 0
    assert (moved.real_data, moved.real_repeat) == (zh.real_data, zh.real_repeat)
    more = PRESETS["en-zh-tatoeba-continued"]  # the shipped en-zh (already on those vocabularies) continued
    assert more.init_from == "checkpoints/en-zh" and not more.revocab and more.lr_factor < moved.lr_factor
    assert (more.real_data, more.real_repeat) == (zh.real_data, zh.real_repeat)
    assert (moved.vocab_size, moved.tgt_vocab_size, moved.tgt_character_coverage) == (
        zh.vocab_size,
        zh.tgt_vocab_size,
        zh.tgt_character_coverage,
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["en-fr", "en-zh"])
def test_the_cards_public_figures_hold_on_a_sample(name):
    """The public test figures in a shipped card (scripts/evaluate_public.py --write) re-measured on the first
    sentences of each set: the same translations, the same scores."""
    from transformer.checkpoint import load_checkpoint
    from transformer.evaluate_real import SAMPLE, public_report
    from transformer.layout import SHIPPED_ROOT
    from transformer.provenance import target_language

    ckpt = load_checkpoint(SHIPPED_ROOT / name)
    card = ckpt.card["public_eval"]["greedy"]
    now = public_report(ckpt.model.eval(), ckpt.tokenizer, target_language(ckpt.card), n=SAMPLE)
    for test_set, figures in card.items():
        assert now[test_set]["n_sentences"] == figures["sample"]["n_sentences"] == SAMPLE
        for metric in ("bleu", "chrf"):
            assert now[test_set][metric] == pytest.approx(figures["sample"][metric], abs=0.05), (test_set, metric)
