"""chrF and BLEU of a checkpoint on the everyday corpus's held-out campaigns (and the manuals' pages, GIMP).

    nice python3 scripts/evaluate_everyday.py checkpoints/real-kde-align             # print
    nice python3 scripts/evaluate_everyday.py checkpoints/en-fr --write              # and merge into card.json

The everyday dev split is Wesnoth's The Sceptre of Fire (plus a few GCompris activities), the test split The
South Guard and The Hammer of Thursagan (transformer/corpus/everyday.py): whole campaigns the model never saw.
--games adds the games corpus's held-out Widelands scenarios (games_dev: scenario_atl01, games_test:
scenario_emp04) and both dev sets scored together ("dev_together", what en-fr-games is judged by). --tatoeba adds
Tatoeba's dev split and, with --games, every dev set together ("dev_with_tatoeba", en-fr-tatoeba's rule).
Greedy decoding (as the app by default); --beam N uses the card's length penalty. --limit N scores the first N
sentences of each split (a dry run). --write merges {"everyday_eval": {...}} (greedy; with --beam,
"everyday_eval_beam") into card.json, with "sample": the figures on the first 48 test sentences, which
tests/test_everyday_checkpoint.py re-measures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    import torch

    from transformer.checkpoint import load_checkpoint, update_card
    from transformer.corpus.real import load_real
    from transformer.evaluate_real import SAMPLE, score, score_pairs

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--splits", default="dev,test")
    ap.add_argument("--manuals", action="store_true", help="also the manuals' held-out test pages and GIMP")
    ap.add_argument("--games", action="store_true", help="also the games corpus's held-out scenarios")
    ap.add_argument("--tatoeba", action="store_true", help="also Tatoeba's dev split, and every dev set together")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--write", action="store_true", help="merge the figures into card.json under 'everyday_eval'")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ckpt = load_checkpoint(args.checkpoint)
    search = {"beam": args.beam, "alpha": ckpt.alpha} if args.beam > 1 else {}
    sets = {f"everyday_{s}": ("everyday", s) for s in args.splits.split(",") if s}
    if args.games:
        sets.update({f"games_{s}": ("games", s) for s in args.splits.split(",") if s})
    if args.tatoeba:
        sets["tatoeba_dev"] = ("tatoeba", "dev")
    if args.manuals:
        sets["manuals_test"] = (("libreoffice", "handbook"), "test")
        sets["gimp"] = ("gimp", "test")
    report: dict = {"decoding": f"beam {args.beam}" if args.beam > 1 else "greedy"}
    hyps: dict[str, tuple[list[str], list[str]]] = {}  # name → (translations, references)
    for name, (corpus, split) in sets.items():
        names = corpus if isinstance(corpus, tuple) else (corpus,)
        pairs = load_real(split, names)[: args.limit]
        t0 = time.perf_counter()
        r = score_pairs(ckpt.model, ckpt.tokenizer, pairs, **search, keep=True)
        r["time_s"] = round(time.perf_counter() - t0, 1)
        hyps[name] = (r.pop("translations"), [t for _, t in pairs])
        report[name] = r
        print(name, json.dumps({k: r[k] for k in ("n_sentences", "bleu", "chrf", "length_ratio", "time_s")}))
    if {"everyday_dev", "games_dev"} <= set(hyps):
        both = [hyps["everyday_dev"][i] + hyps["games_dev"][i] for i in (0, 1)]
        report["dev_together"] = {"n_sentences": len(both[0]), **score(*both)}
        print("dev_together", json.dumps(report["dev_together"]))
    if {"everyday_dev", "games_dev", "tatoeba_dev"} <= set(hyps):  # en-fr-tatoeba's rule (docs/models.md)
        every = [hyps["everyday_dev"][i] + hyps["games_dev"][i] + hyps["tatoeba_dev"][i] for i in (0, 1)]
        report["dev_with_tatoeba"] = {"n_sentences": len(every[0]), **score(*every)}
        print("dev_with_tatoeba", json.dumps(report["dev_with_tatoeba"]))
    # the first SAMPLE test sentences, which tests/test_everyday_checkpoint.py re-measures
    sample = score_pairs(ckpt.model, ckpt.tokenizer, load_real("test", ("everyday",))[:SAMPLE], **search)
    report["sample"] = {k: sample[k] for k in ("n_sentences", "bleu", "chrf")}
    if args.write:  # greedy (the app's default) and beam search side by side
        update_card(args.checkpoint, {"everyday_eval" if args.beam == 1 else "everyday_eval_beam": report})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
