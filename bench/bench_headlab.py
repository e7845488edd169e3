"""Head lab research benchmarks on a base-size random model (6+6 layers, 8 heads, d_model 512), on the CPU,
as ratios against references run in the same process.

    python bench/bench_headlab.py [--sentences N]

1. Head roles over N held-out sentences vs the same teacher-forced forward passes returning attention
   (the roles' own bookkeeping: argmax, rarest piece, counts); with Link Grammar installed, the roles with
   the syntactic ones (the sentences' parses included) vs the roles without.
2. Head importance (Michel: ∂L/∂ξ for every head) vs the same forward passes without gradients.
3. A pruning curve of the cross-attention heads (3 points) vs 3 greedy translations of the N sentences
   with every head on (the curve's own cost: the head masks and chrF).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds  # noqa: E402

from transformer import Transformer, TransformerConfig  # noqa: E402
from transformer.attention import AttentionKind  # noqa: E402
from transformer.corpus.real import load_real  # noqa: E402
from transformer.inspection.heldout import batches, fitting  # noqa: E402
from transformer.inspection.importance import head_importance, pruning_curve, translate_chrf  # noqa: E402
from transformer.inspection.roles import measure_roles, piece_frequency  # noqa: E402
from transformer.inspection.syntax import Parser, parse_all  # noqa: E402
from transformer.options import CallOptions  # noqa: E402
from transformer.tokenizer import Tokenizer  # noqa: E402

torch.set_num_threads(2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    train = load_real("train", ("handbook",))[:3000]
    tokenizer = Tokenizer.train([s for s, _ in train] + [t for _, t in train], vocab_size=2000)
    cfg = TransformerConfig.preset("base", vocab_size=tokenizer.vocab_size, dropout=0.0)
    model = Transformer(cfg).eval()
    pairs = tuple(load_real("test", ("handbook",))[: args.sentences])
    freq = piece_frequency(tokenizer, {})  # the tokenizer's piece scores (a random model has no corpus)
    items = fitting(tokenizer, pairs, cfg.max_len)
    print(f"base-size random model: {model.num_parameters() / 1e6:.1f} M parameters, {len(items)} sentences")

    @torch.inference_mode()
    def forwards(attention: bool) -> None:
        for src, tgt_in, _ in batches(items, cfg.pad_id, 32):
            model(src, tgt_in, return_attention=attention)

    def report(name: str, ours: float, ref: float, ref_name: str) -> None:
        print(f"{name}: {ours:.3f} s vs {ref_name} {ref:.3f} s: ratio {ours / ref:.2f}")

    r = args.repeat
    report(
        "roles",
        median_seconds(lambda: measure_roles(model, tokenizer, pairs, freq), r),
        median_seconds(lambda: forwards(True), r),
        "forwards with attention",
    )
    if Parser.available():
        sources = [src for src, _ in pairs]
        report(
            "roles with the syntactic ones (parses included)",
            median_seconds(lambda: measure_roles(model, tokenizer, pairs, freq, arcs=parse_all(sources)), r),
            median_seconds(lambda: measure_roles(model, tokenizer, pairs, freq), r),
            "roles without",
        )
    report(
        "importance",
        median_seconds(lambda: head_importance(model, tokenizer, pairs), r),
        median_seconds(lambda: forwards(False), r),
        "forwards",
    )
    importance = head_importance(model, tokenizer, pairs)
    t = time.perf_counter()
    pruning_curve(model, tokenizer, pairs, importance, AttentionKind.CROSS, n_points=3)
    curve = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(3):
        translate_chrf(model, tokenizer, pairs, CallOptions())
    report("pruning curve (cross, 3 points)", curve, time.perf_counter() - t, "3 greedy translations")


if __name__ == "__main__":
    main()
