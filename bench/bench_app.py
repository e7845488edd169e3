"""Server-side cost of the app's pages: compute a sentence's results and build the figures a page sends.

    python bench/bench_app.py [--checkpoint DIR]
    python bench/bench_app.py --size base     # a paper-base-size model, random weights made on the fly

For a 30-piece and a 128-piece sentence: the median time of translating with every
attention map captured, of building each explorer tab's figures through the same
typed views the app uses (pages/_ui/views.py), and of serialising them as Streamlit
does (plotly JSON). Then, for the 30-piece sentence, each lesson page's computation
and figures (pages/_ui/lesson_views.py), and the head lab's ablation ranking over its
300-sentence probe set. Runs on the CPU with 1 thread per model call, as the app does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import plotly.io as pio
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds  # noqa: E402

from pages._ui.i18n import Translator  # noqa: E402
from pages._ui.views import (  # noqa: E402
    CandidatesView,
    Context,
    DiffView,
    FocusView,
    HeadView,
    OverviewView,
    ReplayView,
    WordsView,
)
from transformer.analysis import analyse  # noqa: E402
from transformer.attention import AttentionKind, HeadId  # noqa: E402
from transformer.checkpoint import load_checkpoint  # noqa: E402
from transformer.layout import DEFAULT_CHECKPOINT  # noqa: E402

torch.set_num_threads(1)  # as app.py sets it
TR = Translator("en")
SENTENCES = [
    "The dog and the cats didn't cross the street because it was too tired.",
    "The cow crossed neither the roads nor the bridge because they were too narrow.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "The horses stopped at the river since they were too scared.",
]
ENC, DEC, CROSS = AttentionKind.ENCODER, AttentionKind.DECODER, AttentionKind.CROSS


def sentence_of(tokenizer, n_pieces: int) -> str:
    """Corpus-like sentences strung together, cut to n_pieces pieces."""
    text, i = "", 0
    while len(tokenizer.encode(text)) < n_pieces:
        text = (text + " " + SENTENCES[i % len(SENTENCES)]).strip()
        i += 1
    return tokenizer.decode(tokenizer.encode(text)[:n_pieces])


def explorer_tabs(other: str) -> dict[str, list]:
    """The views each explorer tab draws, as the app opens them."""
    return {
        "heads": [HeadView(HeadId(ENC, 2, 0)), HeadView(HeadId(CROSS, 1, 1)), HeadView(HeadId(DEC, 1, 0))],
        "all heads": [OverviewView(CROSS, HeadId(CROSS, 1, 1)), HeadView(HeadId(CROSS, 1, 1))],
        "token focus": [FocusView(ENC, 1), FocusView(CROSS, 1)],
        "words": [WordsView(HeadId(CROSS, 1, 1))],
        "compare": [HeadView(HeadId(CROSS, 1, 1)), HeadView(HeadId(CROSS, 1, 1)), DiffView(HeadId(CROSS, 1, 1), other)],
        "replay": [ReplayView(1, 1), CandidatesView(1)],
    }


def ms(fn, repeat: int = 7) -> float:
    return median_seconds(fn, repeat) * 1e3


def lesson_pages(ckpt, text: str, a) -> dict[str, tuple]:
    """name -> (computation, views to draw from its result): what each lesson page does for a sentence."""
    from pages._ui.lesson_views import (
        ContributionView,
        LookAheadRowView,
        LookAheadView,
        OrderMapView,
        PaddingStageView,
        SimilarityView,
        StageView,
        TableView,
        VectorsView,
        WavesView,
        WindowMapView,
    )
    from transformer.inspection import attention_variants, masking, positions
    from transformer.inspection.arithmetic import walkthrough
    from transformer.inspection.masking import MASK_STAGES, Stage
    from transformer.inspection.multihead import head_contributions
    from transformer.inspection.scaling import model_scaling

    m, tok = ckpt.model, ckpt.tokenizer
    other = "The dogs and the cat didn't cross the bridge because they were too tired."
    src = tok.source_ids(text, m.config.max_len)
    dec = list(a.decoder_ids)
    q = a.pronoun_step or 0
    windows = [None, len(src), *range(len(src) - 1, -1, -1)]
    stages = ("q", "K", "V", "scores", "scaled", "masked", "weights", "head", "heads")
    return {
        "masks: padding": (
            lambda: masking.padding_demo(m, tok, [text, other]),
            [PaddingStageView(s, HeadId(ENC, 1, 1)) for s in MASK_STAGES],
        ),
        "masks: look-ahead": (
            lambda: masking.look_ahead_demo(m, tok, text),
            [LookAheadRowView(HeadId(DEC, 1, 0), 3)]
            + [LookAheadView(s, HeadId(DEC, 1, 0)) for s in (Stage.MASKED, Stage.WEIGHTS)],
        ),
        "masks: padding off": (lambda: masking.padding_effect(m, tok, text, other), []),
        "positions: table": (
            lambda: positions.position_table(m, m.config.max_len),
            [TableView(64), SimilarityView(64), WavesView((0, 1, 8, 64), 64)],
        ),
        "positions: order": (
            lambda: positions.order_blindness(m, tok, text, 0),
            [OrderMapView(False, HeadId(ENC, 0, 0)), OrderMapView(True, HeadId(ENC, 0, 0))],
        ),
        "step by step": (
            lambda: walkthrough(m, src, dec, HeadId(CROSS, 1, 1), q, a.labels(CROSS)),
            [StageView(s) for s in stages],
        ),
        "why √d_k (model)": (lambda: model_scaling(m, src, dec), []),
        "multi-head": (
            lambda: head_contributions(m, src, dec, CROSS, 1, q),
            [VectorsView("heads"), VectorsView("concat"), VectorsView("w_o"), ContributionView()],
        ),
        "restricted attention": (
            lambda: (attention_variants.restricted_runs(m, tok, text, windows), a.source_pieces),
            [WindowMapView(0, HeadId(ENC, 0, 0)), WindowMapView(4, HeadId(ENC, 0, 0))],
        ),
    }


OPUS_MT_VOCAB = 59514  # Helsinki-NLP/opus-mt-en-fr's vocabulary


def base_checkpoint(vocab_size: int = OPUS_MT_VOCAB, seed: int = 0):
    """The size of an imported opus-mt model, made on the fly (nothing is written): the paper's base model
    (6+6 layers, d_model 512, 8 heads, d_ff 2048) with opus-mt's swish, logits bias, special ids and a
    Marian tokenizer of vocab_size pieces (the shipped sentencepiece model on both sides, its pieces
    then placeholders up to vocab_size in vocab.json). Random weights: for timing only."""
    from transformer.checkpoint import Checkpoint
    from transformer.config import TransformerConfig
    from transformer.model import Transformer
    from transformer.tokenizer import MarianTokenizer

    shipped = load_checkpoint(DEFAULT_CHECKPOINT).tokenizer
    sp, data = shipped.sp, shipped.model_bytes
    vocab = {"</s>": 0, "<unk>": 1}
    for i in range(sp.get_piece_size()):
        if not (sp.is_control(i) or sp.is_unknown(i)):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    while len(vocab) < vocab_size - 1:
        vocab[f"▁placeholder{len(vocab)}"] = len(vocab)
    vocab["<pad>"] = vocab_size - 1
    pad = vocab_size - 1
    cfg = TransformerConfig.preset(
        "base",
        vocab_size,
        dropout=0.0,
        max_len=512,
        pad_id=pad,
        bos_id=pad,
        eos_id=0,
        activation="swish",
        output_bias=True,
    )
    torch.manual_seed(seed)
    model = Transformer(cfg).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return Checkpoint(model, cfg, MarianTokenizer(data, data, vocab, vocab_size, pad), {}, None)


def bench_base() -> None:
    """--size base: translating a 30-piece sentence with every map, and the explorer's figures."""
    ckpt = base_checkpoint()
    m, tok = ckpt.model, ckpt.tokenizer
    text = sentence_of(tok, 30)
    other = text.replace("tired", "narrow")
    print(f"base size: {m.num_parameters() / 1e6:.1f} M parameters, vocabulary {ckpt.config.vocab_size}")
    with torch.inference_mode():
        a = analyse(m, tok, text)
        b = analyse(m, tok, other)
        t_translate = ms(lambda: analyse(m, tok, text), 3)
        src = torch.tensor([tok.source_ids(text)])
        tgt = torch.tensor([[ckpt.config.bos_id] + tok.encode_target(text)[:31]])
        t_pass = ms(lambda: m(src, tgt, return_attention=True), 5)
        ref = load_checkpoint(DEFAULT_CHECKPOINT)  # the reference in the same run: the shipped model
        ref_text = sentence_of(ref.tokenizer, 30)
        r = analyse(ref.model, ref.tokenizer, ref_text)
        t_ref = ms(lambda: analyse(ref.model, ref.tokenizer, ref_text), 3)
    S, T = len(a.source_pieces), len(a.output_pieces)
    print(f"{S} source pieces, {T} produced (random weights never stop early; the cap is 2 S + 8)")
    print(f"  translate with every map {t_translate:7.1f} ms   ({t_translate / T:.1f} ms per produced piece)")
    per_ref = t_ref / len(r.output_pieces)
    print(
        f"  reference, the shipped {DEFAULT_CHECKPOINT.name} on a 30-piece sentence: {t_ref:.1f} ms for "
        f"{len(r.output_pieces)} pieces ({per_ref:.1f} ms per piece); base / shipped per piece: "
        f"{t_translate / T / per_ref:.1f}x"
    )
    print(f"  one teacher-forced pass, {S} x {tgt.size(1)} pieces, every map: {t_pass:.1f} ms")
    ctx = Context(a, ckpt, lambda _t: b)
    for tab, views in explorer_tabs(other).items():
        t_build = ms(lambda views=views: [v.figure(ctx, TR) for v in views])
        figs = [v.figure(ctx, TR) for v in views]
        t_json = ms(lambda figs=figs: [pio.to_json(f.to_dict(), validate=False) for f in figs])
        size = sum(len(pio.to_json(f.to_dict(), validate=False)) for f in figs)
        print(f"  {tab:12s} figures {t_build:6.1f} ms + JSON {t_json:5.1f} ms   payload {size / 1024:7.1f} kB")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    p.add_argument("--size", choices=["base"], help="base: a paper-base-size model, random weights made on the fly")
    args = p.parse_args()
    if args.size == "base":
        bench_base()
        return
    ckpt = load_checkpoint(args.checkpoint)
    for n in (30, 128):
        n = min(n, ckpt.config.max_len - 1)
        text = sentence_of(ckpt.tokenizer, n)
        other = text.replace("tired", "narrow")
        with torch.inference_mode():
            a = analyse(ckpt.model, ckpt.tokenizer, text)
            b = analyse(ckpt.model, ckpt.tokenizer, other)
            t_compute = ms(lambda text=text: analyse(ckpt.model, ckpt.tokenizer, text))
        ctx = Context(a, ckpt, lambda _t, b=b: b)
        print(f"{len(a.source_pieces)} source pieces, {len(a.output_pieces)} produced: compute {t_compute:.1f} ms")
        for tab, views in explorer_tabs(other).items():
            t_build = ms(lambda views=views, ctx=ctx: [v.figure(ctx, TR) for v in views])
            figs = [v.figure(ctx, TR) for v in views]
            t_json = ms(lambda figs=figs: [pio.to_json(f.to_dict(), validate=False) for f in figs])
            size = sum(len(pio.to_json(f.to_dict(), validate=False)) for f in figs)
            print(f"  {tab:12s} figures {t_build:6.1f} ms + JSON {t_json:5.1f} ms   payload {size / 1024:7.1f} kB")
        if n == 30:
            print("lesson pages, 30-piece sentence:")
            for name, (compute, views) in lesson_pages(ckpt, text, a).items():
                with torch.inference_mode():
                    result = compute()
                    t_compute = ms(compute, 3)
                t_figs = ms(lambda views=views, result=result: [v.figure(result, TR) for v in views], 3)
                print(f"  {name:22s} compute {t_compute:7.1f} ms + figures {t_figs:6.1f} ms")
    from transformer.corpus import CorpusSpec, generate_test
    from transformer.inspection.headlab import probe_set, rank_heads

    ps = probe_set(ckpt.tokenizer, generate_test(CorpusSpec.from_card(ckpt.card)), 300)
    t_rank = median_seconds(lambda: rank_heads(ckpt.model, ps), 1)
    n_heads = ckpt.config.n_heads * (ckpt.config.n_encoder_layers + 2 * ckpt.config.n_decoder_layers)
    print(f"head lab: ablation ranking of {n_heads} heads over {ps.n} probe sentences: {t_rank:.2f} s")


if __name__ == "__main__":
    main()
