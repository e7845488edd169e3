"""Choose the sidebar's everyday examples for a checkpoint, by computation on held-out everyday text.

    nice python3 scripts/everyday_examples.py checkpoints/en-fr            # print
    nice python3 scripts/everyday_examples.py checkpoints/en-fr --write    # and merge into card.json

Translates (greedy, as the app by default) every short held-out sentence of Tatoeba's dev split (never trained on),
of the sentences typed as a new user would (transformer/corpus/typed.py) and of the everyday corpus's dev and test
splits, in the checkpoint's target language (French or Chinese)
(transformer.inspection.everyday_examples.everyday_like: 4-10 words, no names), scores each by sentence
chrF against its reference, and keeps the best (pick: chrF >= 60, higher chrF and confidence first). --write
merges {"everyday_examples": [...]} into card.json; the sidebar lists them for that checkpoint.
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
    from transformer.corpus.real import load_real
    from transformer.corpus.typed import typed_pairs
    from transformer.inspection.everyday_examples import MIN_CHRF, everyday_like, pick, score
    from transformer.provenance import target_language

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--min-chrf", type=float, default=MIN_CHRF)
    ap.add_argument("--write", action="store_true", help="merge the examples into card.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ckpt = load_checkpoint(args.checkpoint)
    target = target_language(ckpt.card) or "fr"
    zh = target == "zh"
    held_out = (
        load_real("dev", ("zh/tatoeba" if zh else "tatoeba",))  # Tatoeba's held-out everyday sentences
        + typed_pairs(target)
        + [p for split in ("dev", "test") for p in load_real(split, ("zh/everyday" if zh else "everyday",))]
    )
    pairs = [(s, t) for s, t in held_out if everyday_like(s)]
    rows = score(ckpt.model, ckpt.tokenizer, pairs)
    chosen = pick(rows, args.n, args.min_chrf)
    print(f"{len(pairs)} candidates, {sum(r.chrf >= args.min_chrf for r in rows)} with chrF >= {args.min_chrf}")
    print(json.dumps([r.to_dict() for r in chosen], indent=1, ensure_ascii=False))
    if args.write:
        update_card(args.checkpoint, {"everyday_examples": [r.to_dict() for r in chosen]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
