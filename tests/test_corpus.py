from __future__ import annotations

import pytest

from transformer.corpus import (
    ADJECTIVES,
    NOUN_BY_EN,
    NOUNS,
    CorpusFormatError,
    CorpusSpec,
    article,
    elide_que,
    generate,
    held_out_pairs,
    read_tsv,
    seed_examples,
    with_a,
    write_tsv,
)

SPEC = CorpusSpec(n_examples=4000, n_test=600)


def test_lexicon_covers_the_required_words_and_both_genders():
    nouns = {n.en for n in NOUNS}
    assert len(nouns) >= 30
    assert {"animal", "dog", "cat", "horse", "cow", "bird", "street", "road", "bridge"} <= nouns
    assert {"tired", "scared", "wide", "narrow", "long"} <= {a.en for a in ADJECTIVES}
    for cls in {n.cls for n in NOUNS}:
        assert {n.gender for n in NOUNS if n.cls == cls} == {"m", "f"}, cls


def test_seed_sentences_are_exact():
    tired, wide = seed_examples()
    assert tired.tgt == "L'animal n'a pas traversé la rue parce qu'il était trop fatigué."
    assert wide.tgt == "L'animal n'a pas traversé la rue parce qu'elle était trop large."
    assert tired.src.split()[tired.antecedent] == "animal" and wide.src.split()[wide.antecedent] == "street"


def test_french_morphology():
    by = {n.en: n for n in NOUNS}
    assert article(by["animal"], False) == "l'animal" and article(by["animal"], True) == "les animaux"
    assert article(by["bridge"], False) == "le pont" and article(by["cow"], False) == "la vache"
    assert with_a(by["bridge"], False) == "au pont" and with_a(by["street"], True) == "aux rues"
    assert with_a(by["avenue"], False) == "à l'avenue"
    assert elide_que("parce que", "elle") == "parce qu'elle" and elide_que("puisque", "ils") == "puisqu'ils"
    assert elide_que("car", "il") == "car il"


def test_generated_french_agrees_with_the_referent():
    train, test = generate(SPEC)
    for ex in train[:2000]:
        if ex.family == "plain":
            continue
        words = ex.src.split()
        ref = words[ex.antecedent].strip(".")
        noun = next(n for n in NOUNS if ref in (n.en, n.en_pl))
        plural = ref == noun.en_pl and noun.en_pl != noun.en or words[ex.pronoun] == "they"
        expected = ("ils" if plural else "il") if noun.gender == "m" else ("elles" if plural else "elle")
        assert ex.fr_pronoun == expected, ex
        assert f"'{expected} " in ex.tgt or f"car {expected} " in ex.tgt, ex
        adj = next(a for a in ADJECTIVES if a.en == words[ex.cue].strip("."))
        assert ex.tgt.endswith(f"trop {adj.fr(noun.gender, plural)}."), ex
    stop = [ex for ex in train if ex.template == "stop"]
    feminine = [ex for ex in stop if NOUN_BY_EN[ex.nouns[0]].gender == "f"]
    assert len(feminine) > 20
    for ex in stop:  # the participle of s'arrêter agrees with its subject: arrêté, arrêtée, arrêtés, arrêtées
        plural = ex.src.split()[1] != ex.nouns[0]
        ending = ("e" if NOUN_BY_EN[ex.nouns[0]].gender == "f" else "") + ("s" if plural else "")
        assert f" arrêté{ending} " in ex.tgt, ex


def test_winograd_predicates_fit_only_the_referent():
    train, _ = generate(SPEC)
    seen = {"winograd": 0, "number": 0, "both": 0, "plain": 0}
    for ex in train:
        seen[ex.family] += 1
    assert all(v > 200 for v in seen.values()), seen
    # the same noun pair appears with both referents, so the template alone cannot decide
    by_pair: dict = {}
    for ex in train:
        if ex.family == "winograd" and ex.template == "cross":
            by_pair.setdefault(ex.nouns, set()).add(ex.fr_pronoun in ("il", "ils") and ex.antecedent == 1)
    assert any(len(v) == 2 for v in by_pair.values())


def test_held_out_pairs_and_the_seed_pair_never_reach_training():
    train, test = generate(SPEC)
    assert not any("animal" in ex.nouns and "street" in ex.nouns for ex in train)
    assert any("animal" in ex.nouns and "street" in ex.nouns for ex in test)

    def pairs(examples):
        return {tuple(sorted((a, b))) for ex in examples for i, a in enumerate(ex.nouns) for b in ex.nouns[i + 1 :]}

    held = held_out_pairs(SPEC)
    assert len(held) > 10
    assert not any(pairs([ex]) & held for ex in train)  # no training sentence names a held-out pair
    assert all(pairs([ex]) & held for ex in test if len(ex.nouns) > 1)
    assert generate(SPEC)[0][:50] == train[:50]  # seeded


def test_three_noun_sentences_need_both_cues():
    train, _ = generate(SPEC)
    triples = [ex for ex in train if ex.family == "both"]
    assert len(triples) > 500
    for ex in triples[:300]:
        words = [w.strip(".") for w in ex.src.split()]
        nouns = [i for i in (ex.antecedent, *ex.others)]
        lemma = {i: next(n for n in NOUNS if words[i] in (n.en, n.en_pl)) for i in nouns}
        plural = {i: words[i] != lemma[i].en for i in nouns}
        adj = next(a for a in ADJECTIVES if a.en == words[ex.cue])
        pronoun_plural = words[ex.pronoun] == "they"
        fits_number = [i for i in nouns if plural[i] == pronoun_plural]
        fits_class = [i for i in nouns if lemma[i].cls in adj.fits]
        assert len(fits_number) == 2 and len(fits_class) == 2, ex.src  # neither cue alone decides
        assert set(fits_number) & set(fits_class) == {ex.antecedent}, ex.src


def test_tsv_round_trip_and_malformed_lines(tmp_path):
    train, _ = generate(CorpusSpec(n_examples=20, n_test=5))
    f = tmp_path / "c.tsv"
    write_tsv(f, train)
    assert read_tsv(f) == [(ex.src, ex.tgt) for ex in train]
    f.write_text("a\tb\nno tab here\nc\td\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="line 2"):
        read_tsv(f)
    f.write_text("a\tb\tc\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="line 1"):
        read_tsv(f)
    f.write_bytes(b"ok\tfine\n\xff\xfe\tbad\n")
    with pytest.raises(CorpusFormatError, match="UTF-8"):
        read_tsv(f)
    f.write_text("", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="no sentence pairs"):
        read_tsv(f)


def test_one_pronoun_detector_for_text_and_pieces():
    from transformer.corpus import french_pronoun, pronoun_piece, pronoun_span

    text = "Les grenouilles n'ont pas traversé le ruisseau puisqu'il était trop paresseux."
    assert french_pronoun(text) == "il" and pronoun_span(text) == (text.index("qu'il") + 3, text.index("qu'il") + 5)
    assert french_pronoun("car elles étaient") == "elles" and french_pronoun("Il était là.") is None
    # the piece "il" inside "grenouilles" is not the pronoun; the one after "puisqu'" is
    pieces = ["▁Les", "▁g", "re", "n", "ou", "il", "les", "▁puisqu", "'", "il", "▁était", ".", "</s>"]
    assert pronoun_piece(pieces) == 9
    assert pronoun_piece(["▁car", "▁elles", "</s>"]) == 1
    assert pronoun_piece(["▁Le", "▁chien", "."]) is None


def test_the_trainer_and_the_upload_check_share_one_line_rule(tmp_path):
    from transformer import jobs

    data = b"hello\tbonjour\r\nno tab here\n\nx\t \ngood\tbon\n"
    pairs, problems = jobs.validate_tsv(data)
    assert (pairs, problems) == (
        2,
        ["line 2: expected source<TAB>target, found 1 field(s)", "line 4: empty source or target"],
    )
    f = tmp_path / "c.tsv"
    f.write_bytes(data)
    with pytest.raises(CorpusFormatError, match=r"c\.tsv, line 2: expected source<TAB>target, found 1 field\(s\)$"):
        read_tsv(f)
    f.write_bytes(b"hello\tbonjour\r\n\ngood\tbon")
    assert read_tsv(f) == [("hello", "bonjour"), ("good", "bon")]
    assert jobs.validate_tsv(f.read_bytes()) == (2, [])
