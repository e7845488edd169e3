"""Measure every figure of a real-text + coreference checkpoint and write them into its card.json.

    python3 scripts/evaluate_real_coref.py checkpoints/real-coref            # print
    python3 scripts/evaluate_real_coref.py checkpoints/real-coref --write    # and merge into card.json

Writes "evaluation" (the coreference split, in the format the app's probe views read),
"real_coref" (every figure on the full held-out sets, with the goals reached or missed) and
"real_coref_sample" (the same on the first SAMPLE sentences of each set, which
tests/test_real_corpus.py re-checks).
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
    from transformer.checkpoint import load_checkpoint, update_card
    from transformer.corpus import CorpusSpec
    from transformer.evaluate_real import SAMPLE, real_coref_report

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--write", action="store_true", help="merge the figures into the checkpoint's card.json")
    ap.add_argument("--gimp", type=int, default=1000, help="GIMP sentences to score (0: all)")
    args = ap.parse_args(argv)
    ckpt = load_checkpoint(args.checkpoint)
    spec = CorpusSpec.from_card(ckpt.card)
    t0 = time.perf_counter()
    sample = real_coref_report(ckpt.model, ckpt.tokenizer, spec, limit=SAMPLE, gimp_limit=SAMPLE)
    t1 = time.perf_counter()
    full = real_coref_report(ckpt.model, ckpt.tokenizer, spec, gimp_limit=args.gimp or None)
    t2 = time.perf_counter()
    coref = full.pop("coref_evaluation")
    sample.pop("coref_evaluation")
    full["eval_time_s"], sample["eval_time_s"] = round(t2 - t1, 1), round(t1 - t0, 1)
    print(json.dumps({k: full[k] for k in ("goals", "eval_time_s")}, indent=1, ensure_ascii=False))
    if args.write:
        update_card(args.checkpoint, {"evaluation": coref, "real_coref": full, "real_coref_sample": sample})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
