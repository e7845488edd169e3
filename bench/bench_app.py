"""Server-side cost of the explorer: compute a sentence's results and build every figure.

    python bench/bench_app.py [--checkpoint DIR]

Prints, for a 30-piece and a 128-piece sentence, the median time of
(1) translating with attention capture and (2) building every figure the explorer
shows, and the JSON payload size of the all-heads overview. Runs on the CPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds  # noqa: E402

from transformer import figures  # noqa: E402
from transformer.checkpoint import DEFAULT_CHECKPOINT, load_checkpoint  # noqa: E402
from transformer.tokenizer import word_groups  # noqa: E402
from transformer.views import analyse, difference, merge_words, token_focus  # noqa: E402

torch.set_num_threads(2)
SENTENCES = [
    "The dog and the cats didn't cross the street because it was too tired.",
    "The cow crossed neither the roads nor the bridge because they were too narrow.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "The horses stopped at the river since they were too scared.",
]


def sentence_of(tokenizer, n_pieces: int) -> str:
    """Corpus-like sentences strung together, cut to n_pieces pieces."""
    text, i = "", 0
    while len(tokenizer.encode(text)) < n_pieces:
        text = (text + " " + SENTENCES[i % len(SENTENCES)]).strip()
        i += 1
    return tokenizer.decode(tokenizer.encode(text)[:n_pieces])


def every_figure(a, b) -> list:
    """The figures the explorer builds for one view of each tab."""
    out = []
    for kind in ("encoder", "decoder", "cross"):
        rows, keys = a.labels(kind)
        m = a.maps(kind)
        out.append(figures.attention_heatmap(m[-1, 0], rows, keys, kind))
        out.append(figures.heads_overview(m, kind, highlight=(0, 0)))
    H = a.encoder.shape[1]
    out.append(figures.token_focus_figure(token_focus(a.encoder, 1), H, a.source_pieces, "focus"))
    out.append(figures.token_focus_figure(token_focus(a.cross, 1), H, a.source_pieces, "focus"))
    rows, keys = a.labels("encoder")
    rg, kg = word_groups(rows), word_groups(keys)
    out.append(
        figures.attention_heatmap(
            merge_words(a.encoder, rg, kg)[-1, 0], [str(g) for g in rg], [str(g) for g in kg], "words"
        )
    )
    d = difference(a.encoder, b.encoder)
    out.append(figures.attention_heatmap(d.delta[-1, 0], rows[: d.rows], keys[: d.cols], "diff", diverging=True))
    out.append(figures.replay_figure(a.cross[-1, :, 0], a.source_pieces, "replay"))
    out.append(figures.candidates_figure(a.top_tokens[0], a.top_probs[0].tolist(), "candidates"))
    return out


def median_ms(fn, repeat: int = 7) -> float:
    return median_seconds(fn, repeat) * 1e3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    args = p.parse_args()
    ckpt = load_checkpoint(args.checkpoint)
    for n in (30, 128):
        n = min(n, ckpt.config.max_len - 1)
        text = sentence_of(ckpt.tokenizer, n)
        a = analyse(ckpt.model, ckpt.tokenizer, text)
        b = analyse(ckpt.model, ckpt.tokenizer, text.replace("tired", "narrow"))
        t_compute = median_ms(lambda text=text: analyse(ckpt.model, ckpt.tokenizer, text))
        t_figs = median_ms(lambda a=a, b=b: every_figure(a, b))
        overview = figures.heads_overview(a.encoder, "overview")
        size = len(overview.to_json().encode())
        print(
            f"{len(a.source_pieces):4d} source pieces, {len(a.output_pieces):4d} produced: "
            f"compute {t_compute:7.1f} ms + figures {t_figs:6.1f} ms = {t_compute + t_figs:7.1f} ms   "
            f"overview payload {size / 1024:7.1f} kB"
        )


if __name__ == "__main__":
    main()
