"""The corpus's words: nouns by class and gender, predicate adjectives with their four French forms, connectives.

Pure data (and the two small constructors that fill in regular plurals and feminines).
A new noun or adjective goes here; the generator draws from these tuples.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class Noun:
    en: str  # singular English
    en_pl: str  # plural English
    fr: str  # French noun, singular, without article
    fr_pl: str  # French plural
    gender: str  # "m" or "f"
    cls: str  # "animal", "place", "content", "container"
    elide: bool = False  # starts with a vowel sound: l'animal


def _n(en: str, fr: str, gender: str, cls: str, en_pl: str | None = None, fr_pl: str | None = None) -> Noun:
    return Noun(en, en_pl or en + "s", fr, fr_pl or fr + "s", gender, cls, fr[0] in "aeiouyâéèêîôûh")


NOUNS: tuple[Noun, ...] = (
    # animals: masculine and feminine
    _n("animal", "animal", "m", "animal", fr_pl="animaux"),
    _n("dog", "chien", "m", "animal"),
    _n("cat", "chat", "m", "animal"),
    _n("horse", "cheval", "m", "animal", fr_pl="chevaux"),
    _n("bird", "oiseau", "m", "animal", fr_pl="oiseaux"),
    _n("rabbit", "lapin", "m", "animal"),
    _n("fox", "renard", "m", "animal", en_pl="foxes"),
    _n("donkey", "âne", "m", "animal"),
    _n("pig", "cochon", "m", "animal"),
    _n("wolf", "loup", "m", "animal", en_pl="wolves"),
    _n("cow", "vache", "f", "animal"),
    _n("goat", "chèvre", "f", "animal"),
    _n("mouse", "souris", "f", "animal", en_pl="mice", fr_pl="souris"),
    _n("turtle", "tortue", "f", "animal"),
    _n("hen", "poule", "f", "animal"),
    _n("giraffe", "girafe", "f", "animal"),
    _n("frog", "grenouille", "f", "animal"),
    _n("bee", "abeille", "f", "animal"),
    _n("owl", "chouette", "f", "animal"),
    _n("duck", "cane", "f", "animal"),
    # places
    _n("street", "rue", "f", "place"),
    _n("road", "route", "f", "place"),
    _n("river", "rivière", "f", "place"),
    _n("avenue", "avenue", "f", "place"),
    _n("square", "place", "f", "place"),
    _n("valley", "vallée", "f", "place"),
    _n("highway", "autoroute", "f", "place"),
    _n("bridge", "pont", "m", "place"),
    _n("path", "chemin", "m", "place"),
    _n("field", "champ", "m", "place"),
    _n("tunnel", "tunnel", "m", "place"),
    _n("canal", "canal", "m", "place", fr_pl="canaux"),
    _n("stream", "ruisseau", "m", "place", fr_pl="ruisseaux"),
    _n("corridor", "couloir", "m", "place"),
    # things that go into containers
    _n("trophy", "trophée", "m", "content", en_pl="trophies"),
    _n("ball", "ballon", "m", "content"),
    _n("book", "livre", "m", "content"),
    _n("cake", "gâteau", "m", "content", fr_pl="gâteaux"),
    _n("computer", "ordinateur", "m", "content"),
    _n("pillow", "oreiller", "m", "content"),
    _n("lamp", "lampe", "f", "content"),
    _n("bottle", "bouteille", "f", "content"),
    _n("guitar", "guitare", "f", "content"),
    _n("plate", "assiette", "f", "content"),
    _n("blanket", "couverture", "f", "content"),
    # containers
    _n("suitcase", "valise", "f", "container"),
    _n("box", "boîte", "f", "container", en_pl="boxes"),
    _n("basket", "corbeille", "f", "container"),
    _n("envelope", "enveloppe", "f", "container"),
    _n("wardrobe", "armoire", "f", "container"),
    _n("bag", "sac", "m", "container"),
    _n("drawer", "tiroir", "m", "container"),
    _n("trunk", "coffre", "m", "container"),
    _n("cupboard", "placard", "m", "container"),
)
NOUN_BY_EN = {n.en: n for n in NOUNS}


class Role(StrEnum):
    """The part a noun plays in a "fit" sentence: "big" and "small" describe a role, whatever the noun."""

    CONTENT = "content"  # what goes in
    CONTAINER = "container"  # what it goes in


@dataclass(frozen=True)
class Adjective:
    en: str
    forms: tuple[str, str, str, str]  # French m.sg, f.sg, m.pl, f.pl
    fits: tuple[str, ...]  # noun classes it can describe
    roles: tuple[Role, ...] = ()  # the roles of a "fit" sentence it describes

    def fr(self, gender: str, plural: bool) -> str:
        return self.forms[(2 if plural else 0) + (1 if gender == "f" else 0)]

    def describes(self, noun: Noun, role: str) -> bool:
        """Whether it can describe this noun in a slot of this role (by the noun's class or by the role)."""
        return noun.cls in self.fits or role in self.roles


def _a(
    en: str,
    ms: str,
    fits: tuple[str, ...],
    fs: str | None = None,
    mp: str | None = None,
    fp: str | None = None,
    roles: tuple[Role, ...] = (),
) -> Adjective:
    fs = fs or (ms if ms.endswith("e") else ms + "e")
    mp = mp or (ms if ms.endswith(("s", "x")) else ms + "s")
    fp = fp or fs + "s"
    return Adjective(en, (ms, fs, mp, fp), fits, roles)


ANIMAL, PLACE = ("animal",), ("place",)
ADJECTIVES: tuple[Adjective, ...] = (
    # fit animals only
    _a("tired", "fatigué", ANIMAL),
    _a("scared", "effrayé", ANIMAL),
    _a("sleepy", "endormi", ANIMAL),
    _a("lazy", "paresseux", ANIMAL, fs="paresseuse"),
    _a("nervous", "nerveux", ANIMAL, fs="nerveuse"),
    _a("hungry", "affamé", ANIMAL),
    _a("weak", "faible", ANIMAL),
    _a("shy", "timide", ANIMAL),
    # fit places only
    _a("wide", "large", PLACE),
    _a("narrow", "étroit", PLACE),
    _a("long", "long", PLACE, fs="longue"),
    _a("busy", "fréquenté", PLACE),
    _a("icy", "glacé", PLACE),
    _a("crowded", "bondé", PLACE),
    _a("flooded", "inondé", PLACE),
    _a("steep", "raide", PLACE),
    # fit both animals and places (the number family's neutral predicates)
    _a("far", "loin", ANIMAL + PLACE, fs="loin", mp="loin", fp="loin"),
    _a("dirty", "sale", ANIMAL + PLACE),
    _a("noisy", "bruyant", ANIMAL + PLACE),
    _a("dangerous", "dangereux", ANIMAL + PLACE, fs="dangereuse"),
    # container sentences: big → the content, small → the container
    _a("big", "grand", (), roles=(Role.CONTENT,)),
    _a("small", "petit", (), roles=(Role.CONTAINER,)),
    _a("large", "gros", (), fs="grosse", roles=(Role.CONTENT,)),
    _a("full", "plein", (), roles=(Role.CONTAINER,)),
)
ADJ_BY_EN = {a.en: a for a in ADJECTIVES}

CONNECTIVES = (("because", "parce que"), ("since", "puisque"), ("as", "car"))
