"""Typed variants of the coreference sentences: what students type, with its French right.

The base generator (:mod:`.generator`) writes one surface form per sentence. A class types
others, and a model trained on one form invents translations for the rest. This module
draws the same two-noun pronoun sentences (and plain ones) in the forms people type:

- the clause first: "Because it was too tired, the animal didn't cross the street."
  → "Parce qu'il était trop fatigué, l'animal n'a pas traversé la rue."
- a comma before the connective: "…the street, because it was too tired."
- "did not" spelled out (and "didnt", "didn’t"), "could not", "would not";
- adverbs other than "too": very → très, so → si, really → vraiment, extremely → extrêmement;
- lower case, or no final full stop (the French keeps the same style);
- more animals, places and objects (:data:`EXTRA_NOUNS`), with their French gender and number;
- more verbs ("didn't enter" → "n'est pas entrée", with the participle agreeing with an
  être subject; "couldn't cross" → "n'a pas pu traverser"; "refused to cross" → "a refusé de
  traverser"; "wouldn't cross", "didn't leave", "couldn't fit in") and predicates
  (old → vieux / vieille, sick, slow, dark, muddy, slippery, deep).

The French follows the base generator's rules: elision (l'éléphant, parce qu'il, puisqu'elle),
contraction (au parc, aux forêts, à l'allée), agreement of adjective and participle.

Held out as in the base corpus: the base corpus's held-out noun pairs (every "animal" +
"street" sentence among them) and the same share of the pairs that a new noun makes go only
to the variants' test split (:func:`generate_variants_test`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .french import article, capital, elide_que, fr_pronoun, with_a
from .generator import CorpusSpec, Example, held_out_pairs
from .lexicon import ADJECTIVES, CONNECTIVES, NOUNS, Adjective, Noun, _a, _n

ANIMAL, PLACE = ("animal",), ("place",)

EXTRA_NOUNS: tuple[Noun, ...] = (
    # animals
    _n("elephant", "éléphant", "m", "animal"),
    _n("lion", "lion", "m", "animal"),
    _n("tiger", "tigre", "m", "animal"),
    _n("bear", "ours", "m", "animal", fr_pl="ours"),
    _n("monkey", "singe", "m", "animal"),
    _n("snake", "serpent", "m", "animal"),
    _n("squirrel", "écureuil", "m", "animal"),
    _n("zebra", "zèbre", "m", "animal"),
    _n("camel", "chameau", "m", "animal", fr_pl="chameaux"),
    _n("snail", "escargot", "m", "animal"),
    _n("pony", "poney", "m", "animal", en_pl="ponies"),
    _n("ant", "fourmi", "f", "animal"),
    _n("spider", "araignée", "f", "animal"),
    _n("goose", "oie", "f", "animal", en_pl="geese"),
    _n("fly", "mouche", "f", "animal", en_pl="flies"),
    _n("wasp", "guêpe", "f", "animal"),
    _n("caterpillar", "chenille", "f", "animal"),
    _n("ladybird", "coccinelle", "f", "animal"),
    # places
    _n("park", "parc", "m", "place"),
    _n("lake", "lac", "m", "place"),
    _n("garden", "jardin", "m", "place"),
    _n("trail", "sentier", "m", "place"),
    _n("ditch", "fossé", "m", "place", en_pl="ditches"),
    _n("forest", "forêt", "f", "place"),
    _n("beach", "plage", "f", "place", en_pl="beaches"),
    _n("hill", "colline", "f", "place"),
    _n("meadow", "prairie", "f", "place"),
    _n("lane", "ruelle", "f", "place"),
    _n("alley", "allée", "f", "place"),
    _n("yard", "cour", "f", "place"),
    # things that go into containers
    _n("toy", "jouet", "m", "content"),
    _n("hat", "chapeau", "m", "content", fr_pl="chapeaux"),
    _n("violin", "violon", "m", "content"),
    _n("umbrella", "parapluie", "m", "content"),
    _n("painting", "tableau", "m", "content", fr_pl="tableaux"),
    _n("shoe", "chaussure", "f", "content"),
    _n("cup", "tasse", "f", "content"),
    _n("jacket", "veste", "f", "content"),
    _n("statue", "statue", "f", "content"),
    _n("clock", "horloge", "f", "content"),
    # containers
    _n("backpack", "sac à dos", "m", "container", fr_pl="sacs à dos"),
    _n("bucket", "seau", "m", "container", fr_pl="seaux"),
    _n("jar", "bocal", "m", "container", fr_pl="bocaux"),
    _n("crate", "caisse", "f", "container"),
    _n("pocket", "poche", "f", "container"),
)
ALL_NOUNS = NOUNS + EXTRA_NOUNS
EXTRA_NOUN_NAMES = frozenset(n.en for n in EXTRA_NOUNS)

EXTRA_ADJECTIVES: tuple[Adjective, ...] = (
    _a("old", "vieux", ANIMAL, fs="vieille", mp="vieux", fp="vieilles"),
    _a("sick", "malade", ANIMAL),
    _a("slow", "lent", ANIMAL),
    _a("dark", "sombre", PLACE),
    _a("muddy", "boueux", PLACE, fs="boueuse"),
    _a("slippery", "glissant", PLACE),
    _a("deep", "profond", PLACE),
)
ALL_ADJECTIVES = ADJECTIVES + EXTRA_ADJECTIVES

# English adverb → French (the base corpus has only "too" → "trop").
ADVERBS = (("too", "trop"), ("very", "très"), ("so", "si"), ("really", "vraiment"), ("extremely", "extrêmement"))
NEGATIONS = ("didn't", "did not", "didnt", "didn’t")  # how "didn't" gets typed


def _pl(plural: bool, singular: str, plural_form: str) -> str:
    return plural_form if plural else singular


_N_A, _S_EST, _N_EST = ("n'a", "n'ont"), ("s'est", "se sont"), ("n'est", "ne sont")  # indexed by plural


# verb -> (English with {neg} for "didn't"-like forms, French builder, noun classes of A and B)
def _fr_cross(a: Noun, a_pl: bool, b: Noun, b_pl: bool) -> str:
    return f"{article(a, a_pl)} {_N_A[a_pl]} pas traversé {article(b, b_pl)}"


def _participle(stem: str, noun: Noun, plural: bool) -> str:
    return stem + ("e" if noun.gender == "f" else "") + ("s" if plural else "")


VERBS = {
    "cross": ("The {A} {neg} cross the {B}", _fr_cross, ("animal", "place")),
    "reach": (
        "The {A} {neg} reach the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_N_A[ap]} pas atteint {article(b, bp)}",
        ("animal", "place"),
    ),
    "avoid": (
        "The {A} avoided the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_pl(ap, 'a', 'ont')} évité {article(b, bp)}",
        ("animal", "place"),
    ),
    "stop": (
        "The {A} stopped at the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_S_EST[ap]} {_participle('arrêté', a, ap)} {with_a(b, bp)}",
        ("animal", "place"),
    ),
    "enter": (
        "The {A} {neg} enter the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_N_EST[ap]} pas {_participle('entré', a, ap)} dans {article(b, bp)}",
        ("animal", "place"),
    ),
    "leave": (
        "The {A} {neg} leave the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_N_A[ap]} pas quitté {article(b, bp)}",
        ("animal", "place"),
    ),
    "could": (
        "The {A} {could} cross the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_N_A[ap]} pas pu traverser {article(b, bp)}",
        ("animal", "place"),
    ),
    "would": (
        "The {A} {would} cross the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} ne {_pl(ap, 'voulait', 'voulaient')} pas traverser {article(b, bp)}",
        ("animal", "place"),
    ),
    "refuse": (
        "The {A} refused to cross the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_pl(ap, 'a', 'ont')} refusé de traverser {article(b, bp)}",
        ("animal", "place"),
    ),
    "frighten": (
        "The {A} frightened the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} {_pl(ap, 'a', 'ont')} effrayé {article(b, bp)}",
        ("place", "animal"),
    ),
    "fit": (
        "The {A} {neg} fit in the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} ne {_pl(ap, 'rentrait', 'rentraient')} pas dans {article(b, bp)}",
        ("content", "container"),
    ),
    "fit_into": (
        "The {A} {neg} fit into the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} ne {_pl(ap, 'rentrait', 'rentraient')} pas dans {article(b, bp)}",
        ("content", "container"),
    ),
    "could_fit": (
        "The {A} {could} fit in the {B}",
        lambda a, ap, b, bp: f"{article(a, ap)} ne {_pl(ap, 'pouvait', 'pouvaient')} pas entrer dans {article(b, bp)}",
        ("content", "container"),
    ),
}


@dataclass(frozen=True)
class Style:
    """How a sentence is typed."""

    clause_first: bool = False  # "Because it was too tired, the animal …"
    comma: bool = False  # a comma between the clauses
    negation: str = "didn't"  # one of NEGATIONS
    lower: bool = False  # all lower case
    stop: bool = True  # final full stop
    adverb: tuple[str, str] = ADVERBS[0]

    def negate(self, template: str) -> str:
        """The English frame with this style's "didn't" / "couldn't" / "wouldn't"."""
        neg = self.negation
        could = {"didn't": "couldn't", "did not": "could not", "didnt": "couldnt", "didn’t": "couldn’t"}[neg]
        would = could.replace("could", "would")
        return template.replace("{neg}", neg).replace("{could}", could).replace("{would}", would)


def _word_index(words: list[str], target: str, start: int = 0) -> int:
    for i in range(start, len(words)):
        if words[i].strip(".,").lower() == target.lower():
            return i
    raise ValueError(f"{target!r} not in {words!r}")


def _finish(text: str, style: Style) -> str:
    text = text.lower() if style.lower else capital(text)
    return text + ("." if style.stop else "")


def make_variant(
    verb: str,
    a: Noun,
    a_pl: bool,
    b: Noun,
    b_pl: bool,
    adj: Adjective,
    refers_to_a: bool,
    connective: tuple[str, str],
    style: Style,
    family: str,
) -> Example:
    """One pronoun sentence in the given style; the Example's word indices follow the typed words."""
    frame, french, _ = VERBS[verb]
    en_main = style.negate(frame).format(A=a.en_pl if a_pl else a.en, B=b.en_pl if b_pl else b.en)
    fr_main = french(a, a_pl, b, b_pl)
    ref, ref_pl = (a, a_pl) if refers_to_a else (b, b_pl)
    pro_en, be_en = ("they", "were") if ref_pl else ("it", "was")
    pro_fr, be_fr = fr_pronoun(ref.gender, ref_pl), "étaient" if ref_pl else "était"
    adv_en, adv_fr = style.adverb
    en_reason = f"{pro_en} {be_en} {adv_en} {adj.en}"
    fr_reason = f"{be_fr} {adv_fr} {adj.fr(ref.gender, ref_pl)}"
    if style.clause_first:
        if connective[0] not in ("because", "since"):
            raise ValueError("only 'because' and 'since' open a sentence (French 'car' cannot)")
        comma = "," if style.comma else ""
        src = f"{capital(connective[0])} {en_reason}{comma} {en_main[0].lower() + en_main[1:]}"
        tgt = f"{elide_que(connective[1], pro_fr)} {fr_reason}, {fr_main}"
    else:
        comma = "," if style.comma else ""
        src = f"{en_main}{comma} {connective[0]} {en_reason}"
        tgt = f"{fr_main}{comma} {elide_que(connective[1], pro_fr)} {fr_reason}"
    src, tgt = _finish(src, style), _finish(tgt, style)
    words = src.split()
    a_word, b_word = (a.en_pl if a_pl else a.en), (b.en_pl if b_pl else b.en)
    if style.clause_first:
        ip = _word_index(words, pro_en)
        ic = _word_index(words, adj.en, ip + 1)
        ia = _word_index(words, a_word, ic + 1)
        ib = _word_index(words, b_word, ia + 1)
    else:
        ia = _word_index(words, a_word)
        ib = _word_index(words, b_word, ia + 1)
        ip = _word_index(words, pro_en, ib + 1)
        ic = _word_index(words, adj.en, ip + 1)
    return Example(
        src,
        tgt,
        family,
        verb,
        (a.en, b.en),
        antecedent=ia if refers_to_a else ib,
        others=(ib if refers_to_a else ia,),
        pronoun=ip,
        cue=ic,
        fr_pronoun=pro_fr,
    )


def make_plain_variant(verb: str, a: Noun, a_pl: bool, b: Noun, b_pl: bool, style: Style) -> Example:
    """A clause without a pronoun, in the given style (teaches the new nouns and verbs)."""
    frame, french, _ = VERBS[verb]
    en = style.negate(frame).format(A=a.en_pl if a_pl else a.en, B=b.en_pl if b_pl else b.en)
    return Example(_finish(en, style), _finish(french(a, a_pl, b, b_pl), style), "plain", verb, (a.en, b.en))


def make_be_variant(noun: Noun, plural: bool, adj: Adjective, style: Style) -> Example:
    """ "The elephant was very tired." → "L'éléphant était très fatigué." """
    en = f"The {noun.en_pl if plural else noun.en} {'were' if plural else 'was'} {style.adverb[0]} {adj.en}"
    fr = f"{article(noun, plural)} {'étaient' if plural else 'était'} {style.adverb[1]} {adj.fr(noun.gender, plural)}"
    return Example(_finish(en, style), _finish(fr, style), "plain", "be", (noun.en,))


# ---------------------------------------------------------------- the split
def variant_pairs() -> list[tuple[str, tuple[Noun, Noun]]]:
    """(verb, (A, B)) for every verb and every pair of nouns of its two classes."""
    return [
        (verb, (a, b))
        for verb, (_, _, (ca, cb)) in VERBS.items()
        for a in ALL_NOUNS
        if a.cls == ca
        for b in ALL_NOUNS
        if b.cls == cb
    ]


def held_out_variant_pairs(spec: CorpusSpec) -> set[tuple[str, str]]:
    """The base corpus's held-out pairs, plus the same share of the pairs that name a new noun."""
    held = set(held_out_pairs(spec))
    new = sorted({tuple(sorted((a.en, b.en))) for _, (a, b) in variant_pairs()} - held)
    new = [p for p in new if EXTRA_NOUN_NAMES & set(p)]
    rng = random.Random(f"variant-test-pairs-{spec.seed}")
    held |= set(rng.sample(new, max(1, int(len(new) * spec.test_pair_share))))
    return held


def _adjectives_for(noun: Noun, role: str) -> list[Adjective]:
    return [adj for adj in ALL_ADJECTIVES if adj.describes(noun, role)]


def random_style(rng: random.Random, connective: tuple[str, str]) -> Style:
    """A typed form: each variant kind at its own rate, several may combine."""
    return Style(
        clause_first=connective[0] in ("because", "since") and rng.random() < 0.3,
        comma=rng.random() < 0.4,
        negation=NEGATIONS[0] if rng.random() < 0.55 else rng.choice(NEGATIONS[1:]),
        lower=rng.random() < 0.2,
        stop=rng.random() < 0.75,
        adverb=ADVERBS[0] if rng.random() < 0.4 else rng.choice(ADVERBS[1:]),
    )


def sample_variant(
    rng: random.Random, pairs: list[tuple[str, tuple[Noun, Noun]]], plain_share: float = 0.15
) -> Example:
    """One example drawn from pairs: a plain one (plain_share) or a winograd / number pronoun sentence."""
    verb, (a, b) = rng.choice(pairs)
    connective = CONNECTIVES[0] if rng.random() < 0.6 else rng.choice(CONNECTIVES[1:])
    style = random_style(rng, connective)
    a_role, b_role = VERBS[verb][2]  # a noun class, or the role a fit verb's adjectives describe
    if rng.random() < plain_share:
        if rng.random() < 0.5:
            return make_plain_variant(verb, a, rng.random() < 0.3, b, rng.random() < 0.3, style)
        noun, role = (a, a_role) if rng.random() < 0.5 else (b, b_role)
        return make_be_variant(noun, rng.random() < 0.3, rng.choice(_adjectives_for(noun, role)), style)
    refers_to_a = rng.random() < 0.5
    ref, other = (a, b) if refers_to_a else (b, a)
    role, other_role = (a_role, b_role) if refers_to_a else (b_role, a_role)
    if rng.random() < 0.3:  # number: exactly one noun plural, the pronoun's number decides
        a_pl = rng.random() < 0.5
        fits = _adjectives_for(ref, role)
        neutral = [adj for adj in fits if len(adj.fits) > 1]
        adj = rng.choice(neutral if neutral and rng.random() < 0.6 else fits)
        return make_variant(verb, a, a_pl, b, not a_pl, adj, refers_to_a, connective, style, "number")
    plural = rng.random() < 0.25
    exclusive = [adj for adj in _adjectives_for(ref, role) if adj not in _adjectives_for(other, other_role)]
    return make_variant(verb, a, plural, b, plural, rng.choice(exclusive), refers_to_a, connective, style, "winograd")


def _split(spec: CorpusSpec) -> tuple[list, list]:
    held = held_out_variant_pairs(spec)
    train, test = [], []
    for verb, (a, b) in variant_pairs():
        (test if tuple(sorted((a.en, b.en))) in held else train).append((verb, (a, b)))
    return train, test


def generate_variants(spec: CorpusSpec, n: int) -> list[Example]:
    """n training examples in typed forms (none of a held-out noun pair)."""
    train_pairs, _ = _split(spec)
    rng = random.Random(f"variants-{spec.seed}")
    return [sample_variant(rng, train_pairs) for _ in range(n)]


def generate_variants_test(spec: CorpusSpec = CorpusSpec(), n: int | None = None) -> list[Example]:
    """The typed variants' test split: pronoun sentences of held-out noun pairs only."""
    _, test_pairs = _split(spec)
    rng = random.Random(f"variants-test-{spec.seed}")
    n = spec.n_variant_test if n is None else n
    return [sample_variant(rng, test_pairs, plain_share=0.0) for _ in range(n)]
