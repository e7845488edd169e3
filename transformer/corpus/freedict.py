"""English-French word pairs from the FreeDict dictionary (Debian ``dict-freedict-eng-fra``): its dictd index and
dictionary read, and one French word kept per English headword where the committed French text shows it in use
(:class:`FrenchEvidence`). Training only (everyday_words.tsv.gz).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from .everyday import UNSAFE
from .real import RealCorpusError, RealPair

FREEDICT_INDEX = "usr/share/dictd/freedict-eng-fra.index"
FREEDICT_DICT = "usr/share/dictd/freedict-eng-fra.dict.dz"
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _dictd_number(text: str) -> int:
    n = 0
    for ch in text:
        if ch not in _B64:
            raise RealCorpusError(f"not a dictd index number: {text!r}")
        n = n * 64 + _B64.index(ch)
    return n


def read_dictd(index: str, dictionary: bytes) -> dict[str, list[list[str]]]:
    """{headword: senses, each a list of French alternatives} of a FreeDict dictd dictionary (its .index text
    and its uncompressed .dict bytes). An entry is "headword /ipa/" then one line of alternatives, or numbered
    lines ("1. chat, matou"); the headword is taken from the entry (the index folds case and hyphens); the
    00-database-* entries are left out."""
    out: dict[str, list[list[str]]] = {}
    for line in index.splitlines():
        parts = line.split("\t")
        if len(parts) != 3 or parts[0].startswith("00-database") or parts[0].startswith("00database"):
            continue
        offset, length = _dictd_number(parts[1]), _dictd_number(parts[2])
        entry = dictionary[offset : offset + length].decode("utf-8", errors="replace").splitlines()
        if not entry:
            continue
        # the entry's own first line keeps the headword's case and hyphens (the index folds them)
        head = entry[0].split(" /", 1)[0].strip() or parts[0]
        senses = []
        for sense in entry[1:]:
            sense = re.sub(r"^\s*\d+\.\s*", "", sense).strip()
            alternatives = [a.strip() for a in sense.split(",") if a.strip()]
            if alternatives:
                senses.append(alternatives)
        if senses:
            out.setdefault(head, []).extend(senses)
    return out


_WORD_RE = re.compile(r"[a-zà-ÿœæç'-]+")


class FrenchEvidence:
    """What parallel sentences say of a word's French: which French words come with an English word (the pairs
    whose English has it), and how often each French word occurs at all."""

    def __init__(self, pairs: Iterable[RealPair]) -> None:
        self.french: list[frozenset[str]] = []
        self.with_english: dict[str, list[int]] = {}
        self.counts: dict[str, int] = {}
        for i, p in enumerate(pairs):
            fr = frozenset(_WORD_RE.findall(p.tgt.lower()))
            self.french.append(fr)
            for w in fr:
                self.counts[w] = self.counts.get(w, 0) + 1
            for w in set(_WORD_RE.findall(p.src.lower())):
                self.with_english.setdefault(w, []).append(i)

    def score(self, head: str, candidate: str) -> tuple[int, int]:
        """(pairs whose English has every word of head and whose French has every word of candidate, the
        rarest candidate word's count in all the French)."""
        words = _WORD_RE.findall(candidate.lower())
        if not words:
            return (0, 0)
        lists = [self.with_english.get(w, []) for w in _WORD_RE.findall(head.lower())]
        shared = set(min(lists, key=len)).intersection(*map(set, lists)) if lists else set()
        together = sum(all(w in self.french[i] for w in words) for i in shared)
        return together, min(self.counts.get(w, 0) for w in words)


def word_pairs(entries: Mapping[str, list[list[str]]], evidence: FrenchEvidence) -> list[RealPair]:
    """One (English word, French word) pair per lower-case headword of one or two words (capitalised ones are
    names: Abkhazia, Adam): among every alternative of every sense, the one the sentence pairs support best
    (FrenchEvidence.score: most often in the French of sentences whose English has the headword, then most
    frequent in all the French), so that "cat" gives "chat" rather than its first sense "mégère" and "yes"
    gives "oui" rather than "si"; ties go to the earliest. Sorted by headword."""
    out = []
    for head in sorted(entries):
        if not _WORD_RE.fullmatch(head.replace(" ", "")) or len(head.split()) > 2 or head != head.lower():
            continue
        candidates = [a for sense in entries[head] for a in sense if not UNSAFE.search(a) and len(a.split()) <= 3]
        if not candidates:
            continue
        best = max(candidates, key=lambda a: (evidence.score(head, a), -candidates.index(a)))
        out.append(RealPair("freedict", "freedict-eng-fra", head, best))  # a cognate too: train → train
    return out


def extract_freedict(package_root: str | Path, evidence: FrenchEvidence) -> list[RealPair]:
    root = Path(package_root)
    index = (root / FREEDICT_INDEX).read_text(encoding="utf-8")
    dictionary = gzip.decompress((root / FREEDICT_DICT).read_bytes())  # dictzip is gzip
    return word_pairs(read_dictd(index, dictionary), evidence)


# ---------------------------------------------------------------- the split
