"""chrF and BLEU of a checkpoint on the everyday sentences typed as a new user would (transformer/corpus/typed.py).

    nice python3 scripts/evaluate_typed.py checkpoints/en-fr                  # print, greedy
    nice python3 scripts/evaluate_typed.py checkpoints/en-zh --beam 4 --write # beam 4 at the card's α, into card.json

125 hand-written sentences with one French and one 简体中文 reference each; the reference is chosen by the
checkpoint's target language. A test set: no training rule reads it. --write merges {"typed_eval": {"greedy" |
"beam N": {...}}} into card.json (corpus figures, each topic's chrF, every translation), which
tests/test_typed.py re-measures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    import torch

    from transformer.checkpoint import load_checkpoint, update_card
    from transformer.evaluate_real import typed_report
    from transformer.provenance import target_language

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--write", action="store_true", help="merge the figures into card.json under 'typed_eval'")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ckpt = load_checkpoint(args.checkpoint)
    search = {"beam": args.beam, "alpha": ckpt.alpha} if args.beam > 1 else {}
    try:
        report = typed_report(ckpt.model, ckpt.tokenizer, target_language(ckpt.card) or "fr", **search)
    except ValueError as exc:  # a target the set has no references in (an imported en-de model)
        print(f"{args.checkpoint}: {exc}", file=sys.stderr)
        return 2
    decoding = f"beam {args.beam}" if args.beam > 1 else "greedy"
    print(decoding, json.dumps({k: report[k] for k in ("n_sentences", "target", "chrf", "bleu", "length_ratio")}))
    print(json.dumps(report["topics"], ensure_ascii=False))
    if args.write:
        update_card(args.checkpoint, {"typed_eval": {**ckpt.card.get("typed_eval", {}), decoding: report}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
