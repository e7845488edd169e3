"""Training settings: :class:`TrainConfig` and the named presets every shipped checkpoint was trained with.

A new preset goes into ``PRESETS``; ``python -m transformer train --preset NAME`` and the app's
training page list it from there. No torch here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..corpus import CorpusSpec


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run needs; ``PRESETS`` name the common ones."""

    model_preset: str = "small"
    model_overrides: dict[str, Any] = field(default_factory=dict)
    corpus: CorpusSpec = CorpusSpec()
    data_file: str | None = None  # bring your own source<TAB>target corpus instead
    # committed real-text corpora (transformer/corpus/data/NAME.tsv.gz) whose training split (by page)
    # joins the corpus above, e.g. ("libreoffice", "handbook")
    real_data: tuple[str, ...] = ()
    vocab_size: int = 1000
    steps: int = 3000
    batch_tokens: int = 4000  # target tokens per batch (padding included)
    lr_factor: float = 1.0
    warmup_steps: int = 400
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-9
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    seed: int = 0
    snapshot_steps: tuple[int, ...] = (0, 100, 300, 1000)
    checkpoint_every: int = 250
    max_len: int = 64  # longest training sentence, in pieces
    # Off only to show why the mask exists: the decoder then sees the token it must predict.
    look_ahead_mask: bool = True
    # > 0: a loss that pulls every cross-attention head's row writing il/elle onto "it"/"they", and the
    # row writing the connective (parce que / puisque / car) onto the English one (word alignment,
    # Garg et al. 2019), so that only the encoder can resolve the reference.
    align_pronoun: float = 0.0
    align_connective: bool = True  # with align_pronoun: also the connective's row (off: the pronoun's row alone)
    # bfloat16 autocast for the forward pass and the loss (the weights, Adam's state and every checkpoint stay
    # float32): on a CPU with AMX or AVX512-BF16, or a GPU, a step costs ~0.6 of a float32 one. Where bfloat16
    # is emulated (an AVX2 CPU: ~15 times a float32 step) the run stays float32 (loop.bfloat16_is_fast)
    mixed_precision: bool = False
    # > 0: the run also ends, complete, once the loop has run this many seconds (steps is then an upper bound).
    # The paper's schedule does not depend on the run's length, so an early end needs no other change.
    time_limit_s: float = 0.0
    # A checkpoint folder (relative to the working directory or the repository) whose weights and tokenizer the
    # run starts from (same architecture: model_preset, model_overrides and vocab_size are then the checkpoint's);
    # recorded in the card. A resumed run continues from its own last/ instead.
    init_from: str | None = None
    # > 0, with init_from: every feed-forward layer of the starting model widens to this many units before the run,
    # the new units' output weights zero, so that the run starts from exactly what the checkpoint computed
    # (transformer/training/grow.py, Net2Net); recorded in the card's init_from
    grow_d_ff: int = 0
    # with init_from: the run learns its own vocabulary on its corpora (vocab_size, tgt_vocab_size) and starts from
    # the checkpoint's weights moved onto it, each new piece's row the checkpoint's own for that piece, else the
    # mean of the rows of the pieces the checkpoint cuts its text into (transformer/training/revocab.py); recorded
    # in the card's init_from
    revocab: bool = False
    # (corpus name, times): a committed corpus of real_data whose training pairs appear that many times in each
    # epoch (weighting it up against the others); unnamed corpora appear once
    real_repeat: tuple[tuple[str, int], ...] = ()
    # "float16": snapshots are written in half precision (half the size; read back into a float32 model). The
    # final checkpoint and last/ stay float32
    snapshot_dtype: str = "float32"
    # > 0: the target gets a sentencepiece model and a vocabulary of its own, of this many pieces (vocab_size is
    # then the source's), trained on the target side alone with tgt_character_coverage (sentencepiece advises
    # 0.9995 for Chinese); stored as source.spm + target.spm + vocab.json + target_vocab.json (transformer/layout.py)
    tgt_vocab_size: int = 0
    tgt_character_coverage: float = 0.9995
    # > 0: every this many steps the weights (float32) are kept in average/step-NNNNNN/, the latest average_last - 1
    # of them; the end of the run then also writes averaged/, the checkpoint whose weights are their mean with the
    # final weights (python -m transformer average; the paper, §6.1, averages its last 5 checkpoints, written at
    # 10-minute intervals). The run's own checkpoint stays its final weights: which one to keep is the preset's rule
    average_every: int = 0
    average_last: int = 5

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# checkpoints/coref-en-fr: the generated coreference corpus alone, il/elle decided in cross-attention.
COREF = TrainConfig(
    model_preset="small",
    model_overrides=dict(n_encoder_layers=3, n_decoder_layers=2),
    corpus=CorpusSpec(n_examples=60000, both_share=0.5, number_share=0.2),
    steps=2000,
    batch_tokens=3000,
    lr_factor=0.5,
    snapshot_steps=(0, 100, 300, 600, 1000, 1400),
)

# checkpoints/leak-masked and leak-no-mask: twins with and without the look-ahead mask (no label smoothing,
# so the copying shows in the loss).
LEAK_MASKED = TrainConfig(
    model_preset="small",
    model_overrides=dict(n_encoder_layers=2, n_decoder_layers=2, d_model=64, d_ff=256),
    corpus=CorpusSpec(n_examples=20000, both_share=0.0, number_share=0.3),
    vocab_size=600,
    steps=1100,
    batch_tokens=2000,
    warmup_steps=200,
    label_smoothing=0.0,  # so that the loss can show the copying: it has no floor to hide behind
    snapshot_steps=(),
)

# real-coref: four real-text corpora (manuals, GNOME help, editors' interface strings) beside the coreference
# corpus with typed variants, the paper's dropout, bfloat16 autocast; an hour on 2 cores.
REAL_COREF = TrainConfig(
    model_preset="small",
    model_overrides=dict(
        d_model=192, d_ff=768, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
        attention_dropout=0.0, activation_dropout=0.0,
    ),
    corpus=CorpusSpec(n_examples=32000, both_share=0.5, number_share=0.2, variant_share=0.4),
    real_data=("libreoffice", "handbook", "gnome", "ui"),
    vocab_size=6000,
    steps=4500,
    batch_tokens=3000,
    lr_factor=0.35,
    warmup_steps=800,
    mixed_precision=True,
    snapshot_steps=(0, 1000, 3000),
    checkpoint_every=500,
)

# real-apps: real-coref's recipe with the help of 64 GNOME and MATE applications; 58 minutes.
REAL_APPS = dataclasses.replace(
    REAL_COREF,
    corpus=CorpusSpec(n_examples=40000, both_share=0.5, number_share=0.2, variant_share=0.4),
    real_data=("libreoffice", "handbook", "gnome", "apps", "ui"),
    steps=6200,
    time_limit_s=3480.0,
)

# real-kde: real-apps with the handbooks of 110 KDE applications.
REAL_KDE = dataclasses.replace(REAL_APPS, real_data=("libreoffice", "handbook", "gnome", "apps", "kde", "ui"))
# real-kde-align: real-kde with the alignment loss that leaves "it" to the encoder (Garg et al. 2019).
REAL_KDE_ALIGN = dataclasses.replace(REAL_KDE, align_pronoun=1.0)

# en-fr's first session: real-kde-align continued on everyday text (Wesnoth, GCompris, FreeDict), on a GPU.
EN_FR = dataclasses.replace(
    REAL_KDE_ALIGN,
    init_from="checkpoints/real-kde-align",
    real_data=("libreoffice", "handbook", "gnome", "apps", "kde", "ui", "everyday", "everyday_words"),
    real_repeat=(("everyday", 3),),
    steps=6000,
    batch_tokens=20000,
    lr_factor=0.3,
    warmup_steps=400,
    snapshot_steps=(2000,),
    snapshot_dtype="float16",
    checkpoint_every=500,
    time_limit_s=240.0,  # the device tool runs a command for at most 10 minutes: data, training, scoring, packing
)


def continued_on_cpu(base: TrainConfig, init_from: str, lr_factor: float, time_limit_s: float) -> TrainConfig:
    """A shipped checkpoint's weights continued on two CPU cores (when no GPU is lent): base's corpora and model,
    8,000-token batches, a fresh Adam with a 400-step warm-up, no snapshot, last/ every 100 steps (a stop costs
    at most a few minutes), ended by its time limit."""
    return dataclasses.replace(
        base,
        init_from=init_from,
        batch_tokens=8000,
        steps=20000,
        lr_factor=lr_factor,
        warmup_steps=400,
        snapshot_steps=(),
        checkpoint_every=100,
        time_limit_s=time_limit_s,
    )


# en-fr continued on the CPU, same corpora.
EN_FR_CONTINUED = continued_on_cpu(EN_FR, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5400.0)

# en-fr-scratch: en-fr's corpora from scratch, wider and deeper, 8,000 pieces (a GPU candidate, not kept).
EN_FR_SCRATCH = dataclasses.replace(
    EN_FR,
    init_from=None,
    model_overrides=dict(
        d_model=256, d_ff=1024, n_heads=4, n_encoder_layers=4, n_decoder_layers=4,
        attention_dropout=0.0, activation_dropout=0.0,
    ),
    vocab_size=8000,
    steps=8000,
    lr_factor=0.7,
    warmup_steps=1000,
    snapshot_steps=(),  # none: the GPU machine brings back 64 MiB a call, and en-fr and en-zh come first
    time_limit_s=300.0,  # as long as en-fr-gpu's, beside which it runs
)

# en-zh: English → 简体中文 from scratch on LibreOffice help and Wesnoth, separate 8,000 + 8,000 vocabularies (GPU).
EN_ZH = TrainConfig(
    model_preset="small",
    model_overrides=dict(
        d_model=256, d_ff=1024, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
        attention_dropout=0.0, activation_dropout=0.0,
    ),
    corpus=CorpusSpec(n_examples=0, n_test=0),
    real_data=("zh/libreoffice", "zh/everyday"),
    real_repeat=(("zh/everyday", 2),),
    vocab_size=8000,
    tgt_vocab_size=8000,
    steps=8000,
    batch_tokens=20000,
    lr_factor=1.0,
    warmup_steps=1000,
    mixed_precision=True,
    snapshot_steps=(1000,),
    snapshot_dtype="float16",
    checkpoint_every=500,
    time_limit_s=240.0,  # the device tool runs a command for at most 10 minutes: data, training, scoring, packing
)

# en-fr continued on a GPU, everyday text four times an epoch.
EN_FR_GPU = dataclasses.replace(
    EN_FR_CONTINUED,
    real_repeat=(("everyday", 4),),
    batch_tokens=20000,
    lr_factor=0.15,
    checkpoint_every=500,
    time_limit_s=300.0,
)

# en-zh with GNOME's help, applications' help and interface strings (GPU).
EN_ZH_MORE = dataclasses.replace(
    EN_ZH, real_data=(*EN_ZH.real_data, "zh/gnome", "zh/apps", "zh/ui"), snapshot_steps=(), time_limit_s=300.0
)
# en-zh-more continued from the shipped en-zh (GPU).
EN_ZH_CONTINUED = dataclasses.replace(EN_ZH_MORE, init_from="checkpoints/en-zh", lr_factor=0.3, warmup_steps=400)

# en-zh-more continued on the CPU.
EN_ZH_CPU = continued_on_cpu(EN_ZH_MORE, "checkpoints/en-zh", lr_factor=0.2, time_limit_s=2400.0)

# en-fr continued on the CPU with four more games' catalogues.
EN_FR_GAMES = dataclasses.replace(
    continued_on_cpu(EN_FR, "checkpoints/en-fr", lr_factor=0.15, time_limit_s=4500.0),
    real_data=(*EN_FR.real_data, "games"),
    real_repeat=(("everyday", 4), ("games", 2)),
)

# en-fr-games with household text.
EN_FR_OBJECTS = dataclasses.replace(
    EN_FR_GAMES,
    real_data=(*EN_FR_GAMES.real_data, "objects"),
    real_repeat=(*EN_FR_GAMES.real_repeat, ("objects", 2)),
)

# en-fr-objects with three more games' talk, averaged/ every 300 steps.
EN_FR_DIALOGUE = dataclasses.replace(
    continued_on_cpu(EN_FR_OBJECTS, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5400.0),
    real_data=(*EN_FR_OBJECTS.real_data, "dialogue"),
    real_repeat=(*EN_FR_OBJECTS.real_repeat, ("dialogue", 3)),
    average_every=300,
)

# en-fr-dialogue with stories, children's words and four more games.
EN_FR_STORIES = dataclasses.replace(
    continued_on_cpu(EN_FR_DIALOGUE, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5700.0),
    real_data=(*EN_FR_DIALOGUE.real_data, "stories"),
    real_repeat=(*EN_FR_DIALOGUE.real_repeat, ("stories", 3)),
)

# en-fr-stories with every feed-forward layer grown to 1,536 units first (grow.py).
EN_FR_WIDE = dataclasses.replace(
    continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5400.0),
    grow_d_ff=1536,
)

# en-fr-stories grown again, to 3,072 units (tried, not kept).
EN_FR_WIDER = dataclasses.replace(
    continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.035, time_limit_s=5400.0),
    grow_d_ff=3072,
)

# en-fr-stories at the shipped size and a low peak (tried, not kept).
EN_FR_STEADY = continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.035, time_limit_s=5100.0)

# en-fr-stories on its everyday corpora alone, the manuals left out.
EN_FR_EVERYDAY_ONLY = dataclasses.replace(
    continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.035, time_limit_s=4800.0),
    real_data=tuple(n for n in EN_FR_STORIES.real_data if n not in REAL_KDE.real_data),
)

# en-zh continued on the CPU with household text.
EN_ZH_OBJECTS = dataclasses.replace(
    continued_on_cpu(EN_ZH_MORE, "checkpoints/en-zh", lr_factor=0.2, time_limit_s=4200.0),
    real_data=(*EN_ZH_MORE.real_data, "zh/objects"),
)

# en-zh-objects at half the peak, averaged/ every 300 steps.
EN_ZH_LOW_LR = dataclasses.replace(
    continued_on_cpu(EN_ZH_OBJECTS, "checkpoints/en-zh", lr_factor=0.1, time_limit_s=4800.0),
    average_every=300,
)

# en-zh-low-lr with the help corpora twice an epoch.
EN_ZH_HELP = dataclasses.replace(
    EN_ZH_LOW_LR,
    real_repeat=(("zh/everyday", 2), ("zh/libreoffice", 2), ("zh/gnome", 2), ("zh/apps", 2)),
    time_limit_s=1800.0,
    average_every=200,
)

# en-zh-help with Debian's documentation.
EN_ZH_DOCS = dataclasses.replace(
    EN_ZH_HELP,
    real_data=(*EN_ZH_HELP.real_data, "zh/docs"),
    real_repeat=(*EN_ZH_HELP.real_repeat, ("zh/docs", 2)),
    lr_factor=0.05,
    time_limit_s=5400.0,
    average_every=300,
)

# en-zh-docs with Debian's guides.
EN_ZH_MANUALS = dataclasses.replace(
    EN_ZH_DOCS,
    real_data=(*EN_ZH_DOCS.real_data, "zh/guides"),
    real_repeat=(*EN_ZH_HELP.real_repeat, ("zh/docs", 3), ("zh/guides", 3)),
    time_limit_s=4800.0,
)

# en-zh-manuals with Inkscape's tutorials.
EN_ZH_TUTORIALS = dataclasses.replace(
    EN_ZH_MANUALS,
    real_data=(*EN_ZH_MANUALS.real_data, "zh/tutorials"),
    real_repeat=(*EN_ZH_MANUALS.real_repeat, ("zh/tutorials", 5)),
)

# en-zh-tutorials run again (the same preset, a later session).
EN_ZH_TUTORIALS_AGAIN = EN_ZH_TUTORIALS

# en-zh-tutorials in a new order.
EN_ZH_RESHUFFLED = dataclasses.replace(EN_ZH_TUTORIALS, seed=6, time_limit_s=5700.0)

# en-zh-reshuffled with LibreOffice's interface and the ITIL manual.
EN_ZH_OFFICE = dataclasses.replace(
    EN_ZH_RESHUFFLED,
    real_data=(*EN_ZH_TUTORIALS.real_data, "zh/office_ui", "zh/itil"),
    real_repeat=(*EN_ZH_TUTORIALS.real_repeat, ("zh/itil", 3)),
    time_limit_s=4800.0,
)

# en-zh-office in a new order.
EN_ZH_OFFICE_AGAIN = dataclasses.replace(EN_ZH_OFFICE, seed=7, time_limit_s=5400.0)

# en-zh-office-again with KiCad's manuals.
EN_ZH_KICAD = dataclasses.replace(
    EN_ZH_OFFICE_AGAIN,
    real_data=(*EN_ZH_OFFICE.real_data, "zh/kicad"),
    real_repeat=(*EN_ZH_OFFICE.real_repeat, ("zh/kicad", 5)),
    seed=8,
)

# en-zh-kicad with the interfaces of graphics programs other than GIMP.
EN_ZH_GRAPHICS = dataclasses.replace(
    EN_ZH_KICAD,
    real_data=(*EN_ZH_KICAD.real_data, "zh/graphics"),
    seed=9,
)

# The Tatoeba runs' schedule (issue 61): from scratch, 6,000-token batches, a peak at step 800, float16 snapshots,
# last/ every 100 steps, averaged/ from every 500, no time limit (resumed across sessions until the steps run out).
TATOEBA_RUN = dict(
    steps=40000,
    batch_tokens=6000,
    lr_factor=0.4,
    warmup_steps=800,
    snapshot_steps=(0, 1000, 4000),
    snapshot_dtype="float16",
    checkpoint_every=100,
    average_every=500,
    time_limit_s=0.0,
)

# en-fr-tatoeba (issue 61): en-fr's corpora with Tatoeba twice an epoch, from scratch, 12,000 joint pieces at
# the shipped shape (both measured, and its rule set before the run: docs/models.md); resumable.
EN_FR_TATOEBA = dataclasses.replace(
    REAL_KDE_ALIGN,
    model_overrides=dict(
        d_model=192, d_ff=1536, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
        attention_dropout=0.0, activation_dropout=0.0,
    ),
    real_data=(*EN_FR_EVERYDAY_ONLY.real_data, "libreoffice", "handbook", "gnome", "apps", "kde", "ui", "tatoeba"),
    real_repeat=(("tatoeba", 2), ("everyday", 2)),
    vocab_size=12000,
    **TATOEBA_RUN,  # peak 0.4 * 192^-0.5 * 800^-0.5 = 1.0e-3 at step 800
)

# en-fr-tatoeba's run continued (init_from its last/) with four times the generated coreference sentences (a quarter
# of an epoch's pairs, as real-kde-align had), so that one encoder head takes the decision; its rule: docs/models.md.
EN_FR_TATOEBA_COREF = dataclasses.replace(
    continued_on_cpu(EN_FR_TATOEBA, "checkpoints/en-fr-tatoeba/last", lr_factor=0.08, time_limit_s=2700.0),
    corpus=dataclasses.replace(EN_FR_TATOEBA.corpus, n_examples=4 * EN_FR_TATOEBA.corpus.n_examples),
    average_every=300,  # peak 0.08 * 192^-0.5 * 400^-0.5 = 2.9e-4, the run's rate where it stopped
)

# en-fr-tatoeba-coref continued (init_from its final weights) with the generated coreference sentences at twice its
# share again (320,000: 39 % of an epoch's pairs), since its best head levelled off near 0.88; its rule: docs/models.md.
EN_FR_TATOEBA_COREF_2 = dataclasses.replace(
    EN_FR_TATOEBA_COREF,
    init_from="checkpoints/en-fr-tatoeba-coref",  # its final weights, copied beside the run's folder
    corpus=dataclasses.replace(EN_FR_TATOEBA.corpus, n_examples=8 * EN_FR_TATOEBA.corpus.n_examples),
    time_limit_s=2400.0,
)

# en-fr-tatoeba from nothing again, with the generated coreference sentences at the first stage's share (160,000: 24 %
# of an epoch, as real-kde-align read them) from its first step, so that one encoder head forms the decision as
# real-kde-align's did (1.000 by its step 3,000); resumable, its rule: docs/models.md.
EN_FR_TATOEBA_COREF_FIRST = dataclasses.replace(
    EN_FR_TATOEBA, corpus=dataclasses.replace(EN_FR_TATOEBA.corpus, n_examples=4 * EN_FR_TATOEBA.corpus.n_examples)
)

# en-fr (en-fr-tatoeba-coref-first's step 6,000) continued on the CPU: its corpora and mix, a fresh Adam peaking near
# where that run's schedule stood (0.4 * 192^-0.5 * 6000^-0.5 = 3.7e-4): 0.1 * 192^-0.5 * 400^-0.5 = 3.6e-4 at step 400,
# weights kept every 500 steps. Its run's own resume state stayed on the machine it ran on; its rule: docs/models.md.
EN_FR_TATOEBA_CONTINUED = dataclasses.replace(
    continued_on_cpu(EN_FR_TATOEBA_COREF_FIRST, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5400.0),
    average_every=500,
)

# en-zh-tatoeba (issue 61): every Chinese training corpus with Tatoeba's Chinese export three times an epoch and
# Wesnoth twice, from scratch at en-zh's shape with separate vocabularies learnt on all of it; resumable.
EN_ZH_TATOEBA = dataclasses.replace(
    EN_ZH,
    real_data=(*EN_ZH_GRAPHICS.real_data, "zh/tatoeba"),
    real_repeat=(("zh/tatoeba", 3), ("zh/everyday", 2)),
    **TATOEBA_RUN,  # peak 0.4 * 256^-0.5 * 800^-0.5 = 8.8e-4 at step 800
)


# en-zh-tatoeba's corpora and vocabularies, started from the shipped en-zh's weights moved onto them (revocab: a
# piece both vocabularies have keeps its row, a new one starts from the rows of the old pieces that spell it), so
# that a session's CPU adapts a model that already knows the manuals; peak 0.1 * 256^-0.5 * 200^-0.5 = 4.4e-4 at
# step 200, weights kept every 200 steps; its rule: docs/models.md.
EN_ZH_TATOEBA_REVOCAB = dataclasses.replace(
    continued_on_cpu(EN_ZH_TATOEBA, "checkpoints/en-zh", lr_factor=0.1, time_limit_s=4200.0),
    revocab=True,
    warmup_steps=200,
    average_every=200,
)

# en-zh's session 10 (en-zh-tatoeba-revocab's step 600, on its new vocabularies) continued from the shipped weights on
# the same corpora and mix, a fresh Adam peaking near where that run's rate stood past step 1,000
# (0.1 * 256^-0.5 * 1200^-0.5 = 1.8e-4): 0.04 * 256^-0.5 * 200^-0.5 = 1.8e-4 at step 200; its rule: docs/models.md.
EN_ZH_TATOEBA_CONTINUED = dataclasses.replace(
    continued_on_cpu(EN_ZH_TATOEBA, "checkpoints/en-zh", lr_factor=0.04, time_limit_s=4800.0),
    warmup_steps=200,
    average_every=200,
)


def on_a_gpu(base: TrainConfig) -> TrainConfig:
    """A preset as a lent GPU runs it (scripts/train_on_gpu.sh): the same corpora and model (the class's budget
    holds the shape), four times the tokens a step, no snapshot, at most 400 s of loop (the device's 10 minutes)."""
    return dataclasses.replace(
        base, batch_tokens=4 * base.batch_tokens, snapshot_steps=(), checkpoint_every=500, time_limit_s=400.0
    )


PRESETS: dict[str, TrainConfig] = {
    "coref": COREF,
    "en-zh": EN_ZH,
    "en-zh-more": EN_ZH_MORE,
    "en-zh-continued": EN_ZH_CONTINUED,
    "en-zh-cpu": EN_ZH_CPU,
    "en-zh-objects": EN_ZH_OBJECTS,
    "en-zh-low-lr": EN_ZH_LOW_LR,
    "en-zh-help": EN_ZH_HELP,
    "en-zh-docs": EN_ZH_DOCS,
    "en-zh-manuals": EN_ZH_MANUALS,
    "en-zh-tutorials": EN_ZH_TUTORIALS,
    "en-zh-tutorials-again": EN_ZH_TUTORIALS_AGAIN,
    "en-zh-reshuffled": EN_ZH_RESHUFFLED,
    "en-zh-office": EN_ZH_OFFICE,
    "en-zh-office-again": EN_ZH_OFFICE_AGAIN,
    "en-zh-kicad": EN_ZH_KICAD,
    "en-zh-graphics": EN_ZH_GRAPHICS,
    # checkpoints/coref-en-fr-encoder: one decoder layer and the alignment loss, so the encoder resolves "it"
    "coref-encoder": dataclasses.replace(
        COREF, model_overrides=dict(n_encoder_layers=3, n_decoder_layers=1), seed=1, align_pronoun=1.0
    ),
    "leak-masked": LEAK_MASKED,
    "leak-no-mask": dataclasses.replace(LEAK_MASKED, look_ahead_mask=False),
    "real-coref": REAL_COREF,
    "real-apps": REAL_APPS,
    "real-kde": REAL_KDE,
    "real-kde-align": REAL_KDE_ALIGN,
    "en-fr-scratch": EN_FR_SCRATCH,
    "en-fr": EN_FR,
    "en-fr-continued": EN_FR_CONTINUED,
    "en-fr-gpu": EN_FR_GPU,
    "en-fr-games": EN_FR_GAMES,
    "en-fr-objects": EN_FR_OBJECTS,
    "en-fr-dialogue": EN_FR_DIALOGUE,
    "en-fr-stories": EN_FR_STORIES,
    "en-fr-wide": EN_FR_WIDE,
    "en-fr-wider": EN_FR_WIDER,
    "en-fr-steady": EN_FR_STEADY,
    "en-fr-everyday-only": EN_FR_EVERYDAY_ONLY,
    "en-fr-tatoeba": EN_FR_TATOEBA,
    "en-fr-tatoeba-gpu": on_a_gpu(EN_FR_TATOEBA),
    "en-fr-tatoeba-coref": EN_FR_TATOEBA_COREF,
    "en-fr-tatoeba-coref-2": EN_FR_TATOEBA_COREF_2,
    "en-fr-tatoeba-coref-first": EN_FR_TATOEBA_COREF_FIRST,
    "en-fr-tatoeba-continued": EN_FR_TATOEBA_CONTINUED,
    # issue 61: en-zh from scratch with Tatoeba's Chinese export (see EN_ZH_TATOEBA)
    "en-zh-tatoeba": EN_ZH_TATOEBA,
    "en-zh-tatoeba-gpu": on_a_gpu(EN_ZH_TATOEBA),
    "en-zh-tatoeba-revocab": EN_ZH_TATOEBA_REVOCAB,
    "en-zh-tatoeba-continued": EN_ZH_TATOEBA_CONTINUED,
    # checkpoints/coref-variants: the coref recipe, 40 % of its sentences typed as students type them
    "coref-variants": dataclasses.replace(
        COREF, corpus=CorpusSpec(n_examples=60000, both_share=0.5, number_share=0.2, variant_share=0.4)
    ),
    # under a minute on two cores: a demo of training in class (tests shorten it further)
    "tiny": TrainConfig(
        model_preset="tiny",
        corpus=CorpusSpec(n_examples=6000, n_test=100),
        vocab_size=300,
        steps=2000,
        batch_tokens=1000,
        warmup_steps=100,
        lr_factor=2.0,
        snapshot_steps=(0, 10, 100, 300, 1000),
        checkpoint_every=50,
    ),
}


def shipped_folder(preset: str) -> str:
    """The checkpoints/ folder a preset's shipped checkpoint lives in: its own name, but for "coref"."""
    return "coref-en-fr" if preset == "coref" else preset
