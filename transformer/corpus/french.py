"""French grammar for the generator: articles, elision, contraction with "à", agreement, subject pronouns.

Also the one detector of the French subject pronoun in a translation (:func:`pronoun_span`), which
the evaluation, the probe, the alignment supervision and the explorer all read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lexicon import Noun

FRENCH_PRONOUNS = ("il", "elle", "ils", "elles")  # the subject pronouns whose choice shows the reference


def article(noun: Noun, plural: bool) -> str:
    """le chien / la rue / l'animal / les rues."""
    word = noun.fr_pl if plural else noun.fr
    if plural:
        return f"les {word}"
    if noun.elide:
        return f"l'{word}"
    return f"{'le' if noun.gender == 'm' else 'la'} {word}"


def with_a(noun: Noun, plural: bool) -> str:
    """à + article: au pont, à la rue, à l'avenue, aux rues."""
    word = noun.fr_pl if plural else noun.fr
    if plural:
        return f"aux {word}"
    if noun.elide:
        return f"à l'{word}"
    return f"au {word}" if noun.gender == "m" else f"à la {word}"


def capital(s: str) -> str:
    return s[0].upper() + s[1:]


def elide_que(conj: str, pronoun: str) -> str:
    """parce que + il → parce qu'il; puisque + elle → puisqu'elle; car il."""
    if conj.endswith("que") and pronoun[0] in "aeiouy":
        return conj[:-1] + "'" + pronoun
    return f"{conj} {pronoun}"


def fr_pronoun(gender: str, plural: bool) -> str:
    """The subject pronoun that agrees with a noun: il / elle / ils / elles."""
    return ("ils" if plural else "il") if gender == "m" else ("elles" if plural else "elle")


# ---------------------------------------------------------------- the pronoun detector
# The subject pronoun right after the connective: parce qu'il, puisqu'elle, car ils, ... que elles.
PRONOUN_RE = re.compile(r"(?:qu'|car |que )(" + "|".join(sorted(FRENCH_PRONOUNS, key=len, reverse=True)) + r")\b")


def pronoun_span(text: str) -> tuple[int, int] | None:
    """(begin, end) character offsets of the subject pronoun after the connective in text, else None."""
    m = PRONOUN_RE.search(text)
    return m.span(1) if m else None


def french_pronoun(text: str) -> str | None:
    """The subject pronoun after the connective (parce qu'il, puisqu'elle, car ils ...), else None."""
    span = pronoun_span(text)
    return text[span[0] : span[1]] if span else None


def pronoun_piece(pieces: Sequence[str]) -> int | None:
    """The index of the sentencepiece piece that holds the pronoun :func:`pronoun_span` finds in the
    pieces' text ("▁" read as a space; special pieces such as </s> read as nothing), else None."""
    text, starts = "", []
    for p in pieces:
        starts.append(len(text))
        text += "" if p.startswith("<") and p.endswith(">") else p.replace("▁", " ")
    span = pronoun_span(text)
    if span is None:
        return None
    return max(i for i, s in enumerate(starts) if s <= span[0])
