"""What a model has seen: the source words of its training corpus, by class where the corpus knows them.

The app names the words of a sentence that never occurred in training and marks the
translation as a guess. The word list comes from the checkpoint itself: the card's
"vocabulary" (written by the trainer), or, for a card without one, the generated corpus
its train_config describes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from .corpus import CONNECTIVES, TEMPLATES, CorpusSpec, Example, generate
from .corpus.variants import ALL_ADJECTIVES, ALL_NOUNS

MAX_WORDS = 50_000
RARE_MAX = 3  # a word seen at most this many times in training is "rare" (the app notes it)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")  # letters and digits of any script; "didn't" is one word


def words_of(text: str) -> list[str]:
    """Lower-cased words of a text, punctuation left out ("didn't" stays one word)."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


@dataclass(frozen=True)
class Vocabulary:
    words: frozenset[str]
    classes: dict[str, list[str]] = field(default_factory=dict)  # class -> words, for display
    rare: dict[str, int] = field(default_factory=dict)  # word -> times seen, for words seen <= RARE_MAX times

    def unseen(self, text: str) -> list[str]:
        """The words of text that never occur in the training sources, in order, once each."""
        out: list[str] = []
        for w in words_of(text):
            if w not in self.words and w not in out:
                out.append(w)
        return out

    def rare_in(self, text: str) -> list[tuple[str, int]]:
        """The words of text seen only a few times in training (<= RARE_MAX), with their counts, once each."""
        out: list[tuple[str, int]] = []
        for w in words_of(text):
            if w in self.rare and all(w != seen for seen, _ in out):
                out.append((w, self.rare[w]))
        return out

    def merged(self, other: Vocabulary) -> Vocabulary:
        """What a model saw over two trainings (a checkpoint's sessions): every word of either; a word rare in one
        and common in the other is not rare; rare in both, the larger count (their corpora overlap)."""
        rare = {
            w: max(n for n in (self.rare.get(w), other.rare.get(w)) if n is not None)
            for w in self.rare.keys() | other.rare.keys()
            if (w in self.rare or w not in self.words) and (w in other.rare or w not in other.words)
        }
        classes = {
            k: sorted(set(self.classes.get(k, ())) | set(other.classes.get(k, ())))
            for k in [*self.classes, *(k for k in other.classes if k not in self.classes)]
        }
        return Vocabulary(self.words | other.words, classes, rare)

    def to_card(self) -> dict:
        rare = {w: n for w, n in sorted(self.rare.items()) if w in self.words}
        return {"words": sorted(self.words)[:MAX_WORDS], "classes": self.classes, "rare": rare}

    @classmethod
    def from_card_entry(cls, entry) -> Vocabulary | None:
        if not isinstance(entry, dict) or not isinstance(entry.get("words"), list):
            return None
        words = frozenset(str(w) for w in entry["words"] if isinstance(w, str))
        classes = entry.get("classes") if isinstance(entry.get("classes"), dict) else {}
        classes = {str(k): [str(w) for w in v if isinstance(w, str)] for k, v in classes.items() if isinstance(v, list)}
        rare = entry.get("rare") if isinstance(entry.get("rare"), dict) else {}
        rare = {str(w): int(n) for w, n in rare.items() if isinstance(n, int) and not isinstance(n, bool)}
        return cls(words, classes, rare)


def _lexicon_classes() -> dict[str, set[str]]:
    classes: dict[str, set[str]] = {"animals": set(), "places": set(), "things": set(), "containers": set()}
    names = {"animal": "animals", "place": "places", "content": "things", "container": "containers"}
    for n in ALL_NOUNS:
        classes[names[n.cls]].update((n.en.lower(), n.en_pl.lower()))
    classes["adjectives"] = {a.en for a in ALL_ADJECTIVES}
    classes["connectives"] = {en for en, _ in CONNECTIVES}
    verbs = set()
    for en, _ in TEMPLATES.values():
        verbs.update(w for w in words_of(en.replace("{didnt}", "didn't")) if not w.startswith(("{", "the", "in", "at")))
    classes["verbs"] = {v for v in verbs if v not in ("a", "b")} | {"crossed"}  # "crossed" is the three-noun frame
    return classes


def from_sources(sources: Iterable[str], lexicon: bool) -> Vocabulary:
    """The vocabulary of training source sentences; with lexicon, grouped by the generator's word classes.
    Words seen at most RARE_MAX times are kept with their counts."""
    counts: Counter[str] = Counter()
    for s in sources:
        counts.update(words_of(s))
    seen = set(counts)
    rare = {w: n for w, n in counts.items() if n <= RARE_MAX}
    if not lexicon:
        return Vocabulary(frozenset(seen), {"words": sorted(seen)[:MAX_WORDS]}, rare)
    classes = {name: sorted(ws & seen) for name, ws in _lexicon_classes().items()}
    classified = set().union(*map(set, classes.values()))
    classes["other"] = sorted(seen - classified)
    return Vocabulary(frozenset(seen), {k: v for k, v in classes.items() if v}, rare)


def training_vocabulary(train: list[Example] | list[tuple[str, str]]) -> Vocabulary:
    """The source words of a training set: generated Examples, (source, target) pairs, or both mixed
    (the generated corpus plus real text; grouped by the lexicon's classes when any Example is there)."""
    lexicon = any(isinstance(ex, Example) for ex in train)
    return from_sources((ex.src if isinstance(ex, Example) else ex[0] for ex in train), lexicon=lexicon)


def for_card(card: dict) -> Vocabulary | None:
    """A checkpoint's training vocabulary: from its card, else regenerated from its corpus spec.

    None when neither is possible (a TSV-trained card without a vocabulary entry).
    """
    if not isinstance(card, dict):
        return None
    stored = Vocabulary.from_card_entry(card.get("vocabulary"))
    if stored is not None:
        return stored
    train = card.get("train_config")
    if not isinstance(train, dict) or train.get("data_file"):
        return None
    return training_vocabulary(generate(CorpusSpec.from_card(card))[0])
