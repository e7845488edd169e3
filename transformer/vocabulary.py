"""What a model has seen: the source words of its training corpus, by class where the corpus knows them.

The app names the words of a sentence that never occurred in training and marks the
translation as a guess. The word list comes from the checkpoint itself: the card's
"vocabulary" (written by the trainer), or, for a card without one, the generated corpus
its train_config describes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .corpus import ADJECTIVES, CONNECTIVES, NOUNS, TEMPLATES, CorpusSpec, Example, generate

MAX_WORDS = 50_000
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")  # letters and digits of any script; "didn't" is one word


def words_of(text: str) -> list[str]:
    """Lower-cased words of a text, punctuation left out ("didn't" stays one word)."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


@dataclass(frozen=True)
class Vocabulary:
    words: frozenset[str]
    classes: dict[str, list[str]] = field(default_factory=dict)  # class -> words, for display

    def unseen(self, text: str) -> list[str]:
        """The words of text that never occur in the training sources, in order, once each."""
        out: list[str] = []
        for w in words_of(text):
            if w not in self.words and w not in out:
                out.append(w)
        return out

    def to_card(self) -> dict:
        return {"words": sorted(self.words)[:MAX_WORDS], "classes": self.classes}

    @classmethod
    def from_card_entry(cls, entry) -> Vocabulary | None:
        if not isinstance(entry, dict) or not isinstance(entry.get("words"), list):
            return None
        words = frozenset(str(w) for w in entry["words"] if isinstance(w, str))
        classes = entry.get("classes") if isinstance(entry.get("classes"), dict) else {}
        classes = {str(k): [str(w) for w in v if isinstance(w, str)] for k, v in classes.items() if isinstance(v, list)}
        return cls(words, classes)


def _lexicon_classes() -> dict[str, set[str]]:
    classes: dict[str, set[str]] = {"animals": set(), "places": set(), "things": set(), "containers": set()}
    names = {"animal": "animals", "place": "places", "content": "things", "container": "containers"}
    for n in NOUNS:
        classes[names[n.cls]].update((n.en.lower(), n.en_pl.lower()))
    classes["adjectives"] = {a.en for a in ADJECTIVES}
    classes["connectives"] = {en for en, _ in CONNECTIVES}
    verbs = set()
    for en, _ in TEMPLATES.values():
        verbs.update(w for w in words_of(en.replace("{didnt}", "didn't")) if not w.startswith(("{", "the", "in", "at")))
    classes["verbs"] = {v for v in verbs if v not in ("a", "b")} | {"crossed"}  # "crossed" is the three-noun frame
    return classes


def from_sources(sources: Iterable[str], lexicon: bool) -> Vocabulary:
    """The vocabulary of training source sentences; with lexicon, grouped by the generator's word classes."""
    seen: set[str] = set()
    for s in sources:
        seen.update(words_of(s))
    if not lexicon:
        return Vocabulary(frozenset(seen), {"words": sorted(seen)[:MAX_WORDS]})
    classes = {name: sorted(ws & seen) for name, ws in _lexicon_classes().items()}
    classified = set().union(*map(set, classes.values()))
    classes["other"] = sorted(seen - classified)
    return Vocabulary(frozenset(seen), {k: v for k, v in classes.items() if v})


def training_vocabulary(train: list[Example] | list[tuple[str, str]]) -> Vocabulary:
    if train and isinstance(train[0], Example):
        return from_sources((ex.src for ex in train), lexicon=True)
    return from_sources((src for src, _ in train), lexicon=False)


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
