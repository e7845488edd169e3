"""Evaluation on the held-out test split: translation quality, pronoun accuracy and a coreference probe."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

import numpy as np
import torch

from .attention import AttentionKind
from .corpus import CorpusSpec, Example, french_pronoun, generate, pronoun_span, seed_examples
from .decoding import greedy_decode_batch, model_device, on_device, require_eval
from .model import Transformer
from .options import DEFAULT, CallOptions
from .tokenizer import Tokenizer, pad_batch, word_groups


class ProbeRow(StrEnum):
    """Which row of a kind's maps the probe reads."""

    PRONOUN = "pronoun"  # encoder: the row of "it"/"they"; cross: the decoder row that writes il/elle
    CUE = "cue"  # encoder: the rows of the deciding word, averaged


class ProbeQuery(Enum):
    """One row kind the probe scores every head on: (attention kind, row).

    ENCODER_PRONOUN: the encoder row of "it"/"they"; ENCODER_CUE: the rows of the deciding word,
    averaged; CROSS_PRONOUN: the decoder row that writes il/elle (teacher-forced).
    """

    ENCODER_PRONOUN = (AttentionKind.ENCODER, ProbeRow.PRONOUN)
    ENCODER_CUE = (AttentionKind.ENCODER, ProbeRow.CUE)
    CROSS_PRONOUN = (AttentionKind.CROSS, ProbeRow.PRONOUN)

    @property
    def kind(self) -> AttentionKind:
        return self.value[0]

    @property
    def query(self) -> ProbeRow:
        return self.value[1]

    def label(self) -> str:
        """ "encoder/pronoun": how the metrics log and the cards name it."""
        return f"{self.kind.value}/{self.query.value}"

    @classmethod
    def of(cls, kind: AttentionKind, row: ProbeRow) -> ProbeQuery | None:
        """The query reading that row of that kind, if the probe has one."""
        return next((q for q in cls if q.kind is AttentionKind(kind) and q.query is ProbeRow(row)), None)


PROBE_QUERIES: tuple[ProbeQuery, ...] = tuple(ProbeQuery)


@dataclass
class ProbeRows:
    """Where the probe looks in one example: piece indices in source and target."""

    antecedent: list[int]  # source pieces of the true antecedent
    others: list[list[int]]  # source pieces of each other candidate noun
    pronoun_row: int  # source piece of "it" / "they"
    cue_rows: list[int]  # source pieces of the deciding word
    cross_row: int  # decoder row that produces the French pronoun


def probe_rows(tokenizer: Tokenizer, ex: Example) -> ProbeRows | None:
    """Locate the probe's rows and columns for one pronoun example (None if it has no pronoun)."""
    if ex.pronoun < 0:
        return None
    words = word_groups(tokenizer.source_pieces(tokenizer.encode(ex.src)))
    if len(words) != len(ex.src.split()):
        return None
    tgt = tokenizer.encode_with_offsets(ex.tgt)
    span = pronoun_span(ex.tgt)
    if span is None:
        return None
    start = span[0]
    cross_row = next((i for i, (_, _, b, e) in enumerate(tgt) if b <= start < e), None)
    if cross_row is None:
        return None
    pronoun_row = words[ex.pronoun][-1]  # the word's own piece ("it", not a bare "▁" before it)
    return ProbeRows(words[ex.antecedent], [words[i] for i in ex.others], pronoun_row, words[ex.cue], cross_row)


@dataclass
class ProbeResult:
    """Per-head probe scores: the share of sentences whose row weighs the antecedent above every other noun."""

    n_sentences: int
    scores: dict[ProbeQuery, np.ndarray]  # (L, H) in [0, 1]
    family_n: dict[str, int] = field(default_factory=dict)
    by_family: dict[str, dict[ProbeQuery, np.ndarray]] = field(default_factory=dict)

    def best(self, query: ProbeQuery) -> tuple[int, int, float]:
        """(layer, head, score) of the best head for one row kind."""
        arr = self.scores[query]
        layer, head = np.unravel_index(int(arr.argmax()), arr.shape)
        return int(layer), int(head), float(arr[layer, head])

    @staticmethod
    def _listing(scores: dict[ProbeQuery, np.ndarray]) -> list[dict[str, Any]]:
        out = []
        for q, arr in scores.items():
            for layer, head in np.ndindex(arr.shape):
                score = round(float(arr[layer, head]), 4)
                out.append(dict(kind=q.kind.value, query=q.query.value, layer=layer, head=head, score=score))
        return out

    def to_card(self) -> dict[str, Any]:
        """The card's format: {"n_sentences", "heads": [{kind, query, layer, head, score}], "by_family"}."""
        return {
            "n_sentences": self.n_sentences,
            "heads": self._listing(self.scores),
            "by_family": {
                fam: {"n_sentences": self.family_n[fam], "heads": self._listing(s)} for fam, s in self.by_family.items()
            },
        }


def probe_batches(
    tokenizer: Tokenizer, examples: list[Example], batch_size: int = 64, device: torch.device | str | None = None
):
    """(examples, rows, src, tgt_in, tgt_out) batches of the pronoun examples the probe can read, on device."""
    items = [(ex, probe_rows(tokenizer, ex)) for ex in examples]
    items = [(ex, r) for ex, r in items if r is not None]
    for b in range(0, len(items), batch_size):
        chunk = items[b : b + batch_size]
        src, tgt_in, tgt_out = _teacher_forced_batch(tokenizer, [(ex.src, ex.tgt) for ex, _ in chunk], device)
        yield [ex for ex, _ in chunk], [r for _, r in chunk], src, tgt_in, tgt_out


def _teacher_forced_batch(
    tokenizer: Tokenizer, pairs: list[tuple[str, str]], device: torch.device | str | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """src (B, S), tgt_in (B, T), tgt_out (B, T) of (source, target) pairs, padded, on device (None: torch's
    default device)."""
    targets = [tokenizer.target_ids(t) for _, t in pairs]
    pad = tokenizer.special.pad  # 0 for ours; the last id for an imported Marian model, whose 0 is </s>
    with on_device(device):
        src = pad_batch([tokenizer.source_ids(s) for s, _ in pairs], pad)
        tgt_in, tgt_out = pad_batch([t[0] for t in targets], pad), pad_batch([t[1] for t in targets], pad)
    return src, tgt_in, tgt_out


def antecedent_wins(row: torch.Tensor, rows: ProbeRows) -> np.ndarray:
    """row (..., S) of weights -> (...) 1.0 where the antecedent's pieces outweigh every other noun's."""
    rival = torch.stack([row[..., o].sum(-1) for o in rows.others]).amax(0)
    return (row[..., rows.antecedent].sum(-1) > rival).cpu().numpy().astype(float)


@torch.no_grad()
def coreference_probe(
    model: Transformer,
    tokenizer: Tokenizer,
    examples: list[Example],
    batch_size: int = 64,
    options: CallOptions = DEFAULT,
    progress: Callable[[int, int], None] | None = None,
) -> ProbeResult:
    """Score every head on every probe row kind (see ProbeQuery). A noun's weight is the sum over its pieces.

    progress(done, total) is called after each batch with the sentences probed so far (it changes no result)."""
    require_eval(model)
    L_enc, L_dec, H = model.config.n_encoder_layers, model.config.n_decoder_layers, model.config.n_heads
    shape = {AttentionKind.ENCODER: (L_enc, H), AttentionKind.CROSS: (L_dec, H)}
    wins = {q: np.zeros(shape[q.kind]) for q in PROBE_QUERIES}
    fam_wins: dict[str, dict[ProbeQuery, np.ndarray]] = defaultdict(
        lambda: {q: np.zeros_like(v) for q, v in wins.items()}
    )
    fam_n: dict[str, int] = defaultdict(int)
    n = 0
    device = model_device(model)
    for exs, rows, src, tgt, _ in probe_batches(tokenizer, examples, batch_size, device):
        att = model(src, tgt, options=options, return_attention=True).attention
        enc = torch.stack(att.encoder, 1)  # (B, L, H, S, S)
        cross = torch.stack(att.cross, 1)  # (B, L, H, T, S)
        for i, (ex, r) in enumerate(zip(exs, rows)):
            read = {
                ProbeQuery.ENCODER_PRONOUN: enc[i, :, :, r.pronoun_row],  # (L, H, S)
                ProbeQuery.ENCODER_CUE: enc[i, :, :, r.cue_rows].mean(2),
                ProbeQuery.CROSS_PRONOUN: cross[i, :, :, r.cross_row],
            }
            n += 1
            fam_n[ex.family] += 1
            for q, row in read.items():
                win = antecedent_wins(row, r)
                wins[q] += win
                fam_wins[ex.family][q] += win
        if progress is not None:
            progress(n, len(examples))
    return ProbeResult(
        n,
        {q: w / max(n, 1) for q, w in wins.items()},
        dict(fam_n),
        {fam: {q: w / max(fam_n[fam], 1) for q, w in ws.items()} for fam, ws in fam_wins.items()},
    )


def translate_batch(
    model: Transformer, tokenizer: Tokenizer, sources: list[str], batch_size: int = 128, options: CallOptions = DEFAULT
) -> list[str]:
    """Greedy translations of many sentences, batched."""
    out: list[str] = []
    for b in range(0, len(sources), batch_size):
        ids = greedy_decode_batch(
            model, [tokenizer.source_ids(s) for s in sources[b : b + batch_size]], options=options
        )
        out.extend(tokenizer.decode(x) for x in ids)
    return out


def pronoun_accuracy(hyps: list[str], examples: list[Example]) -> float | None:
    """Share of pronoun sentences whose translation has the reference's pronoun (None without any)."""
    pairs = [(french_pronoun(h), ex.fr_pronoun) for h, ex in zip(hyps, examples) if ex.fr_pronoun]
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else None


@torch.no_grad()
def evaluate(
    model: Transformer, tokenizer: Tokenizer, examples: list[Example] | None = None, batch_size: int = 128
) -> dict[str, Any]:
    """Translate the test split and score it; see the module docstring."""
    import sacrebleu

    if examples is None:
        examples = generate(CorpusSpec())[1]
    hyps = translate_batch(model, tokenizer, [ex.src for ex in examples], batch_size)
    refs = [ex.tgt for ex in examples]
    seeds = seed_examples()
    seed_hyps = translate_batch(model, tokenizer, [ex.src for ex in seeds])
    probe = coreference_probe(model, tokenizer, examples).to_card()
    by_family = {}
    for fam in sorted({ex.family for ex in examples}):
        pairs = [(h, ex) for h, ex in zip(hyps, examples) if ex.family == fam]
        by_family[fam] = {
            "n_sentences": len(pairs),
            "exact_match": sum(h == ex.tgt for h, ex in pairs) / len(pairs),
            "pronoun_accuracy": pronoun_accuracy([h for h, _ in pairs], [ex for _, ex in pairs]),
        }
    return {
        "pronoun_accuracy": pronoun_accuracy(hyps, examples) or 0.0,
        "exact_match": sum(h == r for h, r in zip(hyps, refs)) / len(refs),
        "bleu": round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2),
        "chrf": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2),
        "n_sentences": len(examples),
        "heads": probe["heads"],
        "by_family": by_family,
        "probe_by_family": probe["by_family"],
        "seed_sentences": [
            {
                "source": ex.src,
                "translation": h,
                "expected_pronoun": ex.fr_pronoun,
                "correct": french_pronoun(h) == ex.fr_pronoun,
            }
            for ex, h in zip(seeds, seed_hyps)
        ],
        "failures": [
            {"source": ex.src, "translation": h, "reference": ex.tgt} for h, ex in zip(hyps, examples) if h != ex.tgt
        ][:20],
    }


def best_heads(heads: list[dict[str, Any]], top: int = 5) -> list[dict[str, Any]]:
    return sorted(heads, key=lambda h: -h["score"])[:top]


def coreference_evaluation(model, tokenizer, examples, progress=None, chunk: int = 16) -> dict[str, Any]:
    """The coreference probe on examples in the card's "evaluation" format ({"n_sentences", "heads"}).

    One sentence per model call (no padding, so nothing depends on a tokenizer's pad id), in chunks
    of ``chunk`` sentences; progress(done, total) is called after each chunk.
    """
    total = len(examples)
    wins: dict[Any, np.ndarray] = {}
    n = 0
    for start in range(0, total, chunk):
        part = coreference_probe(model, tokenizer, examples[start : start + chunk], batch_size=1)
        for q in PROBE_QUERIES:
            wins[q] = wins.get(q, 0) + part.scores[q] * part.n_sentences
        n += part.n_sentences
        if progress is not None:
            progress(min(start + chunk, total), total)
    scores = {q: (w / n if n else w * 0.0) for q, w in wins.items()}
    return {"n_sentences": n, "heads": ProbeResult(n, scores).to_card()["heads"]}
