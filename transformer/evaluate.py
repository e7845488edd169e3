"""Evaluation on the held-out test split: translation quality, pronoun accuracy and a coreference probe."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .corpus import CorpusSpec, Example, generate, seed_examples
from .decoding import greedy_decode_batch, require_eval
from .model import Transformer
from .tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer, word_groups

PRONOUN_RE = re.compile(r"(?:qu'|car |que )(il|elle|ils|elles)\b")


def french_pronoun(text: str) -> str | None:
    """The subject pronoun after the connective (parce qu'il, puisqu'elle, car ils ...)."""
    m = PRONOUN_RE.search(text)
    return m.group(1) if m else None


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
    words = word_groups(tokenizer.pieces(tokenizer.encode(ex.src)))
    if len(words) != len(ex.src.split()):
        return None
    tgt = tokenizer.encode_with_offsets(ex.tgt)
    m = PRONOUN_RE.search(ex.tgt)
    if m is None:
        return None
    start = m.start(1)
    cross_row = next((i for i, (_, _, b, e) in enumerate(tgt) if b <= start < e), None)
    if cross_row is None:
        return None
    pronoun_row = words[ex.pronoun][-1]  # the word's own piece ("it", not a bare "▁" before it)
    return ProbeRows(words[ex.antecedent], [words[i] for i in ex.others], pronoun_row, words[ex.cue], cross_row)


@torch.no_grad()
def coreference_probe(
    model: Transformer, tokenizer: Tokenizer, examples: list[Example], batch_size: int = 64
) -> dict[str, Any]:
    """Score every head: the share of examples whose row weighs the antecedent above the other noun
    (with three nouns: above each of the others). A noun's weight is the sum over its pieces.

    Rows: "encoder/pronoun" (the row of it/they), "encoder/cue" (the deciding word's rows,
    averaged), "cross/pronoun" (the decoder row that outputs the French pronoun, teacher-forced).
    Returns {"heads": [...], "by_family": {family: [...]}} with scores in [0, 1].
    """
    require_eval(model)
    items = [(ex, probe_rows(tokenizer, ex)) for ex in examples]
    items = [(ex, r) for ex, r in items if r is not None]
    L_enc, L_dec, H = len(model.encoder_layers), len(model.decoder_layers), model.config.n_heads
    wins = {
        k: np.zeros((L, H)) for k, L in (("encoder/pronoun", L_enc), ("encoder/cue", L_enc), ("cross/pronoun", L_dec))
    }
    fam_wins: dict[str, dict[str, np.ndarray]] = defaultdict(lambda: {k: np.zeros_like(v) for k, v in wins.items()})
    fam_n: dict[str, int] = defaultdict(int)
    for b in range(0, len(items), batch_size):
        chunk = items[b : b + batch_size]
        srcs = [tokenizer.encode(ex.src) + [EOS_ID] for ex, _ in chunk]
        tgts = [[BOS_ID] + tokenizer.encode(ex.tgt) for ex, _ in chunk]
        src = _pad(srcs)
        tgt = _pad(tgts)
        att = model(src, tgt, return_attention=True).attention
        enc = torch.stack(att.encoder, 1)  # (B, L, H, S, S)
        cross = torch.stack(att.cross, 1)  # (B, L, H, T, S)
        for i, (ex, r) in enumerate(chunk):
            rows = {
                "encoder/pronoun": enc[i, :, :, r.pronoun_row],  # (L, H, S)
                "encoder/cue": enc[i, :, :, r.cue_rows].mean(2),
                "cross/pronoun": cross[i, :, :, r.cross_row],
            }
            fam_n[ex.family] += 1
            for key, row in rows.items():
                rival = torch.stack([row[..., o].sum(-1) for o in r.others]).amax(0)  # (L, H)
                win = (row[..., r.antecedent].sum(-1) > rival).numpy().astype(float)
                wins[key] += win
                fam_wins[ex.family][key] += win
    n = max(len(items), 1)

    def listing(w: dict[str, np.ndarray], count: int) -> list[dict[str, Any]]:
        out = []
        for key, arr in w.items():
            kind, query = key.split("/")
            for layer in range(arr.shape[0]):
                for head in range(arr.shape[1]):
                    out.append(
                        dict(
                            kind=kind,
                            query=query,
                            layer=layer,
                            head=head,
                            score=round(float(arr[layer, head] / max(count, 1)), 4),
                        )
                    )
        return out

    return {
        "n_sentences": len(items),
        "heads": listing(wins, n),
        "by_family": {fam: {"n_sentences": fam_n[fam], "heads": listing(w, fam_n[fam])} for fam, w in fam_wins.items()},
    }


def _pad(seqs: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(seqs), max(len(s) for s in seqs)), PAD_ID, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out


def evaluate(
    model: Transformer, tokenizer: Tokenizer, examples: list[Example] | None = None, batch_size: int = 128
) -> dict[str, Any]:
    """Translate the test split and score it; see the module docstring."""
    import sacrebleu

    if examples is None:
        examples = generate(CorpusSpec())[1]
    hyps: list[str] = []
    for b in range(0, len(examples), batch_size):
        chunk = examples[b : b + batch_size]
        ids = greedy_decode_batch(model, [tokenizer.encode(ex.src) + [EOS_ID] for ex in chunk])
        hyps.extend(tokenizer.decode(x) for x in ids)
    refs = [ex.tgt for ex in examples]
    pron = [(french_pronoun(h), ex.fr_pronoun) for h, ex in zip(hyps, examples) if ex.fr_pronoun]
    seeds = seed_examples()
    seed_hyps = [
        tokenizer.decode(x) for x in greedy_decode_batch(model, [tokenizer.encode(ex.src) + [EOS_ID] for ex in seeds])
    ]
    probe = coreference_probe(model, tokenizer, examples)
    by_family = {}
    for fam in sorted({ex.family for ex in examples}):
        pairs = [(h, ex) for h, ex in zip(hyps, examples) if ex.family == fam]
        pf = [(french_pronoun(h), ex.fr_pronoun) for h, ex in pairs if ex.fr_pronoun]
        by_family[fam] = {
            "n_sentences": len(pairs),
            "exact_match": sum(h == ex.tgt for h, ex in pairs) / len(pairs),
            "pronoun_accuracy": (sum(a == b for a, b in pf) / len(pf)) if pf else None,
        }
    return {
        "pronoun_accuracy": sum(a == b for a, b in pron) / max(len(pron), 1),
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
