"""Head roles with the definitions of Voita et al. (2019), "Analyzing Multi-Head Self-Attention", measured
over held-out sentences (teacher-forced on their references).

- positional: the head's strongest key is the token at relative position −1 (previous) or +1 (next) in at
  least POSITIONAL_SHARE of the query positions that have such a key (self-attention only; a decoder
  query has no +1 key under the look-ahead mask);
- rare-word: its strongest key is the sentence's least frequent source piece (frequency from the model's own
  training corpus, or the source tokenizer's piece scores for a model whose corpus is not known here, such
  as an imported opus-mt model) more often than RARE_RATIO × chance, chance being 1 / (keys of the row)
  averaged over the rows (encoder self-attention and cross-attention: their keys are source pieces);
- syntactic: for a relation (nsubj, dobj, amod, advmod) read in one direction, the share of its arcs whose
  query word's strongest key falls on the related word beats the relation's most-frequent-offset baseline by
  SYNTACTIC_MARGIN (encoder self-attention; the arcs from Link Grammar, Debian's offline parser: syntax.py);
- coreference: the probe's heads (pages/_ui/probe.py marks them), added by the caller.

Everything here is numpy on maps (L, H, T_q, T_k) of one sentence, so a role's definition can be tested on
hand-made patterns; :func:`measure_roles` runs the model over a set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import torch

from ..attention import AttentionKind, HeadId
from ..corpus import CorpusSpec, generate, read_tsv
from ..corpus.real import load_real
from ..decoding import model_device, require_eval
from ..model import Transformer
from ..provenance import is_imported
from ..tokenizer import TokenizerBase
from . import on_model_device
from .heldout import batches, fitting
from .syntax import SYNTACTIC_MARGIN, SYNTACTIC_ROLES, Arc, Parser, SyntaxCounts, parse_all, piece_words

POSITIONAL_SHARE = 0.9
RARE_RATIO = 2.0
ROLE_KINDS = {  # the roles each kind of attention can have (by what its keys are)
    AttentionKind.ENCODER: ("previous", "next", "rare"),
    AttentionKind.DECODER: ("previous",),
    AttentionKind.CROSS: ("rare",),
}


class Role(StrEnum):
    PREVIOUS = "previous"  # positional, −1
    NEXT = "next"  # positional, +1
    RARE = "rare"  # rare-word
    SYNTACTIC = "syntactic"  # a relation's arcs (syntax.py)
    COREFERENCE = "coreference"  # the probe's mark


BADGES = {Role.PREVIOUS: "←", Role.NEXT: "→", Role.RARE: "R", Role.SYNTACTIC: "S", Role.COREFERENCE: "C"}


def positional_counts(maps: np.ndarray, offset: int) -> tuple[np.ndarray, int]:
    """(hits (L, H), rows): rows whose strongest key is at i + offset, among the rows that have such a key.

    maps: (L, H, T_q, T_k) self-attention weights of one sentence (T_q = T_k)."""
    maps = np.asarray(maps)
    T = maps.shape[-2]
    i = np.arange(T)
    has = (i + offset >= 0) & (i + offset < maps.shape[-1])
    if not has.any():
        return np.zeros(maps.shape[:2]), 0
    top = maps.argmax(-1)  # (L, H, T_q)
    return (top[..., has] == (i + offset)[has]).sum(-1).astype(float), int(has.sum())


def rarest_key(frequency: np.ndarray, keys: list[int]) -> int | None:
    """The position of the least frequent piece among keys (the first one on a tie); None when every key is
    special (frequency +inf). frequency: per id, higher = more frequent, +inf for specials."""
    f = np.asarray([frequency[k] if 0 <= k < len(frequency) else np.inf for k in keys], dtype=float)
    if not np.isfinite(f).any():
        return None
    return int(np.argmin(f))


def rare_counts(maps: np.ndarray, rarest: int) -> tuple[np.ndarray, int, float]:
    """(hits (L, H), rows, chance): rows whose strongest key is the rarest key, and the rows' chance sum
    (1 / T_k each). maps: (L, H, T_q, T_k) of one sentence, keys = source pieces."""
    maps = np.asarray(maps)
    Tq, Tk = maps.shape[-2:]
    return (maps.argmax(-1) == rarest).sum(-1).astype(float), Tq, Tq / Tk


@dataclass(frozen=True)
class PieceFrequency:
    """How frequent each source id is: higher = more frequent; +inf for special ids (never the rarest).

    origin: "corpus" (counts over the model's own training sources) or "scores" (the source
    sentencepiece model's piece scores: log-probabilities for a unigram model, merge order for BPE)."""

    values: np.ndarray
    origin: str


def corpus_frequency(tokenizer: TokenizerBase, sources, special: list[int]) -> PieceFrequency:
    """Counts of every source id over the training sources."""
    counts = np.zeros(tokenizer.vocab_size, dtype=float)
    for s in sources:
        ids = np.asarray(tokenizer.encode(s), dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < len(counts))]
        counts += np.bincount(ids, minlength=len(counts))
    counts[special] = np.inf
    return PieceFrequency(counts, "corpus")


def score_frequency(tokenizer: TokenizerBase, special: list[int]) -> PieceFrequency:
    """The source sentencepiece model's score of each id's piece (-inf for a piece it does not know)."""
    sp = tokenizer.source_sp if hasattr(tokenizer, "source_sp") else tokenizer.sp
    values = np.full(tokenizer.vocab_size, -np.inf)
    for i, piece in enumerate(tokenizer.source_pieces(range(tokenizer.vocab_size))):
        j = sp.piece_to_id(piece)
        if sp.id_to_piece(j) == piece and not sp.is_unknown(j):
            values[i] = sp.get_score(j)
    values[special] = np.inf
    return PieceFrequency(values, "scores")


def training_sources(card: dict[str, Any]) -> list[str] | None:
    """The source sentences a checkpoint of ours was trained on, rebuilt from its card; None when not known
    (an imported model, or a --data file that is not here)."""
    train = card.get("train_config") if isinstance(card, dict) else None
    if is_imported(card) or not isinstance(train, dict):
        return None
    data = train.get("data_file")
    if data:
        try:
            sources = [s for s, _ in read_tsv(data)]
        except (OSError, ValueError):
            return None
    else:
        sources = [ex.src for ex in generate(CorpusSpec.from_card(card))[0]]
    if train.get("real_data"):
        sources += [s for s, _ in load_real("train", train["real_data"])]
    return sources


def piece_frequency(tokenizer: TokenizerBase, card: dict[str, Any]) -> PieceFrequency:
    """Counts over the training corpus when the card says what it was, else the piece scores."""
    sp = tokenizer.special
    special = sorted({sp.pad, sp.eos, sp.bos, sp.unk} & set(range(tokenizer.vocab_size)))
    sources = training_sources(card)
    if sources is None:
        return score_frequency(tokenizer, special)
    return corpus_frequency(tokenizer, sources, special)


@dataclass
class RoleCounts:
    """Running sums over sentences, per kind and role: hits (L, H), rows, and chance (rare-word)."""

    hits: dict[tuple[AttentionKind, str], np.ndarray] = field(default_factory=dict)
    rows: dict[tuple[AttentionKind, str], int] = field(default_factory=dict)
    chance: dict[AttentionKind, float] = field(default_factory=dict)
    n_sentences: int = 0

    def add(self, kind: AttentionKind, role: str, hits: np.ndarray, rows: int, chance: float = 0.0) -> None:
        key = (kind, role)
        self.hits[key] = self.hits.get(key, 0.0) + hits
        self.rows[key] = self.rows.get(key, 0) + rows
        if role == "rare":
            self.chance[kind] = self.chance.get(kind, 0.0) + chance

    def add_sentence(
        self, maps: dict[AttentionKind, np.ndarray], rarest: int | None, kinds=tuple(AttentionKind)
    ) -> None:
        """One sentence's maps (L, H, T_q, T_k) per kind, unpadded; rarest: the rarest source position."""
        for kind in kinds:
            for role in ROLE_KINDS[kind]:
                if role == "rare":
                    if rarest is not None:
                        self.add(kind, role, *rare_counts(maps[kind], rarest))
                else:
                    self.add(kind, role, *positional_counts(maps[kind], -1 if role == "previous" else 1))
        self.n_sentences += 1

    def result(self, shape: dict[AttentionKind, tuple[int, int]], origin: str = "") -> HeadRoles:
        shares: dict[AttentionKind, dict[str, np.ndarray]] = {}
        chance: dict[AttentionKind, float] = {}
        for kind, (L, H) in shape.items():
            shares[kind] = {}
            for role in ROLE_KINDS[kind]:
                rows = self.rows.get((kind, role), 0)
                hits = self.hits.get((kind, role))
                shares[kind][role] = hits / rows if rows and hits is not None else np.full((L, H), np.nan)
            rows = self.rows.get((kind, "rare"), 0)
            if "rare" in ROLE_KINDS[kind]:
                chance[kind] = self.chance.get(kind, 0.0) / rows if rows else float("nan")
        return HeadRoles(shares, chance, self.n_sentences, origin)


@dataclass(frozen=True)
class HeadRoles:
    """Per kind and role, the share of rows (L, H) that follow the role's definition; the rare-word chance."""

    shares: dict[AttentionKind, dict[str, np.ndarray]]
    chance: dict[AttentionKind, float]
    n_sentences: int
    frequency_origin: str = ""  # "corpus" or "scores"
    # syntactic roles (encoder shares "nsubj_dep", ...): each one's most-frequent-offset baseline and arcs
    baseline: dict[str, float] = field(default_factory=dict)
    arcs: dict[str, int] = field(default_factory=dict)
    parsed: int = 0  # sentences with a complete parse (0: the parser was not there or parsed none)

    def syntactic(self, head: HeadId) -> tuple[str, float, float] | None:
        """The head's best syntactic role by its margin over the baseline: (role, accuracy, baseline)."""
        s = self.shares.get(AttentionKind(head.kind), {})
        best = None
        for role in SYNTACTIC_ROLES:
            if role in s and not np.isnan(s[role][head.layer, head.head]):
                acc = float(s[role][head.layer, head.head])
                if best is None or acc - self.baseline[role] > best[1] - best[2]:
                    best = (role, acc, self.baseline[role])
        return best

    def roles(self, head: HeadId, coreference: dict[HeadId, float] | None = None) -> list[Role]:
        """The roles a head has, by the definitions above (coreference: the probe's marked heads)."""
        kind = AttentionKind(head.kind)
        s = self.shares[kind]
        out = []
        for role in ("previous", "next"):
            if role in s and s[role][head.layer, head.head] >= POSITIONAL_SHARE:
                out.append(Role(role))
        if "rare" in s and s["rare"][head.layer, head.head] >= RARE_RATIO * self.chance.get(kind, np.inf):
            out.append(Role.RARE)
        best = self.syntactic(head)
        if best is not None and best[1] >= best[2] + SYNTACTIC_MARGIN:
            out.append(Role.SYNTACTIC)
        if coreference and head in coreference:
            out.append(Role.COREFERENCE)
        return out

    def badges(self, kind: AttentionKind, coreference: dict[HeadId, float] | None = None) -> np.ndarray:
        """(L, H) strings: each head's badges (e.g. "← R"), "" for a head without a role."""
        kind = AttentionKind(kind)
        L, H = next(iter(self.shares[kind].values())).shape
        out = np.full((L, H), "", dtype=object)
        for layer in range(L):
            for h in range(H):
                out[layer, h] = " ".join(BADGES[r] for r in self.roles(HeadId(kind, layer, h), coreference))
        return out

    def count(self, role: Role, coreference: dict[HeadId, float] | None = None) -> dict[AttentionKind, int]:
        """How many heads of each kind have the role."""
        out = {}
        for kind, s in self.shares.items():
            L, H = next(iter(s.values())).shape
            out[kind] = sum(role in self.roles(HeadId(kind, la, h), coreference) for la in range(L) for h in range(H))
        return out


@on_model_device
@torch.inference_mode()
def measure_roles(
    model: Transformer,
    tokenizer: TokenizerBase,
    pairs,
    frequency: PieceFrequency,
    progress: Callable[[float], None] | None = None,
    batch_size: int = 32,
    arcs: Sequence[tuple[Arc, ...] | None] | None = None,
) -> HeadRoles:
    """The role shares of every head over (source, reference) pairs, teacher-forced; progress(fraction).

    arcs: each pair's syntactic arcs (syntax.parse_all; None for a sentence without a complete parse), for
    the syntactic roles; without them those are not measured."""
    require_eval(model)
    cfg = model.config
    items = fitting(tokenizer, pairs, cfg.max_len)
    counts = RoleCounts()
    syntax = SyntaxCounts.empty()
    parsed = _parsed_by_ids(tokenizer, pairs, arcs) if arcs is not None else {}
    done = 0
    for src, tgt_in, _ in batches(items, cfg.pad_id, batch_size, model_device(model)):
        att = model(src, tgt_in, return_attention=True).attention
        stacked = {kind: torch.stack(att.of(kind), 1).float().cpu().numpy() for kind in AttentionKind}
        S = (src != cfg.pad_id).sum(1).tolist()
        T = (tgt_in != cfg.pad_id).sum(1).tolist()
        if cfg.bos_id == cfg.pad_id:  # Marian starts with pad: the first position is real
            T = [int((row != cfg.pad_id).sum()) + 1 for row in tgt_in[:, 1:]]
        for b in range(len(S)):
            s, t = S[b], T[b]
            maps = {
                AttentionKind.ENCODER: stacked[AttentionKind.ENCODER][b, :, :, :s, :s],
                AttentionKind.DECODER: stacked[AttentionKind.DECODER][b, :, :, :t, :t],
                AttentionKind.CROSS: stacked[AttentionKind.CROSS][b, :, :, :t, :s],
            }
            ids = src[b, :s].tolist()
            counts.add_sentence(maps, rarest_key(frequency.values, ids))
            if tuple(ids) in parsed:
                syntax.add(maps[AttentionKind.ENCODER], *parsed[tuple(ids)])
        done += len(S)
        if progress is not None:
            progress(done / max(len(items), 1))
    shape = {kind: (cfg.n_layers(kind), cfg.n_heads) for kind in AttentionKind}
    result = counts.result(shape, frequency.origin)
    for role in SYNTACTIC_ROLES:
        if syntax.rows.get(role):
            result.shares[AttentionKind.ENCODER][role] = syntax.accuracy(role, shape[AttentionKind.ENCODER])
            result.baseline[role] = syntax.baseline(role)
            result.arcs[role] = syntax.rows[role]
    return dataclasses.replace(result, parsed=len(parsed))


def measure_all_roles(
    model: Transformer,
    tokenizer: TokenizerBase,
    pairs,
    frequency: PieceFrequency,
    progress: Callable[[float], None] | None = None,
) -> HeadRoles:
    """measure_roles with the syntactic roles too where Link Grammar is installed (the sources parsed here)."""
    arcs = parse_all([src for src, _ in pairs]) if Parser.available() else None
    return measure_roles(model, tokenizer, pairs, frequency, progress, arcs=arcs)


def _parsed_by_ids(
    tokenizer: TokenizerBase, pairs, arcs: Sequence[tuple[Arc, ...] | None]
) -> dict[tuple[int, ...], tuple[list[int | None], tuple[Arc, ...]]]:
    """Source ids -> (each piece's word, the sentence's arcs), for the parsed sentences whose pieces' words
    are the sentence's whitespace-separated words."""
    out = {}
    specials = {tokenizer.special.pad, tokenizer.special.eos, tokenizer.special.bos, tokenizer.special.unk}
    for (src, _), found in zip(pairs, arcs):
        if found is None:
            continue
        ids = tokenizer.source_ids(src)
        pieces = tokenizer.source_pieces(ids)
        words = piece_words(pieces, [i in specials and i != tokenizer.special.unk for i in ids])
        if words is not None and max((w for w in words if w is not None), default=-1) + 1 == len(src.split()):
            out[tuple(ids)] = (words, found)
    return out


def strongest(roles: HeadRoles) -> dict[str, tuple[HeadId, float]]:
    """For each role, the head with the highest share of rows (any kind that can have the role)."""
    out: dict[str, tuple[HeadId, float]] = {}
    for kind, s in roles.shares.items():
        for role, grid in s.items():
            if np.isnan(grid).all():
                continue
            layer, h = np.unravel_index(np.nanargmax(grid), grid.shape)
            if role not in out or grid[layer, h] > out[role][1]:
                out[role] = (HeadId(kind, int(layer), int(h)), float(grid[layer, h]))
    return out


def role_rows(roles: HeadRoles, coreference: dict[HeadId, float] | None = None) -> list[tuple[HeadId, dict]]:
    """One row per head: each role's share (None where the kind has no such role) and its badges."""
    out = []
    for kind, s in roles.shares.items():
        L, H = next(iter(s.values())).shape
        for layer in range(L):
            for h in range(H):
                head = HeadId(kind, layer, h)
                values = {
                    role: (None if role not in s or np.isnan(s[role][layer, h]) else float(s[role][layer, h]))
                    for role in ("previous", "next", "rare")
                }
                values["coreference"] = None if not coreference or head not in coreference else coreference[head]
                values["syntactic"] = roles.syntactic(head)  # (role, accuracy, baseline) or None
                values["badges"] = " ".join(BADGES[r] for r in roles.roles(head, coreference))
                out.append((head, values))
    return out
