"""Does the confidence line agree with reality? Its correlation with sentence chrF on held-out sentences.

    nice python3 scripts/confidence_vs_chrf.py checkpoints/real-kde-align                 # 200 everyday test sentences
    nice python3 scripts/confidence_vs_chrf.py checkpoints/en-fr --corpus kde --n 200 --write
    nice python3 scripts/confidence_vs_chrf.py checkpoints/en-fr --corpus typed --write  # the 125 typed sentences

Translates N held-out sentences (evenly spaced through the split, greedy, as the app does by default),
computes each translation's confidence (transformer.inspection.confidence: the mean log-probability per
produced piece, and the share of pieces below the threshold) from the decoder's own probabilities, and its
sentence chrF against the reference; prints Pearson's and Spearman's correlation of each confidence figure
with chrF. --write merges the result into card.json under "confidence" (keyed "corpus/split").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def spaced(items: list, n: int) -> list:
    """n items evenly spaced through items (all of them if there are fewer)."""
    if len(items) <= n:
        return list(items)
    return [items[int(i * len(items) / n)] for i in range(n)]


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank)."""
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    r[order] = np.arange(len(x), dtype=float)
    for v in np.unique(x):
        tied = x == v
        if tied.sum() > 1:
            r[tied] = r[tied].mean()
    return r


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    return pearson(ranks(x), ranks(y))


def measure(model, tokenizer, pairs: list[tuple[str, str]], threshold: float, batch: int = 16) -> dict:
    from transformer.evaluate_real import sentence_chrf
    from transformer.inspection.confidence import confidence
    from transformer.serving.running_batch import analyse_batch

    rows = []
    for b in range(0, len(pairs), batch):
        chunk = pairs[b : b + batch]
        for (src, ref), a in zip(chunk, analyse_batch(model, tokenizer, [s for s, _ in chunk], 1)):
            if isinstance(a, Exception):
                raise a
            c = confidence(a.output_probs, threshold)
            chrf = sentence_chrf(a.translation, ref)
            rows.append((c.mean_log_prob, c.low_share, chrf, src, a.translation, ref))
    mean_lp = np.array([r[0] for r in rows])
    low = np.array([r[1] for r in rows])
    chrf = np.array([r[2] for r in rows])
    by_quarter = []
    order = np.argsort(mean_lp)
    for q in np.array_split(order, 4):
        by_quarter.append(
            {"mean_log_prob": round(float(mean_lp[q].mean()), 3), "chrf": round(float(chrf[q].mean()), 1)}
        )
    return {
        "n_sentences": len(rows),
        "threshold": threshold,
        "mean_log_prob_vs_chrf": {
            "pearson": round(pearson(mean_lp, chrf), 3),
            "spearman": round(spearman(mean_lp, chrf), 3),
        },
        "low_share_vs_chrf": {"pearson": round(pearson(low, chrf), 3), "spearman": round(spearman(low, chrf), 3)},
        "chrf_by_confidence_quarter": by_quarter,  # least confident quarter first
        "mean_sentence_chrf": round(float(chrf.mean()), 1),
        "least_confident": [
            {
                "source": r[3],
                "translation": r[4],
                "reference": r[5],
                "mean_log_prob": round(r[0], 3),
                "chrf": round(r[2], 1),
            }
            for r in sorted(rows)[:3]
        ],
    }


def main(argv: list[str] | None = None) -> int:
    import torch

    from transformer.checkpoint import load_checkpoint, update_card
    from transformer.corpus.real import load_real
    from transformer.inspection.confidence import LOW_PROBABILITY

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument(
        "--corpus",
        default="everyday",
        help="committed corpus whose held-out split to use, or 'typed': the sentences typed as a new user would",
    )
    ap.add_argument("--split", default="test", choices=("dev", "test"))
    ap.add_argument("--n", type=int, default=200, help="sentences (evenly spaced through the split)")
    ap.add_argument("--threshold", type=float, default=LOW_PROBABILITY)
    ap.add_argument("--write", action="store_true", help="merge the result into card.json under 'confidence'")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ckpt = load_checkpoint(args.checkpoint)
    if args.corpus == "typed":  # a test set only: transformer/corpus/typed.py
        from transformer.corpus.typed import typed_pairs
        from transformer.provenance import target_language

        pairs, args.split = spaced(typed_pairs(target_language(ckpt.card) or "fr"), args.n), "test"
    else:
        pairs = spaced(load_real(args.split, (args.corpus,)), args.n)
    t0 = time.perf_counter()
    report = measure(ckpt.model, ckpt.tokenizer, pairs, args.threshold)
    report.update(corpus=args.corpus, split=args.split, time_s=round(time.perf_counter() - t0, 1))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.write:
        entry = dict(ckpt.card.get("confidence", {}))
        entry[f"{args.corpus}/{args.split}"] = report
        update_card(args.checkpoint, {"confidence": entry})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
