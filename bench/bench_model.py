"""Model benchmarks on the CPU, as ratios against references run in the same process.

    python bench/bench_model.py

1. Training-step throughput (target tokens/s): ours vs torch.nn.Transformer of identical size.
2. Cost of capturing every attention map: forward with return_attention vs without.
3. Greedy decoding of 50 tokens: with the key/value cache vs recomputing the prefix.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds  # noqa: E402

from transformer import DecoderCache, Transformer, TransformerConfig, sinusoidal_table  # noqa: E402

torch.set_num_threads(2)
torch.manual_seed(0)
CFG = TransformerConfig.preset("small", vocab_size=1000, n_encoder_layers=3, n_decoder_layers=2, dropout=0.1)
BASE = TransformerConfig.preset("base", vocab_size=1000, dropout=0.1)
B, S, T = 96, 24, 26


class TorchReference(nn.Module):
    """torch.nn.Transformer with the same embeddings, positions and tied output projection."""

    def __init__(self, c: TransformerConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.register_buffer("pe", sinusoidal_table(c.max_len, c.d_model))
        self.core = nn.Transformer(
            c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff, c.dropout, batch_first=True
        )
        self.scale = math.sqrt(c.d_model)

    def forward(self, src, tgt):
        e = lambda x: self.embed(x) * self.scale + self.pe[: x.size(1)]  # noqa: E731
        mask = self.core.generate_square_subsequent_mask(tgt.size(1))
        h = self.core(e(src), e(tgt), tgt_mask=mask, tgt_is_causal=True)
        return h @ self.embed.weight.T


def train_step(model, opt, src, tgt_in, tgt_out, ours: bool):
    logits = model(src, tgt_in).logits if ours else model(src, tgt_in)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()


def main() -> None:
    src = torch.randint(4, 1000, (B, S))
    tgt_in = torch.randint(4, 1000, (B, T))
    tgt_out = torch.randint(4, 1000, (B, T))
    ours, ref = Transformer(CFG).train(), TorchReference(CFG).train()
    o1, o2 = torch.optim.Adam(ours.parameters()), torch.optim.Adam(ref.parameters())
    t_ours = median_seconds(lambda: train_step(ours, o1, src, tgt_in, tgt_out, True), 15)
    t_ref = median_seconds(lambda: train_step(ref, o2, src, tgt_in, tgt_out, False), 15)
    tok = B * T
    print(
        f"training step  ours {tok / t_ours:9,.0f} tok/s   nn.Transformer {tok / t_ref:9,.0f} tok/s   "
        f"ratio {t_ref / t_ours:.2f}x (goal >= 1.0)"
    )

    ours.eval()
    with torch.no_grad():
        plain = median_seconds(lambda: ours(src, tgt_in), 20)
        capture = median_seconds(lambda: ours(src, tgt_in, return_attention=True), 20)
    print(
        f"capture all attention maps  {capture * 1e3:.1f} ms vs {plain * 1e3:.1f} ms   "
        f"cost {capture / plain:.2f}x (goal <= 1.3)"
    )

    one = src[:1]
    for name, model in (("shipped size", ours), ("paper base size", Transformer(BASE).eval())):

        @torch.inference_mode()
        def decode(use_cache: bool, model=model, n: int = 50):
            memory = model.encode(one)
            cache = DecoderCache.empty(len(model.decoder_layers)) if use_cache else None
            ys = torch.tensor([[2]])
            for _ in range(n):
                logits = model.decode(ys[:, -1:] if use_cache else ys, memory, cache=cache)[:, -1]
                ys = torch.cat([ys, logits.argmax(-1, keepdim=True)], 1)
            return ys

        assert torch.equal(decode(True), decode(False))
        cached, uncached = median_seconds(lambda: decode(True), 7), median_seconds(lambda: decode(False), 7)
        print(
            f"greedy decoding, 50 tokens, {name:15s}  cached {cached * 1e3:6.1f} ms vs uncached "
            f"{uncached * 1e3:6.1f} ms   speed-up {uncached / cached:.2f}x (goal >= 3)"
        )


if __name__ == "__main__":
    main()
