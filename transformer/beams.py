"""The rules a beam search keeps its beams by (§6.1): the paper's (length penalty α, finished hypotheses
ranked by score / lp) and Hugging Face's (``generate(num_beams=...)``: its early stopping and length penalty),
chosen per sentence by :class:`Search`; :class:`transformer.decoding.BeamBatch` is the loop that applies them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import torch
from torch import Tensor

PAPER_ALPHA = 0.6  # §6.1: "beam search with a beam size of 4 and length penalty α = 0.6"
MAX_ALPHA = 10.0  # a card may choose another α on its own dev set (checkpoint.Checkpoint.alpha), within [0, this]


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6)^α, used with α = 0.6 in §6.1."""
    return ((5.0 + length) / 6.0) ** alpha


def beam_step(
    cand: Tensor,
    vocab: int,
    beams: list[list[int]],
    finished: list[tuple[float, float, list[int]]],
    eos_id: int,
    beam_size: int,
    alpha: float,
) -> tuple[list[int], list[int], list[float]]:
    """One step of the paper's beam search for one sentence (§6.1).

    cand (n · vocab) holds each live beam's score plus each next token's log-probability. Of the
    2·beam_size best, a hypothesis that ends with EOS goes to ``finished`` as (normalised, raw, tokens);
    the others continue until beam_size are kept. Returns (beam, token, score) of the kept ones.
    """
    top_scores, top_idx = cand.topk(min(2 * beam_size, cand.numel()))
    keep_beam, keep_tok, keep_score = [], [], []
    for s, idx in zip(top_scores.tolist(), top_idx.tolist()):
        b, tok = divmod(idx, vocab)
        seq = beams[b] + [tok]
        if tok == eos_id:
            finished.append((s / length_penalty(len(seq), alpha), s, seq))
        else:
            keep_beam.append(b)
            keep_tok.append(tok)
            keep_score.append(s)
        if len(keep_beam) == beam_size:
            break
    return keep_beam, keep_tok, keep_score



class BeamRule(Enum):
    """Which beam search: the paper's (§6.1, GNMT's length penalty) or Hugging Face's generate()."""

    PAPER = "paper"
    HUGGING_FACE = "hugging_face"


@dataclass(frozen=True)
class Search:
    """How to decode: beam_size 1 is greedy decoding.

    alpha: the length penalty (PAPER: GNMT's α in ((5 + |Y|) / 6)^α; HUGGING_FACE: the exponent of len^α).
    early_stopping: HUGGING_FACE only, its generate() flag of that name.
    """

    beam_size: int = 1
    rule: BeamRule = BeamRule.PAPER
    alpha: float = PAPER_ALPHA
    early_stopping: bool = False

    def __post_init__(self) -> None:
        if self.beam_size < 1:
            raise ValueError("beam_size must be at least 1")


@dataclass
class PaperBeams:
    """One sentence's hypotheses under the paper's rule (beam_step): beams, their raw scores, the finished."""

    beam_size: int
    alpha: float
    limit: int
    eos_id: int
    device: torch.device
    beams: list[list[int]] = field(default_factory=lambda: [[]])
    scores: Tensor | None = None
    finished: list[tuple[float, float, list[int]]] = field(default_factory=list)  # (normalised, raw, tokens)

    @property
    def rows(self) -> int:
        return len(self.beams)

    def advance(self, logp: Tensor) -> tuple[list[int], list[int]] | None:
        """Given its rows' (n, vocab) log-probabilities: the rows kept and their next tokens, or None once ended."""
        scores = self.scores if self.scores is not None else torch.zeros(1, device=self.device)
        cand = (scores[:, None] + logp).view(-1)  # (n · vocab)
        keep_beam, keep_tok, keep_score = beam_step(
            cand, logp.size(-1), self.beams, self.finished, self.eos_id, self.beam_size, self.alpha
        )
        # Stop once beam_size hypotheses have ended (so beam_size=1 is greedy decoding).
        if not keep_beam or len(self.finished) >= self.beam_size:
            return None
        self.beams = [self.beams[b] + [t] for b, t in zip(keep_beam, keep_tok)]
        self.scores = torch.tensor(keep_score, device=self.device)
        if len(self.beams[0]) >= self.limit:  # ran out of length
            return None
        return keep_beam, keep_tok

    def result(self) -> tuple[list[int], float]:
        finished = self.finished
        if not finished:  # ran out of length: take the best live beam
            scores = self.scores.tolist() if self.scores is not None else [0.0]
            finished = [(s / length_penalty(len(b), self.alpha), s, b) for s, b in zip(scores, self.beams)]
        _, raw, tokens = max(finished, key=lambda f: f[0])
        return tokens, raw


class HuggingFaceBeams:
    """One sentence's hypotheses by Hugging Face's rules: always beam_size rows (the copies of the start
    that are not the first score -1e9), 2·beam_size candidates, a bank of beam_size finished ones."""

    def __init__(self, beam_size: int, alpha: float, early_stopping: bool, limit: int, eos_id: int, device) -> None:
        B, self.K, self.dev = beam_size, 2 * beam_size, device
        self.B, self.lp, self.early_stopping, self.limit, self.eos = B, alpha, early_stopping, limit, eos_id
        self.running: list[list[int]] = [[] for _ in range(B)]
        self.running_scores = torch.full((B,), -1.0e9, device=device)
        self.running_scores[0] = 0.0  # B copies of the start; only the first is live
        self.done_seqs: list[list[int]] = [[] for _ in range(B)]
        self.done_scores = torch.full((B,), -1.0e9, device=device)
        self.done = torch.zeros(B, dtype=torch.bool, device=device)
        self.improvable = True
        self.step = 0  # tokens generated once this step's is added

    @property
    def rows(self) -> int:
        return self.B

    def advance(self, logp: Tensor) -> tuple[list[int], list[int]] | None:
        self.step += 1
        step, B, K, dev, lp = self.step, self.B, self.K, self.dev, self.lp
        vocab = logp.size(-1)
        cand = (logp + self.running_scores[:, None]).view(-1)  # (B · vocab)
        top_scores, top_idx = cand.topk(K)
        beam, tok = top_idx // vocab, top_idx % vocab
        seqs = [self.running[b] + [t] for b, t in zip(beam.tolist(), tok.tolist())]
        hits = (tok == self.eos) | (step >= self.limit)  # (K,)
        keep = (top_scores - 1.0e9 * hits.float()).topk(B).indices
        finals = top_scores / (step**lp)
        finals = finals - 1.0e9 * (~(hits & (torch.arange(K, device=dev) < B))).float()
        if (self.early_stopping and bool(self.done.all())) or not self.improvable:
            finals = finals - 1.0e9
        merged = torch.cat([self.done_scores, finals]).topk(B).indices.tolist()
        pool = self.done_seqs + seqs
        flags = torch.cat([self.done, hits & (torch.arange(K, device=dev) < B)])
        scores_all = torch.cat([self.done_scores, finals])
        self.done_seqs, self.done_scores, self.done = [pool[i] for i in merged], scores_all[merged], flags[merged]
        self.running = [seqs[i] for i in keep.tolist()]
        self.running_scores = (top_scores - 1.0e9 * hits.float())[keep]
        worst = torch.where(self.done, self.done_scores.min(), torch.tensor(-1.0e9, device=dev))
        self.improvable = self.improvable and bool((self.running_scores[0] / (step**lp) > worst).any())
        if not self.improvable or (self.early_stopping and bool(self.done.all())) or bool(hits.all()):
            return None
        return beam[keep].tolist(), tok[keep].tolist()

    def result(self) -> tuple[list[int], float]:
        tokens = self.done_seqs[0]
        return tokens, float(self.done_scores[0]) * len(tokens) ** self.lp
