"""A seeded English→French corpus of Winograd-style sentences, generated here (nothing is downloaded).

In every pronoun sentence the French pronoun (il / elle / ils / elles) needs the
gender of the noun that "it" / "they" refers to, so the translation shows whether
the model resolved the reference:

    The animal didn't cross the street because it was too tired.
    → L'animal n'a pas traversé la rue parce qu'il était trop fatigué.
    The animal didn't cross the street because it was too wide.
    → L'animal n'a pas traversé la rue parce qu'elle était trop large.

Families (``Example.family``):

- ``winograd``: both nouns have the same number, so only the predicate tells which
  noun the pronoun means. With an animal and a place, the predicate fits one class
  (tired → the animal, wide → the street); with two objects ("The trophy didn't fit
  in the suitcase because it was too big / small") it picks a role, not a class.
- ``number``: one noun is singular and the other plural, so the pronoun's own number
  ("it" against "they") tells which; the predicate fits both nouns or agrees with
  the pronoun. This is the cue carried by the pronoun itself.
- ``both``: three nouns, where neither cue alone decides: "The dog and the cats didn't
  cross the street because it was too tired." The predicate leaves two animals, the
  pronoun's number leaves the dog and the street; only together do they pick the dog.
  Whoever resolves it must combine what the pronoun is with what is said of it.
- ``plain``: sentences without a pronoun, which teach the nouns, verbs and agreement.

The French is grammatical: elision (l'animal, parce qu'il, puisqu'elle), contraction
(au pont, aux rues), the past participle agreeing with an être subject (elle s'est
arrêtée), and the predicate adjective agreeing in gender and number with its noun.

Held out: every sentence naming both "animal" and "street" (the seed's own example
is solved by generalisation), and a fixed share of noun pairs, go to the test split.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields

from .french import article, capital, elide_que, fr_pronoun, with_a
from .lexicon import ADJ_BY_EN, ADJECTIVES, CONNECTIVES, NOUN_BY_EN, NOUNS, Adjective, Noun


def en_np(noun: Noun, plural: bool) -> str:
    return noun.en_pl if plural else noun.en


@dataclass(frozen=True)
class Example:
    """One sentence pair and what the evaluation needs to know about it.

    Word indices count whitespace-separated words of ``src`` (punctuation stays on its word).
    """

    src: str
    tgt: str
    family: str  # "winograd" | "number" | "both" | "plain"
    template: str
    nouns: tuple[str, ...]  # English singular lemmas, in sentence order
    antecedent: int = -1  # word index of the antecedent noun
    others: tuple[int, ...] = ()  # word indices of the other candidate nouns
    pronoun: int = -1  # word index of "it" / "they"
    cue: int = -1  # word index of the deciding adjective
    fr_pronoun: str = ""  # il / elle / ils / elles


def _word_index(words: list[str], target: str, start: int = 0) -> int:
    for i in range(start, len(words)):
        if words[i].strip(".,").lower() == target.lower():
            return i
    raise ValueError(f"{target!r} not in {words!r}")


# Two-noun templates: (name, English frame, French frame, first-noun role, second-noun role).
# {A}/{B} English noun phrases, {FA}/{FB} French, {AUX_A} agreement of the French verb with A.
TEMPLATES = {
    "cross": ("The {A} {didnt} cross the {B}", "{FA} {n_a} pas traversé {FB}"),
    "reach": ("The {A} {didnt} reach the {B}", "{FA} {n_a} pas atteint {FB}"),
    "avoid": ("The {A} avoided the {B}", "{FA} {a_} évité {FB}"),
    "stop": ("The {A} stopped at the {B}", "{FA} {se_} {arrete} {aFB}"),
    "frighten": ("The {A} frightened the {B}", "{FA} {a_} effrayé {FB}"),
    "fit": ("The {A} didn't fit in the {B}", "{FA} ne {rentrait} pas dans {FB}"),
}
# Which noun classes fill A and B in each template.
SLOTS = {
    "cross": ("animal", "place"),
    "reach": ("animal", "place"),
    "avoid": ("animal", "place"),
    "stop": ("animal", "place"),
    "frighten": ("place", "animal"),
    "fit": ("content", "container"),
}


def _clause(template: str, a: Noun, a_pl: bool, b: Noun, b_pl: bool) -> tuple[str, str]:
    en, fr = TEMPLATES[template]
    g = a.gender
    en = en.format(A=en_np(a, a_pl), B=en_np(b, b_pl), didnt="didn't")
    fr = fr.format(
        FA=capital(article(a, a_pl)),
        FB=article(b, b_pl),
        aFB=with_a(b, b_pl),
        n_a="n'ont" if a_pl else "n'a",
        a_="ont" if a_pl else "a",
        se_="se sont" if a_pl else "s'est",
        arrete="arrêté" + ("e" if g == "f" else "") + ("s" if a_pl else ""),
        rentrait="rentraient" if a_pl else "rentrait",
    )
    return en, fr


def make_pronoun_example(
    template: str,
    a: Noun,
    a_pl: bool,
    b: Noun,
    b_pl: bool,
    adj: Adjective,
    refers_to_a: bool,
    connective: tuple[str, str],
    family: str,
) -> Example:
    en_main, fr_main = _clause(template, a, a_pl, b, b_pl)
    ref, ref_pl = (a, a_pl) if refers_to_a else (b, b_pl)
    pro_en = "they" if ref_pl else "it"
    be_en = "were" if ref_pl else "was"
    pro_fr = fr_pronoun(ref.gender, ref_pl)
    be_fr = "étaient" if ref_pl else "était"
    src = f"{en_main} {connective[0]} {pro_en} {be_en} too {adj.en}."
    tgt = f"{fr_main} {elide_que(connective[1], pro_fr)} {be_fr} trop {adj.fr(ref.gender, ref_pl)}."
    words = src.split()
    ia = _word_index(words, en_np(a, a_pl))
    ib = _word_index(words, en_np(b, b_pl), ia + 1)
    ip = _word_index(words, pro_en, ib + 1)
    ic = _word_index(words, adj.en, ip + 1)
    return Example(
        src,
        tgt,
        family,
        template,
        (a.en, b.en),
        antecedent=ia if refers_to_a else ib,
        others=(ib if refers_to_a else ia,),
        pronoun=ip,
        cue=ic,
        fr_pronoun=pro_fr,
    )


# Three-noun templates: two nouns of one class (one singular, one plural) and one of the other class.
TRIPLES = {
    # "The A1 and the A2 didn't cross the B"   (A1, A2 animals; B a place)
    "and_cross": ("animal", "animal", "place"),
    # "The A crossed neither the B1 nor the B2"  (A an animal; B1, B2 places)
    "neither_nor": ("animal", "place", "place"),
}


def make_triple_example(
    template: str,
    nouns: tuple[Noun, Noun, Noun],
    plurals: tuple[bool, bool, bool],
    referent: int,
    adj: Adjective,
    connective: tuple[str, str],
) -> Example:
    (n1, n2, n3), (p1, p2, p3) = nouns, plurals
    if template == "and_cross":
        en_main = f"The {en_np(n1, p1)} and the {en_np(n2, p2)} didn't cross the {en_np(n3, p3)}"
        fr_main = f"{capital(article(n1, p1))} et {article(n2, p2)} n'ont pas traversé {article(n3, p3)}"
    else:
        en_main = f"The {en_np(n1, p1)} crossed neither the {en_np(n2, p2)} nor the {en_np(n3, p3)}"
        verb = "n'ont" if p1 else "n'a"
        fr_main = f"{capital(article(n1, p1))} {verb} traversé ni {article(n2, p2)} ni {article(n3, p3)}"
    ref, ref_pl = nouns[referent], plurals[referent]
    pro_fr = fr_pronoun(ref.gender, ref_pl)
    src = f"{en_main} {connective[0]} {'they' if ref_pl else 'it'} {'were' if ref_pl else 'was'} too {adj.en}."
    tgt = (
        f"{fr_main} {elide_que(connective[1], pro_fr)} {'étaient' if ref_pl else 'était'} "
        f"trop {adj.fr(ref.gender, ref_pl)}."
    )
    words = src.split()
    idx, start = [], 0
    for n, pl in zip(nouns, plurals):
        idx.append(_word_index(words, en_np(n, pl), start))
        start = idx[-1] + 1
    ip = _word_index(words, "they" if ref_pl else "it", start)
    ic = _word_index(words, adj.en, ip + 1)
    return Example(
        src,
        tgt,
        "both",
        template,
        tuple(n.en for n in nouns),
        antecedent=idx[referent],
        others=tuple(i for k, i in enumerate(idx) if k != referent),
        pronoun=ip,
        cue=ic,
        fr_pronoun=pro_fr,
    )


def _sample_triple(
    rng: random.Random, connective: tuple[str, str], held: set[tuple[str, str]], want_test: bool
) -> Example:
    """Referent R; a noun of R's class with the other number; a noun of the other class with R's number."""
    for _ in range(1000):
        template = rng.choice(sorted(TRIPLES))
        classes = TRIPLES[template]
        nouns = tuple(rng.choice([n for n in NOUNS if n.cls == c]) for c in classes)
        if len({n.en for n in nouns}) < 3:
            continue
        pair_keys = {tuple(sorted((a.en, b.en))) for i, a in enumerate(nouns) for b in nouns[i + 1 :]}
        if want_test != bool(pair_keys & held):
            continue
        # the two same-class nouns take opposite numbers; the odd one shares the referent's number
        same = [i for i in range(3) if classes.count(classes[i]) == 2]
        odd = next(i for i in range(3) if i not in same)
        referent = rng.choice(same)
        plurals = [False, False, False]
        plurals[referent] = rng.random() < 0.5
        plurals[next(i for i in same if i != referent)] = not plurals[referent]
        plurals[odd] = plurals[referent]
        ref = nouns[referent]
        adj = rng.choice([a for a in ADJECTIVES if a.fits == (ref.cls,)])
        return make_triple_example(template, nouns, tuple(plurals), referent, adj, connective)
    raise RuntimeError("could not draw a three-noun example")


def _adjectives_for(noun: Noun, role: str) -> list[Adjective]:
    return [adj for adj in ADJECTIVES if adj.describes(noun, role)]


def _plain_example(rng: random.Random, a: Noun, b: Noun, template: str) -> Example:
    a_pl, b_pl = rng.random() < 0.3, rng.random() < 0.3
    kind = rng.randrange(3)
    if kind == 0:  # a clause alone
        en, fr = _clause(template, a, a_pl, b, b_pl)
        return Example(en + ".", fr + ".", "plain", template, (a.en, b.en))
    noun, pl = (a, a_pl) if kind == 1 else (b, b_pl)
    role = SLOTS[template][0 if kind == 1 else 1]
    adj = rng.choice(_adjectives_for(noun, role))
    en = f"The {en_np(noun, pl)} {'were' if pl else 'was'} too {adj.en}."
    fr = f"{capital(article(noun, pl))} {'étaient' if pl else 'était'} trop {adj.fr(noun.gender, pl)}."
    return Example(en, fr, "plain", "be", (noun.en,))


@dataclass(frozen=True)
class CorpusSpec:
    """How many examples of each kind; the generator is deterministic given the seed."""

    n_examples: int = 60000
    seed: int = 0
    number_share: float = 0.2  # of pronoun sentences: one singular and one plural noun
    both_share: float = 0.5  # of pronoun sentences: three nouns, number and predicate both needed
    plain_share: float = 0.1  # sentences without a pronoun
    test_pair_share: float = 0.1  # noun pairs reserved for the test split
    n_test: int = 2000
    variant_share: float = 0.0  # of training sentences: typed variants (see .variants), new nouns and verbs
    n_variant_test: int = 1000  # the typed variants' own test split (variants.generate_variants_test)

    @classmethod
    def from_card(cls, card: dict) -> CorpusSpec:
        """The corpus a checkpoint was trained on (its test split is the one to score), else the default."""
        train = card.get("train_config") if isinstance(card, dict) else None
        spec = train.get("corpus") if isinstance(train, dict) else None
        if not isinstance(spec, dict):
            return cls()
        known = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in spec.items() if k in known})
        except TypeError:
            return cls()


def noun_pairs() -> dict[str, list[tuple[Noun, Noun]]]:
    pairs = {}
    for template, (ca, cb) in SLOTS.items():
        pairs[template] = [(a, b) for a in NOUNS if a.cls == ca for b in NOUNS if b.cls == cb]
    return pairs


def held_out_pairs(spec: CorpusSpec) -> set[tuple[str, str]]:
    """The fixed share of (noun, noun) pairs that only the test split uses, and the seed pair."""
    rng = random.Random(f"test-pairs-{spec.seed}")
    all_pairs = sorted({tuple(sorted((a.en, b.en))) for ps in noun_pairs().values() for a, b in ps})
    chosen = set(rng.sample(all_pairs, max(1, int(len(all_pairs) * spec.test_pair_share))))
    chosen.add(("animal", "street"))
    return chosen


def _sample(
    rng: random.Random, spec: CorpusSpec, pairs: list[tuple[str, tuple[Noun, Noun]]], held: set, test: bool
) -> Example:
    template, (a, b) = rng.choice(pairs)
    if rng.random() < spec.plain_share:
        return _plain_example(rng, a, b, template)
    connective = CONNECTIVES[0] if rng.random() < 0.6 else rng.choice(CONNECTIVES[1:])
    draw = rng.random()
    if draw < spec.both_share:
        return _sample_triple(rng, connective, held, test)
    refers_to_a = rng.random() < 0.5
    ref = a if refers_to_a else b
    role = SLOTS[template][0 if refers_to_a else 1]
    if draw < spec.both_share + spec.number_share:
        # the pronoun's number decides: exactly one noun is plural
        a_pl = rng.random() < 0.5
        b_pl = not a_pl
        fits = _adjectives_for(ref, role)
        if template != "fit":  # prefer predicates that fit both nouns, so only the number decides
            neutral = [adj for adj in fits if len(adj.fits) > 1]
            fits = neutral if rng.random() < 0.6 else fits
        return make_pronoun_example(template, a, a_pl, b, b_pl, rng.choice(fits), refers_to_a, connective, "number")
    plural = rng.random() < 0.25
    # only the predicate decides: it must fit the referent and not the other noun
    other = b if refers_to_a else a
    other_role = SLOTS[template][1 if refers_to_a else 0]
    exclusive = [adj for adj in _adjectives_for(ref, role) if adj not in _adjectives_for(other, other_role)]
    return make_pronoun_example(
        template, a, plural, b, plural, rng.choice(exclusive), refers_to_a, connective, "winograd"
    )


def _split_pairs(spec: CorpusSpec) -> tuple[set, list, list]:
    held = held_out_pairs(spec)
    train_pairs, test_pairs_ = [], []
    for template, ps in noun_pairs().items():
        for a, b in ps:
            key = tuple(sorted((a.en, b.en)))
            (test_pairs_ if key in held else train_pairs).append((template, (a, b)))
    return held, train_pairs, test_pairs_


def generate_plain(spec: CorpusSpec, n: int) -> list[Example]:
    """n training sentences of the plain templates (no typed variants), seeded by spec.seed."""
    held, train_pairs, _ = _split_pairs(spec)
    rng = random.Random(spec.seed)
    return [_sample(rng, spec, train_pairs, held, False) for _ in range(n)]


def generate_test(spec: CorpusSpec = CorpusSpec()) -> list[Example]:
    """The test split alone (the same sentences as generate(spec)[1], without building the training split)."""
    held, _, test_pairs_ = _split_pairs(spec)
    test_rng = random.Random(spec.seed + 1)
    return [_sample(test_rng, spec, test_pairs_, held, True) for _ in range(spec.n_test)]


SEED_SENTENCES = (
    (
        "The animal didn't cross the street because it was too tired.",
        "L'animal n'a pas traversé la rue parce qu'il était trop fatigué.",
    ),
    (
        "The animal didn't cross the street because it was too wide.",
        "L'animal n'a pas traversé la rue parce qu'elle était trop large.",
    ),
)


def seed_examples() -> list[Example]:
    a, b = NOUN_BY_EN["animal"], NOUN_BY_EN["street"]
    return [
        make_pronoun_example("cross", a, False, b, False, ADJ_BY_EN[adj], ref, CONNECTIVES[0], "winograd")
        for adj, ref in (("tired", True), ("wide", False))
    ]
