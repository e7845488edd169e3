"""Measure every figure of a real-text + coreference checkpoint and write them into its card.json.

    python3 scripts/evaluate_real_coref.py checkpoints/real-coref            # print
    python3 scripts/evaluate_real_coref.py checkpoints/real-coref --write    # and merge into card.json

Writes "evaluation" (the coreference split, in the format the app's probe views read),
"real_coref" (every figure on the full held-out sets, with the goals reached or missed; when the
card chose a length penalty on the dev pages, scripts/sweep_length_penalty.py --write, the real, GIMP
and flagship figures under that beam search too),
"real_coref_sample" (the same on the first SAMPLE sentences of each set, which
tests/test_real_checkpoint.py re-checks), "real_data" (what it was trained on, from the
corpus MANIFEST.json) and "reordering_examples" (held-out real sentences it translates well, sentence
chrF at least everyday_examples.MIN_CHRF, whose cross-attention reorders, found by transformer.inspection.reorder).
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
    from transformer.checkpoint import DECODING, load_checkpoint, update_card
    from transformer.corpus import CorpusSpec
    from transformer.corpus.real import DATA_DIR, load_real
    from transformer.evaluate_real import BEAM, SAMPLE, real_coref_report
    from transformer.inspection.everyday_examples import MIN_CHRF
    from transformer.inspection.reorder import find_reorderings
    from transformer.inspection.training_data import real_data_entry

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--write", action="store_true", help="merge the figures into the checkpoint's card.json")
    ap.add_argument("--gimp", type=int, default=0, help="GIMP sentences to score (0, the default: the whole manual)")
    ap.add_argument("--limit", type=int, help="score only the first N sentences of each set (a dry run)")
    args = ap.parse_args(argv)
    ckpt = load_checkpoint(args.checkpoint)
    spec = CorpusSpec.from_card(ckpt.card)
    search = {"beam": BEAM, "alpha": ckpt.alpha} if DECODING in ckpt.card else {}  # the card's own beam search
    t0 = time.perf_counter()
    sample = real_coref_report(ckpt.model, ckpt.tokenizer, spec, limit=SAMPLE, gimp_limit=SAMPLE, **search)
    t1 = time.perf_counter()
    full = real_coref_report(
        ckpt.model, ckpt.tokenizer, spec, limit=args.limit, gimp_limit=args.gimp or None, **search
    )
    t2 = time.perf_counter()
    coref = full.pop("coref_evaluation")
    sample.pop("coref_evaluation")
    full["eval_time_s"], sample["eval_time_s"] = round(t2 - t1, 1), round(t1 - t0, 1)
    print(json.dumps({k: full[k] for k in ("goals", "eval_time_s")}, indent=1, ensure_ascii=False))
    t3 = time.perf_counter()
    held_out = load_real("test")[: args.limit]
    found = find_reorderings(
        ckpt.model,
        ckpt.tokenizer,
        [s for s, _ in held_out],
        references=[t for _, t in held_out],
        min_chrf=MIN_CHRF,  # a reordering shown on a wrong translation would teach the wrong thing
        top=6,
    )
    examples = [r.to_dict() for r in found]
    print(json.dumps(examples[:3], indent=1, ensure_ascii=False))
    print(f"reordering examples: {time.perf_counter() - t3:.0f} s")
    if args.write:
        names = ckpt.card.get("train_config", {}).get("real_data") or []
        update_card(
            args.checkpoint,
            {
                "evaluation": coref,
                "real_coref": full,
                "real_coref_sample": sample,
                "real_data": real_data_entry(names, DATA_DIR / "MANIFEST.json"),
                "reordering_examples": examples,
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
