"""Word alignments read from cross-attention (Chen et al. 2020, "Accurate Word Alignment Induction
from Neural Machine Translation"), and the alignment error rate (Och & Ney 2003).

Teacher forcing: the decoder reads [<s>, y_1, …, y_n] and at input position t predicts y_{t+1}
(position n predicts </s>). A cross-attention map has one row per input position.

- naive: target piece y_i is aligned by the row where it is the decoder's *output*: row i − 1;
- Shift-Att: by the row where it is the decoder's *input*: row i (Chen et al.: the step after).

Each target piece is aligned to the source piece of largest weight (the final source </s> excluded);
a target word and a source word are aligned when any of their pieces are (the paper's word rule).
Word indices count from 0; a link is (source word, target word).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
import torch

Link = tuple[int, int]  # (source word, target word), from 0


class AlignMethod(StrEnum):
    NAIVE = "naive"
    SHIFT = "shift"


def piece_alignment(cross: np.ndarray, method: AlignMethod, n_target: int, n_source: int) -> np.ndarray:
    """For each target piece 1..n_target (index 0..n_target-1), the source piece it aligns to.

    cross: (T, S) weights of one layer (heads averaged), rows = decoder input positions [<s>, y_1, …]
    (at least n_target + 1 rows for Shift-Att, n_target for naive); columns = source pieces, of which
    the first n_source are words' pieces (the rest, e.g. </s>, are never chosen).
    """
    cross = np.asarray(cross, dtype=np.float64)
    method = AlignMethod(method)
    start = 1 if method is AlignMethod.SHIFT else 0
    rows = cross[start : start + n_target, :n_source]
    if rows.shape[0] != n_target:
        raise ValueError(f"{method.value} needs {n_target + start} decoder rows, the map has {cross.shape[0]}")
    return rows.argmax(-1)


def word_links(piece_to_source: np.ndarray, source_words: list[list[int]], target_words: list[list[int]]) -> set[Link]:
    """Word links from piece links: source_words / target_words give each word's piece indices."""
    src_word = {p: w for w, pieces in enumerate(source_words) for p in pieces}
    links = set()
    for t_word, pieces in enumerate(target_words):
        for p in pieces:
            s = src_word.get(int(piece_to_source[p]))
            if s is not None:
                links.add((s, t_word))
    return links


def align(
    cross: np.ndarray, method: AlignMethod, source_words: list[list[int]], target_words: list[list[int]]
) -> set[Link]:
    """Word links of one sentence from one layer's (T, S) cross-attention (heads averaged)."""
    n_target = sum(len(w) for w in target_words)
    n_source = max((p for w in source_words for p in w), default=-1) + 1
    return word_links(piece_alignment(cross, method, n_target, n_source), source_words, target_words)


@dataclass(frozen=True)
class GoldAlignment:
    """A reference alignment: sure links S ⊆ possible links P."""

    sure: frozenset[Link]
    possible: frozenset[Link]

    def __post_init__(self) -> None:
        object.__setattr__(self, "possible", frozenset(self.possible | self.sure))


@dataclass(frozen=True)
class AerCounts:
    """Summed over sentences: |A|, |S|, |A ∩ S|, |A ∩ P|."""

    predicted: int = 0
    sure: int = 0
    hit_sure: int = 0
    hit_possible: int = 0

    def __add__(self, other: AerCounts) -> AerCounts:
        return AerCounts(
            self.predicted + other.predicted,
            self.sure + other.sure,
            self.hit_sure + other.hit_sure,
            self.hit_possible + other.hit_possible,
        )

    @property
    def aer(self) -> float:
        """AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|)."""
        total = self.predicted + self.sure
        return float("nan") if total == 0 else 1.0 - (self.hit_sure + self.hit_possible) / total


def aer_counts(predicted: Iterable[Link], gold: GoldAlignment) -> AerCounts:
    a = set(predicted)
    return AerCounts(len(a), len(gold.sure), len(a & gold.sure), len(a & gold.possible))


def aer(predicted: Iterable[Link], gold: GoldAlignment) -> float:
    return aer_counts(predicted, gold).aer


def aer_per_layer(
    cross_maps: Callable[[int], list[np.ndarray]],
    items: list[tuple[list[list[int]], list[list[int]], GoldAlignment]],
    progress: Callable[[float], None] = lambda fraction: None,
) -> dict[AlignMethod, list[float]]:
    """Corpus AER per layer and method.

    cross_maps(i): sentence i's cross-attention per layer, [(T, S)] heads averaged (teacher forced).
    items: per sentence (source words' pieces, target words' pieces, gold).
    progress(fraction) is called after each sentence.
    """
    totals: dict[AlignMethod, list[AerCounts]] = {}
    for i, (src_words, tgt_words, gold) in enumerate(items):
        layers = cross_maps(i)
        for method in AlignMethod:
            row = totals.setdefault(method, [AerCounts() for _ in layers])
            for layer, cross in enumerate(layers):
                row[layer] = row[layer] + aer_counts(align(cross, method, src_words, tgt_words), gold)
        progress((i + 1) / max(len(items), 1))
    return {method: [c.aer for c in counts] for method, counts in totals.items()}


def parse_links(text: str) -> frozenset[Link]:
    """ "0-0 1-2 3-3" (source-target, from 0) → links; raises ValueError on a bad link."""
    links = set()
    for part in text.split():
        s, sep, t = part.partition("-")
        if not sep or not (s.isascii() and s.isdecimal() and t.isascii() and t.isdecimal()):  # not "²"
            raise ValueError(f"bad link {part!r}: write source-target, e.g. 0-1")
        links.add((int(s), int(t)))
    return frozenset(links)


GOLD_FILE = Path(__file__).parent / "data" / "gold_alignments.tsv"
SECOND_GOLD_FILE = Path(__file__).parent / "data" / "gold_alignments_second.tsv"  # a second annotator's pass


@dataclass(frozen=True)
class GoldSentence:
    """One gold sentence: the texts (words = whitespace split) and their reference alignment."""

    id: str
    en: str
    fr: str
    gold: GoldAlignment


def load_gold(path: Path = GOLD_FILE) -> list[GoldSentence]:
    """The gold set (docs/alignment-gold.md): a TSV with id, en, fr, sure, possible; raises ValueError."""
    out = []
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        if header != ["id", "en", "fr", "sure", "possible"]:
            raise ValueError(f"{path}: expected the columns id, en, fr, sure, possible; found {header}")
        for number, line in enumerate(fh, start=2):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                raise ValueError(f"{path}:{number}: expected 5 columns, found {len(parts)}")
            sid, en, fr, sure, possible = parts
            gold = GoldAlignment(parse_links(sure), parse_links(possible))
            n_en, n_fr = len(en.split()), len(fr.split())
            if any(s >= n_en or t >= n_fr for s, t in gold.possible):
                raise ValueError(f"{path}:{number}: a link points past the sentence's words")
            out.append(GoldSentence(sid, en, fr, gold))
    return out


def cross_attention(model, src_ids: list[int], tgt_in: list[int]) -> list[np.ndarray]:
    """Teacher-forced cross-attention of one pair, per decoder layer, heads averaged: [(T, S)]."""
    device = next(model.parameters()).device
    with torch.no_grad():
        out = model(
            torch.tensor([src_ids], device=device), torch.tensor([tgt_in], device=device), return_attention=True
        )
    return [w[0].float().mean(0).cpu().numpy() for w in out.attention.cross]


def _whitespace_words(pieces: list[str]) -> list[list[int]]:
    """Pieces grouped into whitespace words: a piece starting with "▁" opens a word (an <unk> joins the
    word it is in, unlike tokenizer.word_groups, which keeps special pieces apart)."""
    groups: list[list[int]] = []
    for i, p in enumerate(pieces):
        if not groups or p.startswith("▁"):
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def sentence_words(
    tokenizer, sentence: GoldSentence
) -> tuple[list[int], list[int], list[list[int]], list[list[int]]] | None:
    """(source ids, decoder input, source words' pieces, target words' pieces); None where the pieces'
    words do not match the whitespace words the gold set counts."""
    src_ids = tokenizer.source_ids(sentence.en)
    tgt_in, tgt_out = tokenizer.target_ids(sentence.fr)
    src_words = _whitespace_words(tokenizer.source_pieces(src_ids[:-1]))
    tgt_words = _whitespace_words(tokenizer.target_pieces(tgt_out[:-1]))
    if len(src_words) != len(sentence.en.split()) or len(tgt_words) != len(sentence.fr.split()):
        return None
    return src_ids, tgt_in, src_words, tgt_words


@dataclass(frozen=True)
class AerReport:
    """AER per method and decoder layer over a gold set, and how many sentences it read."""

    aer: dict[AlignMethod, list[float]]
    sentences: int
    skipped: int  # sentences too long for the model, or whose pieces do not make the gold set's words


def gold_aer(
    model, tokenizer, gold: list[GoldSentence], progress: Callable[[float], None] = lambda fraction: None
) -> AerReport:
    """AER per decoder layer, naive and Shift-Att, of a model on a gold set (teacher-forced reference)."""
    items, inputs = [], []
    max_len = model.config.max_len
    for sentence in gold:
        words = sentence_words(tokenizer, sentence)
        if words is None or len(words[0]) > max_len or len(words[1]) > max_len:
            continue
        src_ids, tgt_in, src_words, tgt_words = words
        items.append((src_words, tgt_words, sentence.gold))
        inputs.append((src_ids, tgt_in))
    if not items:
        raise ValueError("no gold sentence fits this model (length, or word pieces)")
    result = aer_per_layer(lambda i: cross_attention(model, *inputs[i]), items, progress)
    return AerReport(result, len(items), len(gold) - len(items))


@dataclass(frozen=True)
class Agreement:
    """Inter-annotator agreement of two gold sets over their common sentences (docs/alignment-gold.md).

    second_vs_first: the second annotator's links (sure + possible) scored as predictions A against the
    first's gold; first_vs_second the reverse. Sure-link precision/recall take the first's sure links
    as the reference. Counts are links summed over the sentences; "links" = sure + possible (P).
    """

    sentences: int
    second_vs_first: AerCounts
    first_vs_second: AerCounts
    sure_first: int
    sure_second: int
    sure_both: int
    links_first: int
    links_second: int
    links_both: int  # in both P
    sure_one_possible_other: int  # sure for one annotator, possible-only for the other
    only_first: int  # in the first's P, not linked at all by the second
    only_second: int  # in the second's P, not linked at all by the first
    identical_sentences: int  # same sure and same possible links

    @property
    def aer_second_vs_first(self) -> float:
        return self.second_vs_first.aer

    @property
    def aer_first_vs_second(self) -> float:
        return self.first_vs_second.aer

    @property
    def sure_precision(self) -> float:
        return float("nan") if self.sure_second == 0 else self.sure_both / self.sure_second

    @property
    def sure_recall(self) -> float:
        return float("nan") if self.sure_first == 0 else self.sure_both / self.sure_first

    @property
    def sure_f1(self) -> float:
        total = self.sure_first + self.sure_second
        return float("nan") if total == 0 else 2 * self.sure_both / total


def agreement(first: list[GoldSentence], second: list[GoldSentence]) -> Agreement:
    """Agreement of two annotators over the ids both annotated; raises ValueError when none is common
    or when a common id's sentences differ."""
    by_id = {s.id: s for s in second}
    pairs = [(a, by_id[a.id]) for a in first if a.id in by_id]
    if not pairs:
        raise ValueError("the two gold sets have no sentence id in common")
    for a, b in pairs:
        if (a.en, a.fr) != (b.en, b.fr):
            raise ValueError(f"{a.id}: the two gold sets hold different sentences")
    fwd, back = AerCounts(), AerCounts()
    counts = np.zeros(10, dtype=int)
    for a, b in pairs:
        g1, g2 = a.gold, b.gold
        fwd = fwd + aer_counts(g2.possible, g1)
        back = back + aer_counts(g1.possible, g2)
        only_possible_1, only_possible_2 = g1.possible - g1.sure, g2.possible - g2.sure
        counts += [
            len(g1.sure),
            len(g2.sure),
            len(g1.sure & g2.sure),
            len(g1.possible),
            len(g2.possible),
            len(g1.possible & g2.possible),
            len(g1.sure & only_possible_2) + len(g2.sure & only_possible_1),
            len(g1.possible - g2.possible),
            len(g2.possible - g1.possible),
            g1 == g2,
        ]
    return Agreement(len(pairs), fwd, back, *(int(c) for c in counts))
