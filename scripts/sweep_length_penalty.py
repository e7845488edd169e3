"""Choose the beam search's length penalty α on the real development pages, as the paper did (§6.1).

    python3 scripts/sweep_length_penalty.py checkpoints/real-kde-align --write    # dev sweep, into the card
    python3 scripts/evaluate_real_coref.py checkpoints/real-kde-align --write     # then the test sets, with it

The sweep decodes the dev split of every real corpus the checkpoint was trained on (whole pages never
trained on, distinct from the test pages) greedily and with the app's beam search (beam 4,
transformer.evaluate_real.translate) at each α, and prints chrF, BLEU and the length ratio (hypothesis /
reference characters), so that an α which only buys chrF's recall with over-long output shows.
--write records the α of the best dev chrF (then BLEU) as the card's "decoding" entry, with the whole
sweep: the app's beam slider, the CLI and scripts/evaluate_real_coref.py then search with it
(Checkpoint.alpha); scripts/evaluate_real_coref.py scores the test sets under it, beside greedy.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    from transformer.checkpoint import DECODING, load_checkpoint, update_card
    from transformer.corpus.real import load_real
    from transformer.evaluate_real import BEAM, score, translate
    from transformer.provenance import target_language

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.6, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0])
    ap.add_argument("--beam", type=int, default=BEAM)
    ap.add_argument("--write", action="store_true", help="record the best dev α in the card (card.json)")
    ap.add_argument("--limit", type=int, help="only the first N dev sentences (a dry run)")
    args = ap.parse_args(argv)
    if args.write and args.limit:
        ap.error("--write records a sweep of the whole dev split only")
    ckpt = load_checkpoint(args.checkpoint)
    model, tok = ckpt.model, ckpt.tokenizer
    names = ckpt.card.get("train_config", {}).get("real_data") or []  # "ui" has no dev pages: it adds none

    def row(label: str, hyps: list[str], t0: float, **key: float) -> dict[str, float]:
        f, wall = score(hyps, refs, target_lang=target_language(ckpt.card) or "fr"), time.perf_counter() - t0
        print(f"| {label} | {f['chrf']:.2f} | {f['bleu']:.2f} | {f['length_ratio']:.3f} | {wall:.0f} s |")
        return {**key, **f}

    pairs = load_real("dev", names)[: args.limit or None]
    sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
    print(f"dev pages ({', '.join(names)}): {len(pairs)} sentences")
    print("| decoding | chrF | BLEU | length | time |\n|---|---|---|---|---|")
    t0 = time.perf_counter()
    greedy = row("greedy", translate(model, tok, sources), t0)
    sweep = []
    for alpha in args.alphas:
        t0 = time.perf_counter()
        hyps = translate(model, tok, sources, beam=args.beam, alpha=alpha)
        sweep.append(row(f"beam {args.beam}, α {alpha}", hyps, t0, alpha=alpha))
    if args.write:
        best = max(sweep, key=lambda r: (r["chrf"], r["bleu"]))
        entry = {
            "alpha": best["alpha"],
            "beam_size": args.beam,
            "chosen_on": f"the dev pages of {', '.join(names)}: {len(sources)} sentences, best chrF (then BLEU)",
            "greedy": greedy,
            "sweep": sweep,
            "command": f"python3 scripts/sweep_length_penalty.py {args.checkpoint} --write",
        }
        update_card(args.checkpoint, {DECODING: entry})
        print(f"\nwrote {DECODING}: α {best['alpha']} into {args.checkpoint}/card.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
