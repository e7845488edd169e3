"""Everyday sentences typed as a new user would: a held-out test set, written for the project by hand.

``data/typed_everyday.tsv`` holds 125 short English sentences of the kind a class types first (greetings,
family, home, food, weather, school, the town, time, feelings, hobbies, work, animals, shopping, questions,
the past; the last five are the sentences issue 33 quotes), each with one French and one 简体中文 reference
written by hand on 6 December 2026. It is a **test set only**: no corpus, preset or rule reads it, and
``tests/test_typed.py`` checks that none of its English occurs in any committed corpus. Issue 33 asks for
"everyday sentences kept outside the project, typed as a new user would"; the held-out Wesnoth campaigns
(``everyday.py``) stand for them in every training rule, this set measures them directly.

One reference a sentence, so chrF here is lower than a reader's judgement: "tu" where the reference says
"vous" costs characters, and so does any second correct wording.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

TYPED_FILE = Path(__file__).parent / "data" / "typed_everyday.tsv"
TARGETS = ("fr", "zh")


@dataclass(frozen=True)
class TypedSentence:
    topic: str
    en: str
    fr: str
    zh: str


def load_typed(path: Path = TYPED_FILE) -> list[TypedSentence]:
    """Every row of the typed set, in file order (header: topic, en, fr, zh)."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [TypedSentence(r["topic"], r["en"], r["fr"], r["zh"]) for r in rows]


def typed_pairs(target: str, path: Path = TYPED_FILE) -> list[tuple[str, str]]:
    """(English, reference) pairs for a target language, "fr" or "zh"."""
    if target not in TARGETS:
        raise ValueError(f"the typed set has references in {TARGETS}, not {target!r}")
    return [(s.en, getattr(s, target)) for s in load_typed(path)]
