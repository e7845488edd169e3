"""Sentences whose cross-attention visibly reorders: found by computation, not picked by hand.

For a translation, a cross-attention head's *argmax path* gives, for each French word, the
English word its rows weigh most (a word's weight is the sum over its pieces; a French word's
row is the mean of its pieces' rows). Where French reverses English order ("the selected
file" → "le fichier sélectionné") the path steps back: it crosses the diagonal. An
*inversion* is a pair of French words whose English words come in the other order.

:func:`alignment_head` picks the cross head whose rows are most peaked over a sample (the
one that aligns words), and :func:`find_reorderings` ranks sentences by the inversions of
that head's path on the model's own translations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..attention import AttentionKind, HeadId
from ..decoding import greedy_decode_batch, model_device
from ..evaluate_real import sentence_chrf
from ..model import Transformer
from ..tokenizer import Tokenizer, pad_batch, word_groups


@dataclass(frozen=True)
class Reordering:
    """One sentence, its translation and the argmax path of one cross head."""

    source: str
    translation: str
    head: HeadId
    path: tuple[int, ...]  # for each French word, the index of the English word it attends to most
    inversions: int  # pairs of French words whose English words come in the other order
    swaps: int  # French neighbours whose English words are neighbours the other way round (le fichier sélectionné)
    peak: float  # mean of the path's weights (how sure the head is)
    chrf: float | None = None  # sentence chrF of the translation against a reference, where one was given

    def to_dict(self) -> dict:
        out = {
            "source": self.source,
            "translation": self.translation,
            "layer": self.head.layer,
            "head": self.head.head,
            "path": list(self.path),
            "inversions": self.inversions,
            "swaps": self.swaps,
            "peak": round(self.peak, 3),
        }
        return out if self.chrf is None else {**out, "chrf": round(self.chrf, 1)}


def inversions(path: tuple[int, ...] | list[int]) -> int:
    """Pairs i < j with path[i] > path[j] (0 for a path that never steps back)."""
    return sum(path[i] > path[j] for i in range(len(path)) for j in range(i + 1, len(path)))


def swaps(path: tuple[int, ...] | list[int]) -> int:
    """Neighbours i, i+1 with path[i] == path[i+1] + 1: two English words translated in swapped order."""
    return sum(path[i] == path[i + 1] + 1 for i in range(len(path) - 1))


def word_matrix(weights: torch.Tensor, src_groups: list[list[int]], tgt_groups: list[list[int]]) -> torch.Tensor:
    """(T, S) piece weights -> (target words, source words): rows averaged per French word, columns summed
    per English word."""
    rows = torch.stack([weights[g].mean(0) for g in tgt_groups])  # (Tw, S)
    return torch.stack([rows[:, g].sum(-1) for g in src_groups], dim=1)  # (Tw, Sw)


@torch.no_grad()
def cross_word_maps(
    model: Transformer,
    tokenizer: Tokenizer,
    sources: list[str],
    translations: list[str],
    target_groups: Callable[[list[str]], list[list[int]]] = word_groups,
) -> list[torch.Tensor | None]:
    """Per sentence: (L, H, target words, English words) teacher-forced cross weights over real words
    (EOS left out); None for an empty sentence. target_groups: the target's words (the whitespace rule; for
    Chinese, inspection.languages.target_word_groups)."""
    device = model_device(model)
    out = []
    for s, t in zip(sources, translations):
        src_ids = tokenizer.source_ids(s, max_len=model.config.max_len)
        tgt_in, tgt_out = tokenizer.target_ids(t)
        tgt_in, tgt_out = tgt_in[: model.config.max_len], tgt_out[: model.config.max_len]
        src = pad_batch([src_ids]).to(device)
        tgt = pad_batch([tgt_in]).to(device)
        att = model(src, tgt, return_attention=True).attention.cross  # [L] (1, H, T, S)
        w = torch.stack([a[0] for a in att])  # (L, H, T, S)
        src_groups = word_groups(tokenizer.source_pieces(src_ids[:-1]))  # EOS left out
        tgt_groups = target_groups(tokenizer.target_pieces(tgt_out[:-1]))
        if not src_groups or not tgt_groups:
            out.append(None)
            continue
        L, H = w.shape[:2]
        maps = torch.stack(
            [torch.stack([word_matrix(w[i, h], src_groups, tgt_groups) for h in range(H)]) for i in range(L)]
        )
        out.append(maps)
    return out


def alignment_head(maps: list[torch.Tensor | None]) -> HeadId:
    """The cross head whose word rows are most peaked on average (the head that aligns words)."""
    total = None
    for m in (m for m in maps if m is not None):
        peak = m.amax(-1).mean(-1)  # (L, H)
        total = peak if total is None else total + peak
    layer, head = divmod(int(total.argmax()), total.shape[1])
    return HeadId(AttentionKind.CROSS, layer, head)


def find_reorderings(
    model: Transformer,
    tokenizer: Tokenizer,
    sources: list[str],
    *,
    references: list[str] | None = None,
    min_chrf: float = 0.0,
    top: int = 6,
    max_words: int = 12,
    min_words: int = 4,
    target_groups: Callable[[list[str]], list[list[int]]] = word_groups,
) -> list[Reordering]:
    """The sentences (of sources, min_words..max_words English words) whose alignment head's argmax path, on
    the model's own greedy translation, swaps neighbouring words most often while staying otherwise in
    order (inversions at most twice the swaps); ties go to the more peaked path.

    references (one per source) with min_chrf: only translations whose sentence chrF against their reference is
    at least min_chrf count, so a sidebar example never shows the reordering of a wrong translation."""
    if references is not None and len(references) != len(sources):
        raise ValueError(f"{len(references)} references for {len(sources)} sources")
    refs = references if references is not None else [None] * len(sources)
    kept = [(s, r) for s, r in zip(sources, refs) if min_words <= len(s.split()) <= max_words]
    if not kept:
        return []
    sources = [s for s, _ in kept]
    ids = greedy_decode_batch(model, [tokenizer.source_ids(s) for s in sources])
    translations = [tokenizer.decode(x) for x in ids]
    maps = cross_word_maps(model, tokenizer, sources, translations, target_groups)
    head = alignment_head(maps)  # over every sentence, good translations or not: the head that aligns
    found = []
    for (s, ref), t, m in zip(kept, translations, maps):
        if m is None:
            continue
        chrf = None if ref is None else sentence_chrf(t, ref)
        if chrf is not None and chrf < min_chrf:
            continue
        best = m[head.layer, head.head].max(-1)  # over English words, for each French word
        path = tuple(int(i) for i in best.indices)
        found.append(Reordering(s, t, head, path, inversions(path), swaps(path), float(best.values.mean()), chrf))
    found = [r for r in found if r.swaps > 0 and r.inversions <= 2 * r.swaps]
    found.sort(key=lambda r: (-r.swaps, -r.peak, r.source))
    return found[:top]


def card_examples(card: dict, n: int = 4) -> list[str]:
    """The English sentences of a card's "reordering_examples" (written by scripts/evaluate_real_coref.py),
    read defensively: at most n, each a short non-empty string. Only a model trained on real text has them
    (the same search on a model that never saw such sentences finds nothing meaningful)."""
    train = card.get("train_config") if isinstance(card, dict) else None
    if not (isinstance(train, dict) and train.get("real_data")):
        return []
    entries = card.get("reordering_examples")
    out: list[str] = []
    for e in entries if isinstance(entries, list) else []:
        src = e.get("source") if isinstance(e, dict) else None
        if isinstance(src, str) and src.strip() and len(src) <= 200 and src not in out:
            out.append(src.strip())
    return out[:n]
