"""The typed variants of the coreference corpus: the French of every new construction, the held-out pairs."""

from __future__ import annotations

import pytest

from transformer.corpus import CONNECTIVES, CorpusSpec, french_pronoun, generate, generate_test
from transformer.corpus.lexicon import ADJ_BY_EN, NOUN_BY_EN
from transformer.corpus.variants import (
    ALL_ADJECTIVES,
    ALL_NOUNS,
    EXTRA_NOUN_NAMES,
    Style,
    generate_variants,
    generate_variants_test,
    held_out_variant_pairs,
    make_be_variant,
    make_plain_variant,
    make_variant,
)

N = {n.en: n for n in ALL_NOUNS}
A = {a.en: a for a in ALL_ADJECTIVES}
BECAUSE, SINCE, AS = CONNECTIVES


def v(verb, a, b, adj, to_a, *, a_pl=False, b_pl=False, conn=BECAUSE, **style):
    return make_variant(verb, N[a], a_pl, N[b], b_pl, A[adj], to_a, conn, Style(**style), "winograd")


@pytest.mark.parametrize(
    "ex, src, tgt",
    [
        # the clause first: parce qu'il / puisqu'elle open the sentence, a comma in French, main clause lower case
        (
            lambda: v("cross", "animal", "street", "tired", True, clause_first=True, comma=True),
            "Because it was too tired, the animal didn't cross the street.",
            "Parce qu'il était trop fatigué, l'animal n'a pas traversé la rue.",
        ),
        (
            lambda: v("cross", "pig", "highway", "scared", True, clause_first=True, comma=True),
            "Because it was too scared, the pig didn't cross the highway.",
            "Parce qu'il était trop effrayé, le cochon n'a pas traversé l'autoroute.",
        ),
        (
            lambda: v("cross", "dog", "road", "wide", False, b_pl=True, conn=SINCE, clause_first=True),
            "Since they were too wide the dog didn't cross the roads.",
            "Puisqu'elles étaient trop larges, le chien n'a pas traversé les routes.",
        ),
        # a comma before the connective; "did not" spelled out; car keeps its space
        (
            lambda: v("cross", "cow", "bridge", "tired", True, comma=True, negation="did not", conn=AS),
            "The cow did not cross the bridge, as it was too tired.",
            "La vache n'a pas traversé le pont, car elle était trop fatiguée.",
        ),
        # adverbs: very / so / really / extremely, with the adjective agreeing (f.pl, m.sg)
        (
            lambda: v("cross", "goat", "street", "tired", True, a_pl=True, b_pl=True, adverb=("very", "très")),
            "The goats didn't cross the streets because they were very tired.",
            "Les chèvres n'ont pas traversé les rues parce qu'elles étaient très fatiguées.",
        ),
        (
            lambda: v("cross", "elephant", "river", "lazy", True, adverb=("so", "si")),
            "The elephant didn't cross the river because it was so lazy.",
            "L'éléphant n'a pas traversé la rivière parce qu'il était si paresseux.",
        ),
        (
            lambda: v("reach", "ant", "forest", "dark", False, adverb=("really", "vraiment")),
            "The ant didn't reach the forest because it was really dark.",
            "La fourmi n'a pas atteint la forêt parce qu'elle était vraiment sombre.",
        ),
        (
            lambda: v("cross", "goose", "lake", "deep", False, adverb=("extremely", "extrêmement")),
            "The goose didn't cross the lake because it was extremely deep.",
            "L'oie n'a pas traversé le lac parce qu'il était extrêmement profond.",
        ),
        # lower case and no full stop: the French keeps the typing style
        (
            lambda: v("cross", "animal", "street", "wide", False, lower=True, stop=False),
            "the animal didn't cross the street because it was too wide",
            "l'animal n'a pas traversé la rue parce qu'elle était trop large",
        ),
        (
            lambda: v("cross", "cat", "road", "old", True, negation="didnt", stop=False),
            "The cat didnt cross the road because it was too old",
            "Le chat n'a pas traversé la route parce qu'il était trop vieux",
        ),
        # new verbs: être + participle agreement (entrée, entrées), pouvoir, vouloir, refuser de, quitter
        (
            lambda: v("enter", "spider", "tunnel", "scared", True),
            "The spider didn't enter the tunnel because it was too scared.",
            "L'araignée n'est pas entrée dans le tunnel parce qu'elle était trop effrayée.",
        ),
        (
            lambda: v("enter", "cow", "park", "old", True, a_pl=True, b_pl=True),
            "The cows didn't enter the parks because they were too old.",
            "Les vaches ne sont pas entrées dans les parcs parce qu'elles étaient trop vieilles.",
        ),
        (
            lambda: v("could", "bear", "alley", "narrow", False, negation="did not"),
            "The bear could not cross the alley because it was too narrow.",
            "L'ours n'a pas pu traverser l'allée parce qu'elle était trop étroite.",
        ),
        (
            lambda: v("would", "camel", "beach", "sick", True, a_pl=True, b_pl=True),
            "The camels wouldn't cross the beaches because they were too sick.",
            "Les chameaux ne voulaient pas traverser les plages parce qu'ils étaient trop malades.",
        ),
        (
            lambda: v("refuse", "fly", "yard", "muddy", False),
            "The fly refused to cross the yard because it was too muddy.",
            "La mouche a refusé de traverser la cour parce qu'elle était trop boueuse.",
        ),
        (
            lambda: v("leave", "squirrel", "garden", "slow", True, conn=SINCE),
            "The squirrel didn't leave the garden since it was too slow.",
            "L'écureuil n'a pas quitté le jardin puisqu'il était trop lent.",
        ),
        # contractions with à: au parc, à l'allée, aux forêts; s'est arrêtée
        (
            lambda: v("stop", "wasp", "park", "slippery", False),
            "The wasp stopped at the park because it was too slippery.",
            "La guêpe s'est arrêtée au parc parce qu'il était trop glissant.",
        ),
        (
            lambda: v("stop", "lion", "alley", "hungry", True),
            "The lion stopped at the alley because it was too hungry.",
            "Le lion s'est arrêté à l'allée parce qu'il était trop affamé.",
        ),
        (
            lambda: v("stop", "monkey", "forest", "icy", False, a_pl=True, b_pl=True),
            "The monkeys stopped at the forests because they were too icy.",
            "Les singes se sont arrêtés aux forêts parce qu'elles étaient trop glacées.",
        ),
        # containers: multi-word French (sac à dos), couldn't fit in
        (
            lambda: v("could_fit", "umbrella", "backpack", "small", False),
            "The umbrella couldn't fit in the backpack because it was too small.",
            "Le parapluie ne pouvait pas entrer dans le sac à dos parce qu'il était trop petit.",
        ),
        (
            lambda: v("fit_into", "clock", "crate", "big", True, negation="didn’t"),
            "The clock didn’t fit into the crate because it was too big.",
            "L'horloge ne rentrait pas dans la caisse parce qu'elle était trop grande.",
        ),
    ],
)
def test_french_of_each_construction(ex, src, tgt):
    e = ex()
    assert (e.src, e.tgt) == (src, tgt)
    words = [w.strip(".,").lower() for w in e.src.split()]
    assert words[e.pronoun] in ("it", "they")
    assert french_pronoun(e.tgt) == e.fr_pronoun  # the one detector finds the pronoun in every form


def test_word_indices_follow_the_clause_first_order():
    e = v("cross", "animal", "street", "wide", False, clause_first=True, comma=True)
    words = e.src.split()
    assert (words[e.pronoun], words[e.cue], words[e.antecedent], words[e.others[0]]) == (
        "it",
        "wide,",
        "street.",
        "animal",
    )
    assert e.fr_pronoun == "elle"


def test_car_cannot_open_a_sentence():
    with pytest.raises(ValueError, match="car"):
        v("cross", "dog", "road", "tired", True, conn=AS, clause_first=True)


def test_plain_and_be_variants():
    assert make_plain_variant("enter", N["goose"], True, N["forest"], False, Style(lower=True)).tgt == (
        "les oies ne sont pas entrées dans la forêt."
    )
    e = make_be_variant(N["giraffe"], False, A["old"], Style(adverb=("very", "très"), stop=False))
    assert (e.src, e.tgt) == ("The giraffe was very old", "La girafe était très vieille")


def test_held_out_pairs_never_reach_training():
    spec = CorpusSpec(n_examples=3000, variant_share=0.5)
    held = held_out_variant_pairs(spec)
    assert ("animal", "street") in held
    new_held = {p for p in held if EXTRA_NOUN_NAMES & set(p)}
    assert len(new_held) >= 50  # a share of the new nouns' pairs, not just the base ones
    train = generate_variants(spec, 2000)
    two_noun = [e for e in train if len(e.nouns) == 2]
    assert len(two_noun) > 1500
    assert not any(tuple(sorted(e.nouns)) in held for e in two_noun)
    test = generate_variants_test(spec, 400)
    assert all(tuple(sorted(e.nouns)) in held for e in test)
    assert all(e.fr_pronoun in ("il", "elle", "ils", "elles") for e in test)
    # every kind of variant occurs in the test split
    assert any(e.src[0].islower() for e in test)
    assert any(not e.src.endswith(".") for e in test)
    assert any(e.src.startswith(("Because", "Since", "because", "since")) for e in test)
    assert any(" did not " in e.src or "didnt" in e.src for e in test)
    assert any(f" {adv} " in e.src for e in test for adv in ("very", "so", "really", "extremely"))
    assert any(set(e.nouns) & EXTRA_NOUN_NAMES for e in test)


def test_variant_share_keeps_the_base_corpus_and_its_test_split():
    base = CorpusSpec(n_examples=1000)
    mixed = CorpusSpec(n_examples=1000, variant_share=0.25)
    train0, test0 = generate(base)
    train1, test1 = generate(mixed)
    assert len(train1) == 1000
    assert [e.src for e in train1[:750]] == [e.src for e in train0[:750]]  # the base draws are a prefix
    assert [e.src for e in test1] == [e.src for e in test0] == [e.src for e in generate_test(base)]
    assert {e.template for e in train1[750:]} >= {"enter", "could", "refuse"}


def test_lexicon_entries_are_consistent():
    assert NOUN_BY_EN["animal"] in ALL_NOUNS and ADJ_BY_EN["tired"] in ALL_ADJECTIVES
    assert len({n.en for n in ALL_NOUNS}) == len(ALL_NOUNS)
    assert N["elephant"].elide and N["goose"].elide and not N["lion"].elide and not N["ant"].elide
    assert (N["bear"].fr_pl, N["goose"].en_pl, N["backpack"].fr_pl) == ("ours", "geese", "sacs à dos")
