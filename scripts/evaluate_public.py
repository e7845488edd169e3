"""A checkpoint's figures on the public test sets the field publishes on (issue 61), beside opus-mt's.

    nice python3 scripts/evaluate_public.py checkpoints/en-fr                 # print, greedy, every sentence
    nice python3 scripts/evaluate_public.py checkpoints/en-fr --n 200         # the first 200 of each set
    nice python3 scripts/evaluate_public.py checkpoints/en-zh --write         # into card.json ("public_eval")

Sets (transformer/corpus/data/public_tests.tsv.gz, zh/public_tests.tsv.gz; never trained on): Tatoeba test
v2021-08-07 (eng-fra, 12,681 sentences; eng-zho's cmn_Hans lines, 4,450) and FLORES-200 devtest (1,012). French is
scored by chrF and BLEU (13a), Chinese by BLEU with sacrebleu's Chinese tokenizer and chrF. --write merges
{"public_eval": {"greedy" | "beam N": {set: figures}}} into card.json, which the app's "trained on" panel shows
beside the published opus-mt figures and tests/test_tatoeba.py re-measures on a sample.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transformer.checkpoint import load_checkpoint, update_card  # noqa: E402
from transformer.evaluate_real import public_report  # noqa: E402
from transformer.provenance import target_language  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--n", type=int, default=None, help="the first N sentences of each set (default: every one)")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--write", action="store_true", help="merge the figures into card.json under 'public_eval'")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ckpt = load_checkpoint(args.checkpoint)
    target = target_language(ckpt.card) or "fr"
    if target not in ("fr", "zh"):
        print(f"{args.checkpoint}: no public test set here translates into {target!r}", file=sys.stderr)
        return 2
    search = {"beam": args.beam, "alpha": ckpt.alpha} if args.beam > 1 else {}
    t0 = time.perf_counter()
    report = public_report(ckpt.model.eval(), ckpt.tokenizer, target, n=args.n, **search)
    decoding = f"beam {args.beam}" if args.beam > 1 else "greedy"
    for name, fig in report.items():
        print(decoding, name, json.dumps({k: fig[k] for k in ("n_sentences", "bleu", "chrf", "length_ratio")}))
    print(f"{time.perf_counter() - t0:.0f} s")
    if args.write:
        if args.n:
            print("--write takes whole sets only (the published figures are on whole sets)", file=sys.stderr)
            return 2
        update_card(args.checkpoint, {"public_eval": {**ckpt.card.get("public_eval", {}), decoding: report}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
