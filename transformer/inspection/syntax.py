"""Syntactic relations of English sentences, for Voita et al.'s (2019) syntactic heads.

The parser is Link Grammar (CMU; Debian's ``python3-link-grammar`` with ``link-grammar-dictionaries-en``): a
parser and its English dictionary installed by ``apt-get`` and run offline, with nothing downloaded. No
dependency parser does that from the package registries: spaCy's English models are published on GitHub,
not on PyPI, and stanza, UDPipe and benepar download theirs when first run.

Voita et al. read four dependency relations; Link Grammar's links join the same pairs of words:
- nsubj: an S link (subject, left, to its finite verb, right: "animal" – "didn't" in "The animal didn't cross");
- dobj: an O link (verb, left, to its object, right);
- amod: an A link (adjective, left, to its noun, right);
- advmod: an E or EA link (adverb, left, to the verb or adjective it modifies) or an MVa link (verb, left, to
  an adverb after it).
Each relation is read in both directions, as separate roles: ``dep`` (the dependent's row: does its strongest
key fall on its governor?) and ``gov`` (the governor's row, on its dependent). A head has the syntactic role
for one of them when its accuracy beats the relation's baseline (the share of arcs whose words lie at the
relation's most frequent offset, the best a head that always looks at one fixed offset can do) by
SYNTACTIC_MARGIN, as in the paper (10 points).

Words are the sentence's whitespace-separated words; a source piece belongs to the word its ``▁`` starts; a
word's row is its first piece's; a key's word is its piece's word (EOS: no word).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RELATIONS = ("nsubj", "dobj", "amod", "advmod")
DIRECTIONS = ("dep", "gov")  # the dependent's row looks for its governor; the governor's row for its dependent
SYNTACTIC_ROLES = tuple(f"{r}_{d}" for r in RELATIONS for d in DIRECTIONS)
SYNTACTIC_MARGIN = 0.10
DEBIAN_MODULE = Path("/usr/lib/python3/dist-packages/linkgrammar")
DICTIONARY = Path("/usr/share/link-grammar/en")
INSTALL = "apt-get install python3-link-grammar link-grammar-dictionaries-en"

# link label -> (relation, the governor is the link's left word); subscripts are lower case (or *)
_LABELS = (
    (re.compile(r"S[a-z*]*"), "nsubj", False),
    (re.compile(r"O[a-z*]*"), "dobj", True),
    (re.compile(r"A[a-z*]*"), "amod", False),
    (re.compile(r"EA?[a-z*]*"), "advmod", False),
    (re.compile(r"MVa[a-z*]*"), "advmod", True),
)


@dataclass(frozen=True)
class Arc:
    """One relation between two words of a sentence (indices of its whitespace-separated words)."""

    relation: str
    governor: int
    dependent: int


def relation_of(label: str) -> tuple[str, bool] | None:
    """(relation, governor is the left word) of a Link Grammar link label; None for a link not counted."""
    for pattern, relation, left in _LABELS:
        if pattern.fullmatch(label):
            return relation, left
    return None


def word_of_char(text: str) -> list[int]:
    """For each character of text, the index of the whitespace-separated word it is in (-1 for spaces)."""
    out = [-1] * len(text)
    for i, m in enumerate(re.finditer(r"\S+", text)):
        out[m.start() : m.end()] = [i] * (m.end() - m.start())
    return out


def _load_module():
    """Link Grammar's Python binding: importable here, or Debian's (built for Debian's Python 3.11, which
    this interpreter can load when it is a 3.11 too); None when neither is there."""
    try:
        import linkgrammar

        return linkgrammar
    except ImportError:
        pass
    init = DEBIAN_MODULE / "__init__.py"
    if not init.is_file():
        return None
    spec = importlib.util.spec_from_file_location("linkgrammar", init, submodule_search_locations=[str(DEBIAN_MODULE)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["linkgrammar"] = module
    try:
        spec.loader.exec_module(module)
    except ImportError:  # built for another Python
        del sys.modules["linkgrammar"]
        return None
    return module


class Parser:
    """English sentences → their arcs (Link Grammar's best complete linkage); one dictionary for every caller.

    Raises RuntimeError when the parser is not installed (``available()`` says so first)."""

    _lock = threading.Lock()
    _shared: Parser | None = None

    def __init__(self) -> None:
        lg = _load_module()
        if lg is None or not DICTIONARY.is_dir():
            raise RuntimeError(f"Link Grammar is not installed ({INSTALL})")
        self.lg = lg
        self.dictionary = lg.Dictionary(str(DICTIONARY))
        self.options = lg.ParseOptions(
            verbosity=0, linkage_limit=1, min_null_count=0, max_null_count=0, max_parse_time=5
        )

    @classmethod
    def shared(cls) -> Parser:
        with cls._lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    @staticmethod
    def available() -> bool:
        return DICTIONARY.is_dir() and _load_module() is not None

    def arcs(self, text: str) -> tuple[Arc, ...] | None:
        """The sentence's counted arcs, by whitespace word; None when it has no complete parse."""
        from linkgrammar import clinkgrammar as clg

        if not text.strip():  # the library aborts the process on an empty sentence
            return None

        with self._lock:  # one parse at a time on the shared dictionary
            sentence = self.lg.Sentence(text, self.dictionary, self.options)
            linkages = sentence.parse()
            linkage = next(iter(linkages), None)
            if linkage is None or sentence.null_count() > 0:
                return None
            chars = word_of_char(text)
            starts = [linkage.word_char_start(i) for i in range(linkage.num_of_words())]
            words = [chars[s] if 0 <= s < len(chars) else -1 for s in starts]  # the walls: -1
            out = []
            for i in range(linkage.num_of_links()):
                found = relation_of(clg.linkage_get_link_label(linkage._obj, i))
                if found is None:
                    continue
                relation, left_governs = found
                left = words[clg.linkage_get_link_lword(linkage._obj, i)]
                right = words[clg.linkage_get_link_rword(linkage._obj, i)]
                if left < 0 or right < 0 or left == right:
                    continue
                gov, dep = (left, right) if left_governs else (right, left)
                out.append(Arc(relation, gov, dep))
            return tuple(sorted(set(out), key=lambda a: (a.relation, a.governor, a.dependent)))


def parse_all(sources: Sequence[str]) -> tuple[tuple[Arc, ...] | None, ...]:
    """Every sentence's arcs (None: no complete parse), with the shared parser."""
    parser = Parser.shared()
    return tuple(parser.arcs(s) for s in sources)


def piece_words(pieces: Sequence[str], specials: Sequence[bool]) -> list[int | None] | None:
    """The word of each source piece (a ``▁`` starts the next word); None for a special piece (EOS). None when
    no piece starts a word (a tokenizer without ``▁``)."""
    out: list[int | None] = []
    word = -1
    for piece, special in zip(pieces, specials):
        if special:
            out.append(None)
            continue
        if piece.startswith("▁") or word < 0:
            word += 1
        out.append(word)
    return out if word >= 0 else None


@dataclass
class SyntaxCounts:
    """Running sums per syntactic role: hits (L, H), rows, and the word offsets (target − query) seen."""

    hits: dict[str, np.ndarray]
    rows: Counter
    offsets: dict[str, Counter]

    @classmethod
    def empty(cls) -> SyntaxCounts:
        return cls({}, Counter(), {role: Counter() for role in SYNTACTIC_ROLES})

    def add(self, maps: np.ndarray, words: list[int | None], arcs: Sequence[Arc]) -> None:
        """One sentence's encoder maps (L, H, S, S) over its pieces, each piece's word, its arcs."""
        first: dict[int, int] = {}
        for i, w in enumerate(words):
            if w is not None and w not in first:
                first[w] = i
        key_word = np.array([-1 if w is None else w for w in words])
        top_word = key_word[np.asarray(maps).argmax(-1)]  # (L, H, S): the word each row's strongest key is in
        for arc in arcs:
            ends = ((arc.dependent, arc.governor), (arc.governor, arc.dependent))
            for direction, (query, target) in zip(DIRECTIONS, ends):
                if query not in first or target not in first:
                    continue
                role = f"{arc.relation}_{direction}"
                hit = (top_word[:, :, first[query]] == target).astype(float)
                self.hits[role] = self.hits.get(role, 0.0) + hit
                self.rows[role] += 1
                self.offsets[role][target - query] += 1

    def accuracy(self, role: str, shape: tuple[int, int]) -> np.ndarray:
        rows = self.rows.get(role, 0)
        return self.hits[role] / rows if rows else np.full(shape, np.nan)

    def baseline(self, role: str) -> float:
        """The most frequent offset's share of the role's rows (nan without rows)."""
        seen = self.offsets[role]
        total = sum(seen.values())
        return max(seen.values()) / total if total else float("nan")
