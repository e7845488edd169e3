"""Choose the sidebar's everyday examples for a checkpoint, by computation on held-out everyday text.

    nice python3 scripts/everyday_examples.py checkpoints/en-fr            # print
    nice python3 scripts/everyday_examples.py checkpoints/en-fr --write    # and merge into card.json

Translates (greedy, as the app by default) every short held-out sentence of Tatoeba's dev split (never trained on),
of the sentences typed as a new user would (transformer/corpus/typed.py) and of the everyday corpus's dev and test
splits, in the checkpoint's target language (French or Chinese)
(transformer.inspection.everyday_examples.held_out_pairs: 4-10 words, no names, none the model trained on),
scores each by sentence chrF against its reference, and keeps the best (pick: chrF >= 60 into French, 40 into
Chinese; Tatoeba's first, as issue 61 asks, then higher chrF and confidence). --write merges
{"everyday_examples": [...]} into card.json; the sidebar lists them for that checkpoint.
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
    from transformer.inspection.everyday_examples import choose, min_chrf
    from transformer.provenance import target_language

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--min-chrf", type=float, help="least sentence chrF (default: 60 into French, 40 into Chinese)")
    ap.add_argument("--write", action="store_true", help="merge the examples into card.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ckpt = load_checkpoint(args.checkpoint)
    target = target_language(ckpt.card) or "fr"
    least = min_chrf(target) if args.min_chrf is None else args.min_chrf
    rows, chosen = choose(ckpt.model, ckpt.tokenizer, target, ckpt.card, args.n, least)
    print(f"{len(rows)} candidates, {sum(r.chrf >= least for r in rows)} with chrF >= {least}")
    print(json.dumps([r.to_dict() for r in chosen], indent=1, ensure_ascii=False))
    if args.write:
        update_card(args.checkpoint, {"everyday_examples": [r.to_dict() for r in chosen]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
