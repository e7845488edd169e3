"""A lecture's questions, answered by the model: each answer is computed from the model's own numbers at the
moment the teacher asks, never written by hand.

Three kinds (:class:`QuestionKind`):
- ATTENDS: "which word does this token attend to most in head L·H?" The row of the head's map (Eq. 1's
  softmax(QKᵀ/√d_k)) that the token queries; the answer is its largest weight.
- NEXT: "what will the decoder write next?" The five most probable pieces at one decoding step (the
  softmax over the output layer, §3.4), shuffled; the answer is the most probable.
- RESOLVES: "which head resolves 'it'?" Every head of the kind where the checkpoint decides il/elle; the
  answer is the head whose pronoun row finds the antecedent most often on the held-out coreference sentences
  (the card's probe, measured after training: transformer/evaluate.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ..analysis import Analysis
from ..attention import AttentionKind, HeadId
from ..config import TransformerConfig
from .card import probe_scores, route_kind


class QuestionKind(StrEnum):
    ATTENDS = "attends"
    NEXT = "next"
    RESOLVES = "resolves"


class NoQuestion(ValueError):
    """The view holds nothing to ask about (no such row, no probe in the card); the message says why."""


@dataclass(frozen=True)
class Quiz:
    """A question's options, the model's answer (an index into options) and the numbers that give it.

    evidence[i] is option i's number: its attention weight, its probability, or its probe score. grid is the map
    that gives the answer, shown at the reveal: ATTENDS, the head's whole (T_q, T_k) map, the asked row at `row`;
    RESOLVES, every head's probe score (layers × heads); NEXT has none (its evidence is the whole distribution's top).
    """

    kind: QuestionKind
    options: tuple[str, ...]
    answer: int
    evidence: tuple[float, ...]
    head: HeadId | None = None  # ATTENDS: the head asked about
    token: str = ""  # ATTENDS: the query token; NEXT: the last piece written before the step
    grid: tuple[tuple[float, ...], ...] = ()
    grid_rows: tuple[str, ...] = ()
    grid_cols: tuple[str, ...] = ()
    row: int = -1  # ATTENDS: the asked row of grid

    def __post_init__(self) -> None:
        assert len(self.options) == len(self.evidence) and 0 <= self.answer < len(self.options)


def attends(a: Analysis, head: HeadId, row: int) -> Quiz:
    """Which key the query `row` of `head` weighs most (ties: the first, as argmax)."""
    maps = a.maps(head.kind)
    if not 0 <= row < maps.shape[-2]:
        raise NoQuestion(f"row {row} is not in the {head.kind.value} map ({maps.shape[-2]} rows)")
    weights = np.asarray(maps[head.layer, head.head, row], dtype=np.float64)
    rows, cols = a.labels(head.kind)
    if head.kind is AttentionKind.DECODER:  # the masked keys after the row are never options
        weights, cols = weights[: row + 1], cols[: row + 1]
    return Quiz(
        QuestionKind.ATTENDS,
        tuple(cols),
        int(np.argmax(weights)),
        tuple(float(w) for w in weights),
        head=head,
        token=rows[row],
        grid=tuple(tuple(float(w) for w in r) for r in np.asarray(maps[head.layer, head.head], dtype=np.float64)),
        grid_rows=tuple(rows),
        grid_cols=tuple(a.labels(head.kind)[1]),
        row=row,
    )


def next_piece(a: Analysis, step: int, seed: int) -> Quiz:
    """The five most probable pieces at decoder row `step` (0-based: after <s> and `step` pieces), in an order
    shuffled by `seed`; the answer is the most probable one."""
    if not 0 <= step < len(a.top_tokens):
        raise NoQuestion(f"step {step} is not among the {len(a.top_tokens)} decoding steps")
    pieces, probs = list(a.top_tokens[step]), [float(p) for p in a.top_probs[step][: len(a.top_tokens[step])]]
    order = list(range(len(pieces)))
    random.Random(seed).shuffle(order)
    return Quiz(
        QuestionKind.NEXT,
        tuple(pieces[i] for i in order),
        order.index(int(np.argmax(probs))),
        tuple(probs[i] for i in order),
        token=a.target_pieces[step],
    )


def resolving_head(card: dict[str, Any], config: TransformerConfig) -> Quiz:
    """Every head of the kind where the checkpoint decides il/elle (card.route_kind), labelled "layer·head"
    (0-based, as the pickers), with its probe score; the answer is the best."""
    kind = route_kind(card, config)
    scores = {s.head: s.score for s in probe_scores(card, config, kind)}
    if not scores:
        raise NoQuestion("this checkpoint's card has no coreference probe")
    heads = [HeadId(kind, layer, h) for layer in range(config.n_layers(kind)) for h in range(config.n_heads)]
    values = [scores.get(h, 0.0) for h in heads]
    return Quiz(
        QuestionKind.RESOLVES,
        tuple(f"{h.layer}·{h.head}" for h in heads),
        int(np.argmax(values)),
        tuple(values),
        head=heads[int(np.argmax(values))],
        grid=tuple(
            tuple(values[layer * config.n_heads : (layer + 1) * config.n_heads])
            for layer in range(config.n_layers(kind))
        ),
        grid_rows=tuple(f"L{layer}" for layer in range(config.n_layers(kind))),
        grid_cols=tuple(f"H{h}" for h in range(config.n_heads)),
    )


def head_option(quiz: Quiz, head: HeadId) -> int | None:
    """The option of a RESOLVES question that is `head` (a student may answer by clicking the head in the
    overview); None for another question, another kind, or a head the question does not list."""
    if quiz.kind is not QuestionKind.RESOLVES or quiz.head is None or head.kind is not quiz.head.kind:
        return None
    n_layers, n_heads = len(quiz.grid_rows), len(quiz.grid_cols)
    if not (0 <= head.layer < n_layers and 0 <= head.head < n_heads):
        return None
    return head.layer * n_heads + head.head
