"""Choose the beam search's length penalty α on the real development pages, as the paper did (§6.1).

    python3 scripts/sweep_length_penalty.py checkpoints/real-kde-align                 # dev sweep
    python3 scripts/sweep_length_penalty.py checkpoints/real-kde-align --test 3.0      # then the test sets

The sweep decodes the dev split of every real corpus the checkpoint was trained on (whole pages never
trained on, distinct from the test pages) greedily and with transformer.decoding.beam_search (beam 4)
at each α, and prints chrF, BLEU and the length ratio (hypothesis / reference characters), so that an
α which only buys chrF's recall with over-long output shows. --test scores one α on the held-out test
pages and the whole GIMP manual, beside greedy.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    import torch

    from transformer.checkpoint import load_checkpoint
    from transformer.corpus.real import load_real
    from transformer.decoding import beam_search
    from transformer.evaluate_real import score, translate

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.6, 1.0, 1.5, 2.0, 3.0])
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--test", type=float, metavar="ALPHA", help="score this α on the test sets instead")
    ap.add_argument("--limit", type=int, help="only the first N sentences of each set (a dry run)")
    args = ap.parse_args(argv)
    ckpt = load_checkpoint(args.checkpoint)
    model, tok = ckpt.model, ckpt.tokenizer
    names = ckpt.card.get("train_config", {}).get("real_data") or []  # "ui" has no dev pages: it adds none

    def beam(sources: list[str], alpha: float) -> list[str]:
        out = []
        for s in sources:
            ids = torch.tensor([tok.source_ids(s, max_len=model.config.max_len)])
            found = beam_search(model, ids, args.beam, model.config.max_len - 1, alpha=alpha, return_attention=False)
            out.append(tok.decode(found.tokens))
        return out

    def row(label: str, hyps: list[str], refs: list[str], t0: float) -> None:
        ratio = sum(map(len, hyps)) / max(1, sum(map(len, refs)))
        f, wall = score(hyps, refs), time.perf_counter() - t0
        print(f"| {label} | {f['chrf']:.2f} | {f['bleu']:.2f} | {ratio:.3f} | {wall:.0f} s |")

    if args.test is None:
        sets = {f"dev pages ({', '.join(names)})": load_real("dev", names)}
        alphas = args.alphas
    else:
        sets = {"held-out test pages": load_real("test"), "GIMP manual": load_real("test", ("gimp",))}
        alphas = [args.test]
    for name, pairs in sets.items():
        pairs = pairs[: args.limit] if args.limit else pairs
        sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
        print(f"\n{name}: {len(pairs)} sentences\n| decoding | chrF | BLEU | length | time |\n|---|---|---|---|---|")
        t0 = time.perf_counter()
        row("greedy", translate(model, tok, sources), refs, t0)
        for alpha in alphas:
            t0 = time.perf_counter()
            row(f"beam {args.beam}, α {alpha}", beam(sources, alpha), refs, t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
