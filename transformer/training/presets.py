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


COREF = TrainConfig(  # checkpoints/coref-en-fr (the default before real-coref)
    model_preset="small",
    model_overrides=dict(n_encoder_layers=3, n_decoder_layers=2),
    corpus=CorpusSpec(n_examples=60000, both_share=0.5, number_share=0.2),
    steps=2000,
    batch_tokens=3000,
    lr_factor=0.5,
    snapshot_steps=(0, 100, 300, 600, 1000, 1400),
)
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

REAL_COREF = TrainConfig(  # checkpoints/real-coref: real parallel text plus the coreference corpus
    model_preset="small",
    # the paper's dropout (§5.4: on sub-layer outputs and embedding sums only, none on attention weights or
    # inside the feed-forward, as in opus-mt)
    model_overrides=dict(
        d_model=192, d_ff=768, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
        attention_dropout=0.0, activation_dropout=0.0,
    ),
    # 32,000 generated sentences (40,000 last round, when the probe head reached 0.99 by step 3,000) leave
    # more of the hour to real text
    corpus=CorpusSpec(n_examples=32000, both_share=0.5, number_share=0.2, variant_share=0.4),
    # two manuals, GNOME's help and the interface strings of four image editors (transformer/corpus/data/)
    real_data=("libreoffice", "handbook", "gnome", "ui"),
    vocab_size=6000,
    # bfloat16 autocast and the paper's dropout: 0.74 s a step here (median) against 1.04 s for the float32
    # run with dropout everywhere, so the hour holds 4,500 steps, not 3,200
    steps=4500,
    batch_tokens=3000,
    # peak lr 0.35 * 192^-0.5 * 800^-0.5 = 8.9e-4 (an earlier run's 2.2e-3 at 3,000-token batches left the
    # decoder ignoring the source)
    lr_factor=0.35,
    warmup_steps=800,
    mixed_precision=True,
    snapshot_steps=(0, 1000, 3000),
    checkpoint_every=500,
)

# checkpoints/real-apps: real-coref's recipe on more real text (the help of 64 GNOME and MATE applications) and
# 40,000 generated sentences, for as many steps as the hour holds (5,471 on 2 cores: the loop ends at 58 minutes)
REAL_APPS = dataclasses.replace(
    REAL_COREF,
    corpus=CorpusSpec(n_examples=40000, both_share=0.5, number_share=0.2, variant_share=0.4),
    real_data=("libreoffice", "handbook", "gnome", "apps", "ui"),
    steps=6200,
    time_limit_s=3480.0,
)

# checkpoints/real-kde: real-apps' recipe with the handbooks of 110 KDE packages added (kde.tsv.gz: 15,216
# training pairs, 249k English words), the same 40,000 generated sentences and the same time limit
REAL_KDE = dataclasses.replace(REAL_APPS, real_data=("libreoffice", "handbook", "gnome", "apps", "kde", "ui"))
# real-kde with coref-encoder's alignment loss (the cross-attention rows writing il/elle and the connective pulled
# onto their English words, Garg et al. 2019), so that the encoder is where "it" is resolved
REAL_KDE_ALIGN = dataclasses.replace(REAL_KDE, align_pronoun=1.0)

# checkpoints/en-fr: real-kde-align continued (its weights and tokenizer, init_from) on everyday text (Wesnoth's
# dialogue and narration, GCompris's instructions: everyday.tsv.gz, three times an epoch; FreeDict's word pairs:
# everyday_words.tsv.gz) beside the same manuals, interface strings and coreference corpus (typed variants
# included), with the same alignment loss. Sized for a fast GPU: 20,000-token batches (6.7 times real-kde-align's),
# at most 6,000 steps or 240 s of loop, two float16 snapshots. Resumable from its last/ (every 500 steps).
EN_FR = dataclasses.replace(
    REAL_KDE_ALIGN,
    init_from="checkpoints/real-kde-align",
    real_data=("libreoffice", "handbook", "gnome", "apps", "kde", "ui", "everyday", "everyday_words"),
    real_repeat=(("everyday", 3),),
    steps=6000,
    batch_tokens=20000,
    # a new warm-up from the trained weights: peak 0.3 * 192^-0.5 * 400^-0.5 = 1.1e-3 at step 400, 2.8e-4 by 6,000
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


# en-fr's second session, on a CPU (no GPU was lent that day): en-fr's weights continued (init_from) on the same
# corpora and mix, in 8,000-token batches (2.5 times fewer tokens a step than the GPU's, so more updates per token on
# two cores); a fresh optimizer with a short, low warm-up that joins the lr where en-fr's run stopped (2.8-3.5e-4):
# peak 0.1 * 192^-0.5 * 400^-0.5 = 3.6e-4 at step 400, 1.3e-4 by 3,000. At most 90 minutes of loop; resumable
# from last/ (every 100 steps: a stop costs at most a few minutes). It replaces checkpoints/en-fr only if it scores
# the better chrF on the everyday dev campaign (docs/models.md).
EN_FR_CONTINUED = continued_on_cpu(EN_FR, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5400.0)

# checkpoints/en-fr-scratch: the candidate against en-fr's continued training, measured in the same GPU run: the
# same corpora and weights, from scratch, with a vocabulary of 8,000 pieces learnt on them (everyday words
# included) and a wider, deeper model (d_model 256, 4 + 4 layers, 9.4 M parameters). The default is whichever
# scores the better chrF on the everyday dev campaign (docs/models.md). Trained beside en-fr-gpu on 4 December
# (3,389 steps in 300 s): everyday dev chrF 42.38 against en-fr-gpu's 45.94, not kept.
EN_FR_SCRATCH = dataclasses.replace(
    EN_FR,
    init_from=None,
    model_overrides=dict(
        d_model=256, d_ff=1024, n_heads=4, n_encoder_layers=4, n_decoder_layers=4,
        attention_dropout=0.0, activation_dropout=0.0,
    ),
    vocab_size=8000,
    steps=8000,
    # peak lr 0.7 * 256^-0.5 * 1000^-0.5 = 1.4e-3 at step 1,000
    lr_factor=0.7,
    warmup_steps=1000,
    snapshot_steps=(),  # none: the GPU machine brings back 64 MiB a call, and en-fr and en-zh come first
    time_limit_s=300.0,  # as long as en-fr-gpu's, beside which it runs
)

# checkpoints/en-zh: English → 简体中文 from scratch (issue 34) on the committed Chinese corpora (transformer/corpus/
# data/zh/: LibreOffice help by page, Wesnoth's dialogue by campaign, the latter twice an epoch), no generated
# sentences; separate source and target vocabularies (8,000 + 8,000 pieces, the Chinese one at character coverage
# 0.9995). d_model 256, 4 heads, 3 + 3 layers, d_ff 1024. Sized for a fast GPU: 20,000-token batches, at most 8,000
# steps or 240 s of loop, one float16 snapshot at step 1,000; resumable from last/ (every 500 steps).
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
    # peak lr 1.0 * 256^-0.5 * 1000^-0.5 = 2.0e-3 at step 1,000, 7.0e-4 by 8,000
    lr_factor=1.0,
    warmup_steps=1000,
    mixed_precision=True,
    snapshot_steps=(1000,),
    snapshot_dtype="float16",
    checkpoint_every=500,
    time_limit_s=240.0,  # the device tool runs a command for at most 10 minutes: data, training, scoring, packing
)

# en-fr's third session, on the device tool's GPU (about 5 minutes of loop, beside three other presets): en-fr's
# weights continued (init_from) in the GPU's 20,000-token batches, the everyday text four times an epoch (three
# before: the goal it misses is the everyday one; the manual goals have 9 and 5 points to spare); a fresh optimizer
# whose short warm-up joins the lr where the CPU session stopped: peak 0.15 * 192^-0.5 * 400^-0.5 = 5.4e-4 at step
# 400, 1.9e-4 by 3,000. Resumable from last/ (every 500 steps). It replaces checkpoints/en-fr only if it scores the
# better chrF on the everyday dev campaign: it did (45.94 against 45.65, 3,922 steps), checkpoints/en-fr's session 3.
EN_FR_GPU = dataclasses.replace(
    EN_FR_CONTINUED,
    real_repeat=(("everyday", 4),),
    batch_tokens=20000,
    lr_factor=0.15,
    checkpoint_every=500,
    time_limit_s=300.0,
)

# en-zh's weights and vocabularies continued (init_from) on en-zh-more's corpora (the three measured after it:
# GNOME's help, the GNOME / MATE applications' help, the interface strings), on the GPU beside en-zh-more from
# scratch; a warm-up to en-zh's lr where its run stopped: peak 0.3 * 256^-0.5 * 400^-0.5 = 9.4e-4 at step 400.
# The one of the two with the better BLEU on the dev pages (scripts/evaluate_zh.py --dev) is kept: en-zh-more (17.82
# against 16.80 for this one; the first en-zh 15.81).
EN_ZH_MORE = dataclasses.replace(
    EN_ZH, real_data=(*EN_ZH.real_data, "zh/gnome", "zh/apps", "zh/ui"), snapshot_steps=(), time_limit_s=300.0
)
EN_ZH_CONTINUED = dataclasses.replace(EN_ZH_MORE, init_from="checkpoints/en-zh", lr_factor=0.3, warmup_steps=400)

# en-zh's (en-zh-more's) weights continued on the 2-core CPU (no GPU time was left that evening): the same five
# corpora, 8,000-token batches, a fresh Adam whose warm-up peaks below where the GPU run stopped (1.0e-3):
# 0.2 * 256^-0.5 * 400^-0.5 = 6.3e-4 at step 400, 3.1e-4 by 1,600. At most 40 minutes of loop; resumable from
# last/ (every 100 steps). It replaces checkpoints/en-zh only if it scores the better BLEU on the dev pages: run on
# 4 December (809 steps in its 40 minutes, beside the test suite), dev BLEU 17.75 against 17.82, not kept.
EN_ZH_CPU = continued_on_cpu(EN_ZH_MORE, "checkpoints/en-zh", lr_factor=0.2, time_limit_s=2400.0)

# en-fr's fourth session, on the CPU (no GPU lent that day): en-fr's weights continued (init_from) with four more
# games' French catalogues (games.tsv.gz: FreedroidRPG's dialogue, Widelands, Freeciv, Warzone 2100, twice an epoch;
# the run read its first build, commit 0bbe05e: 24,497 training pairs, before ten Freeciv labels whose qualifier holds
# a parenthesis were cut right, 24,507 since) beside everything en-fr-gpu read (the everyday text four times an
# epoch). A fresh optimizer: peak 0.15 * 192^-0.5 * 400^-0.5 = 5.4e-4 at step 400. At most 75 minutes of loop;
# resumable from last/ (every 100 steps). Set before the run: it replaces checkpoints/en-fr only if it scores the
# better chrF on both everyday dev sets together (Wesnoth's The Sceptre of Fire with GCompris's, and Widelands'
# scenario_atl01: 623 sentences; scripts/evaluate_everyday.py --splits dev --games; en-fr: 45.09) and still meets the
# manuals' goals. It did (48.60, 4,127 steps in 75 minutes on 4 December): checkpoints/en-fr's session 4.
EN_FR_GAMES = dataclasses.replace(
    continued_on_cpu(EN_FR, "checkpoints/en-fr", lr_factor=0.15, time_limit_s=4500.0),
    real_data=(*EN_FR.real_data, "games"),
    real_repeat=(("everyday", 4), ("games", 2)),
)

# en-fr's fifth session, on the CPU (no GPU lent that day): en-fr's weights continued (init_from) with the household
# words the games lack (objects.tsv.gz: Cataclysm: Dark Days Ahead's items, food, furniture and talk, gbrainy's
# puzzles, Tux Paint's stamp descriptions; 11,971 training pairs, twice an epoch) beside everything en-fr-games read.
# A fresh optimizer: peak 0.15 * 192^-0.5 * 400^-0.5 = 5.4e-4 at step 400. At most 75 minutes of loop; resumable from
# last/ (every 100 steps). Set before the run: it replaces checkpoints/en-fr only if it scores the better chrF on
# both everyday dev sets together (scripts/evaluate_everyday.py --splits dev --games; en-fr: 48.60) and still meets
# the manuals' goals. It did, narrowly (48.75, 4,577 steps in 75 minutes on 4-5 December; the everyday test
# campaigns 47.97 against 47.94): checkpoints/en-fr's session 5.
EN_FR_OBJECTS = dataclasses.replace(
    EN_FR_GAMES,
    real_data=(*EN_FR_GAMES.real_data, "objects"),
    real_repeat=(*EN_FR_GAMES.real_repeat, ("objects", 2)),
)

# en-fr's sixth session, on the CPU (no GPU lent): en-fr's (sessions 4 and 5 averaged) weights continued (init_from)
# with three more games' talk (dialogue.tsv.gz, built 6 December: Dink Smallwood's whole story in FreeDink, Hedgewars'
# missions, FreeCol's messages and Colonopedia; 6,519 training pairs, three times an epoch, as the everyday text was
# at first) beside everything en-fr-objects read. A fresh Adam at a lower peak than sessions 4 and 5, so as not to
# undo the average (en-zh lost its average's gain at a re-warmed 6.3e-4): 0.1 * 192^-0.5 * 400^-0.5 = 3.6e-4 at step
# 400, 1.3e-4 by 3,000; the trainer keeps the weights every 300 steps and averages its last five (averaged/). At
# most 90 minutes of loop; resumable from last/ (every 100 steps). Set before the run (6 December), its three
# candidates: the final weights, averaged/, and averaged/ averaged with the shipped weights (python -m transformer
# average). The best of them on both everyday dev sets together (scripts/evaluate_everyday.py --splits dev --games:
# 623 sentences) replaces checkpoints/en-fr only above the shipped weights' 49.04 (re-measured before the run) and
# if it still meets the manuals' goals (held-out pages chrF >= 58, GIMP >= 45 greedy). Run on 6 December (3,829
# steps in its 90 minutes): final 49.61, averaged/ 50.18, averaged/ with the shipped weights 49.51: averaged/ kept,
# checkpoints/en-fr's session 6 (held-out pages 68.90, GIMP 51.99 greedy, measured afterwards).
EN_FR_DIALOGUE = dataclasses.replace(
    continued_on_cpu(EN_FR_OBJECTS, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5400.0),
    real_data=(*EN_FR_OBJECTS.real_data, "dialogue"),
    real_repeat=(*EN_FR_OBJECTS.real_repeat, ("dialogue", 3)),
    average_every=300,
)

# en-fr's seventh session, on the CPU (no GPU lent): en-fr's (session 6's) weights continued with stories, children's
# words and four more games (stories.tsv.gz, built 6 December: Adonthell's Waste's Edge, a role-playing game's whole
# story in its characters' talk, the register nearest the held-out Wesnoth campaigns; Tux Paint's and eduActiv8's words
# to a child; UFO: Alien Invasion's, Seven Kingdoms', LordsAWar's and Plee the Bear's catalogues; 8,798 training
# pairs, three times an epoch, as the dialogue) beside everything en-fr-dialogue read. The same fresh Adam as session
# 6 (peak 3.6e-4 at step 400), averaged/ every 300 steps; at most 95 minutes of loop, resumable from last/. Set
# before the run (6 December), its three candidates: the final weights, averaged/, and averaged/ averaged with the
# shipped weights. The best of them on both everyday dev sets together (scripts/evaluate_everyday.py --splits dev
# --games: 623 sentences) replaces checkpoints/en-fr only above the shipped weights' 50.22 (measured on them as
# stored) and if it still meets the manuals' goals (held-out pages chrF >= 58, GIMP >= 45 greedy). Run on 6 December
# (4,315 steps in its 95 minutes): final 50.69, averaged/ 50.42, averaged/ with the shipped weights 50.52: the final
# weights kept, checkpoints/en-fr's session 7 (held-out pages 68.94, GIMP 51.71 greedy, measured afterwards).
EN_FR_STORIES = dataclasses.replace(
    continued_on_cpu(EN_FR_DIALOGUE, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5700.0),
    real_data=(*EN_FR_DIALOGUE.real_data, "stories"),
    real_repeat=(*EN_FR_DIALOGUE.real_repeat, ("stories", 3)),
)

# en-fr's eighth session, on the CPU (no GPU lent): the same corpora and mix as en-fr-stories, with a wider model. The
# data had stopped moving the test campaigns (session 7: +0.04 greedy) and the card says a larger model is what is
# left; a new vocabulary or more layers would undo what the weights know, so the feed-forward layers grow instead,
# 768 -> 1,536 units (4.27 M -> 6.04 M parameters), the new units' output weights zero: the run starts from exactly
# what session 7 computes (grow.py; the grown model's logits equal the old one's) and a step costs about 10 % more
# (measured on two cores, 6 December: 0.71 s against 0.64-0.69 s for a 4,000-token batch). The same fresh Adam as
# sessions 6 and 7 (peak 3.6e-4 at step 400), averaged/ every 300 steps; at most 90 minutes of loop, resumable from
# last/. Set before the run (6 December), its two candidates: the final weights and averaged/ (the shipped weights
# cannot join an average: their d_ff differs). The better of them on both everyday dev sets together
# (scripts/evaluate_everyday.py --splits dev --games: 623 sentences) replaces checkpoints/en-fr only above the
# shipped weights' 50.70 (measured on them as stored) and if it still meets the manuals' goals (held-out pages chrF
# >= 58, GIMP >= 45 greedy) and the class of 30's (median <= 0.5 s, max <= 1 s). Run on 6 December (3,863 steps in
# its 90 minutes): final 51.08, averaged/ 51.16: averaged/ kept, checkpoints/en-fr's session 8 (held-out pages 69.12,
# GIMP 52.15 greedy, a class of 30 at medians 0.30-0.32 s, measured afterwards).
EN_FR_WIDE = dataclasses.replace(
    continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.1, time_limit_s=5400.0),
    grow_d_ff=1536,
)

# en-fr's ninth session, on the CPU (no GPU lent): session 8's growth again, 1,536 -> 3,072 units (6.04 M -> 9.59 M
# parameters), on the same corpora and mix. Growth is what moved the test campaigns last (session 7, new text: +0.04
# greedy; session 8, twice the units: +0.8, p = 0.001), and the card names the missing words (a class's "sofa",
# "coffee", "kitchen") as what the model lacks: knowledge the feed-forward layers hold. The grown model starts from
# exactly what session 8 computes. This machine is slower than session 8's (a 2-core AMD EPYC with AVX512-BF16,
# measured 6 December on an 8,000-token batch: 2.3 s a step at 3,072 units, 1.84 s at 1,536, float32 4.1-4.9 s), so
# about 2,300 steps in 90 minutes, where session 8's re-warmed Adam (peak 3.6e-4, 3x the 1.2e-4 it had ended at) was
# still below its start at step 1,100: here a fresh Adam peaks where session 8 ended, 0.035 * 192^-0.5 * 400^-0.5 =
# 1.26e-4 at step 400. averaged/ every 300 steps; at most 90 minutes of loop, resumable from last/. Set before the
# run (6 December), its two candidates: the final weights and averaged/. The better of them on both everyday dev
# sets together (scripts/evaluate_everyday.py --splits dev --games: 623 sentences) replaces checkpoints/en-fr only
# above the shipped weights' 51.18 (measured on them as stored) and if it still meets the manuals' goals (held-out
# pages chrF >= 58, GIMP >= 45 greedy) and the class of 30's (median <= 0.5 s, max <= 1 s). Run on 6 December
# (1,914 steps in its 90 minutes): final 50.91, averaged/ 51.04, both below 51.18 (measured again on this machine
# before deciding: 51.18): not kept (averaged/ on the test campaigns, measured afterwards: 50.31 against 50.52).
# Two 300-step probes afterwards without growth (lr factors 0.035 and 0.01: 51.29 and 51.15) lost nothing, so the
# lower peak was not what this run needed: the new units are the likelier cost (checkpoints/en-fr/README.md).
EN_FR_WIDER = dataclasses.replace(
    continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.035, time_limit_s=5400.0),
    grow_d_ff=3072,
)

# en-fr's tenth session, on the CPU (no GPU lent): session 8's weights continued at their own size (no growth) on the
# same corpora and mix. Session 9's growth lost ground (final 50.91, averaged/ 51.04 against 51.18), while a
# 300-step probe from the shipped weights at this peak gained (51.29), so this run is that probe, long: a fresh Adam
# peaking where session 8 ended, 0.035 * 192^-0.5 * 400^-0.5 = 1.26e-4 at step 400, averaged/ every 300 steps; at
# most 85 minutes of loop (about 2,700 steps at the 1.84 s a step measured on this 2-core AMD EPYC), resumable from
# last/. Set before the run (6 December), its three candidates: the final weights, averaged/, and the mean of
# averaged/ and the shipped weights (``python3 -m transformer average``: same size and vocabulary this time). The
# best of them on both everyday dev sets together (scripts/evaluate_everyday.py --splits dev --games: 623
# sentences) replaces checkpoints/en-fr only above the shipped weights' 51.18 and if it still meets the manuals'
# goals (held-out pages chrF >= 58, GIMP >= 45 greedy) and the class of 30's (median <= 0.5 s, max <= 1 s). Run on
# 6 December (2,842 steps in its 85 minutes): final 50.61, averaged/ 51.10, averaged/ with the shipped weights 51.08,
# all below 51.18: not kept (last/ along the way: 51.20 at step 1,100, 50.39 at 2,000; averaged/ on the test
# campaigns, measured afterwards: 50.32 against 50.52). At this size, on this text, more steps no longer help.
EN_FR_STEADY = continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.035, time_limit_s=5100.0)

# en-fr's eleventh session, on the CPU (no GPU lent): session 8's weights continued at their own size on the everyday
# text alone. Sessions 9 and 10 (more units, more steps on the same mix) and a probe weighting every everyday corpus
# twice (51.12 at step 1,100 against 51.20) did not move the everyday dev sets; what none tried is leaving the manuals
# out. They are 28 % of an epoch's pairs (98,962 of 356,657), and their senses show in everyday output ("My father
# works in a hospital." -> "Mon père fonctionne...", the sense of a program that works), while their goals hold with
# room to spare (held-out pages 69.1 against 58, GIMP 52.2 against 45). So: the everyday corpora with the same repeats,
# FreeDict's words and the coreference corpus (typed variants, the alignment loss) as before, no manual page, help
# page or interface string. A fresh Adam at session 10's lr factor 0.035 (peak 1.26e-4 at step 400), averaged/
# every 300 steps; at most 80 minutes of loop, resumable from last/. Set before the run (6 December, evening), its
# three candidates: the final weights, averaged/, and the mean of averaged/ and the shipped weights (``python3 -m
# transformer average``: a domain-adapted model and the general one, halfway). The best of them on both everyday
# dev sets together (scripts/evaluate_everyday.py --splits dev --games: 623 sentences) replaces checkpoints/en-fr
# only above the shipped weights' 51.18 and if it still meets the manuals' goals (held-out pages chrF >= 58, GIMP
# >= 45 greedy) and the class of 30's (median <= 0.5 s, max <= 1 s). The typed sentences
# (transformer/corpus/typed.py) are a test set: no candidate is chosen by them. Run on 6 December (2,519 steps in its
# 80 minutes): final 50.40, averaged/ 51.10, averaged/ with the shipped weights 51.35, above 51.18 (last/ along the
# way: 51.14 at step 1,100); held-out pages 67.09, GIMP 51.02 greedy; a class of 30 at medians 0.36-0.66 s in ten
# runs against the shipped weights' 0.40-0.54 s in seven on this noisy 2-core machine, the same size writing the
# same 496 pieces for the bench's 30 sentences: the mean kept, checkpoints/en-fr's session 11 (the ninth kept;
# the card says what moved and what did not).
EN_FR_EVERYDAY_ONLY = dataclasses.replace(
    continued_on_cpu(EN_FR_STORIES, "checkpoints/en-fr", lr_factor=0.035, time_limit_s=4800.0),
    real_data=tuple(n for n in EN_FR_STORIES.real_data if n not in REAL_KDE.real_data),
)

# en-zh's (en-zh-more's) weights continued on the 2-core CPU (no GPU lent), with the everyday Chinese text built for
# it (zh/objects: Cataclysm: Dark Days Ahead's zh_CN items, places and NPC talk, gbrainy's puzzles, Tux Paint's stamp
# descriptions; 52,294 training pairs, once an epoch) beside en-zh-more's five corpora (Wesnoth's dialogue still twice
# an epoch). A fresh Adam: peak 0.2 * 256^-0.5 * 400^-0.5 = 6.3e-4 at step 400. At most 70 minutes of loop;
# resumable from last/ (every 100 steps). Set before the run: it replaces checkpoints/en-zh only if it scores the
# better BLEU on the 1,031 dev sentences of the Chinese corpora (scripts/evaluate_zh.py --dev; en-zh: 17.82) and
# its held-out pages keep BLEU >= 25 and chrF >= 30. Three candidates, the best on those dev sentences taken (set
# while it ran, before any was scored): its final weights; the average of its last five checkpoints, copied from
# last/ every 10 minutes (python -m transformer average; the paper's §6.1); the average of its final weights and
# en-zh's.
EN_ZH_OBJECTS = dataclasses.replace(
    continued_on_cpu(EN_ZH_MORE, "checkpoints/en-zh", lr_factor=0.2, time_limit_s=4200.0),
    real_data=(*EN_ZH_MORE.real_data, "zh/objects"),
)

# en-zh's third session, on the CPU (no GPU lent that day): en-zh's (session 2's averaged) weights continued on
# en-zh-objects' six corpora at half its lr, because the third session tried at 0.2 (4 December) re-warmed Adam to
# 6.3e-4 and lost the average's gain: peak 0.1 * 256^-0.5 * 400^-0.5 = 3.1e-4 at step 400 (session 2 ended at
# 2.5e-4), 1.1e-4 by 3,000. The trainer keeps the weights every 300 steps and averages its last five (averaged/).
# At most 80 minutes of loop; resumable from last/ (every 100 steps). Set before the run: its final weights and
# its averaged/ are the two candidates; the better on the dev pages (scripts/evaluate_zh.py --dev) replaces
# checkpoints/en-zh only if it beats the shipped weights there, all read with the same decoding (the shipped 20.15
# became 22.77 once decoding wrote the full-width punctuation back, before any candidate was scored). Run on 5
# December (2,496 steps in its 80 minutes): dev BLEU 21.98 final, 21.99 averaged, both below 22.77: not kept (its
# averaged/ averaged again with the shipped weights, tried afterwards and outside the rule: 22.47).
EN_ZH_LOW_LR = dataclasses.replace(
    continued_on_cpu(EN_ZH_OBJECTS, "checkpoints/en-zh", lr_factor=0.1, time_limit_s=4800.0),
    average_every=300,
)

# en-zh-low-lr lost on the dev pages of LibreOffice (35.98 → 34.40) and kept the everyday ones (14.65 → 14.50):
# the household text and the interface strings fill half its batches. The same continuation with the help corpora
# (LibreOffice, GNOME, applications) twice an epoch beside Wesnoth's, 30 minutes, averaging its last five 200-step
# weights; the same rule (the better of final and averaged/ replaces checkpoints/en-zh only above 22.77 on dev).
# Run on 5 December (919 steps in 30 minutes): dev BLEU 22.37 final, 22.65 averaged (LibreOffice 35.89, everyday
# 14.47): closer, not kept.
EN_ZH_HELP = dataclasses.replace(
    EN_ZH_LOW_LR,
    real_repeat=(("zh/everyday", 2), ("zh/libreoffice", 2), ("zh/gnome", 2), ("zh/apps", 2)),
    time_limit_s=1800.0,
    average_every=200,
)

# en-zh-help came within 0.12 of the shipped weights in 30 minutes, its Adam re-warmed to 3.1e-4. The same mix with
# Debian's own documentation added (zh/docs: The Debian Administrator's Handbook and Debian Reference, 6,723
# training pairs of manual text, built 5 December), twice an epoch as the other help corpora, at half en-zh-help's
# lr (factor 0.05: peak 1.6e-4 at step 400, 0.6e-4 by 3,000: a fine-tuning of the averaged weights rather than a
# new descent), for 90 minutes, averaging its last five 300-step weights. Set before the run (5 December): the
# better of its final weights and averaged/ on the dev sentences of the four corpora the earlier runs were chosen
# on (scripts/evaluate_zh.py --dev, zh/docs' dev pages not among them, so the bar stays comparable) replaces
# checkpoints/en-zh only above the shipped 22.77. Run on 5 December (3,389 steps in its 90 minutes): dev BLEU 22.38
# final, 22.42 averaged: not kept (every held-out test set rose, measured afterwards: checkpoints/en-zh/README.md).
EN_ZH_DOCS = dataclasses.replace(
    EN_ZH_HELP,
    real_data=(*EN_ZH_HELP.real_data, "zh/docs"),
    real_repeat=(*EN_ZH_HELP.real_repeat, ("zh/docs", 2)),
    lr_factor=0.05,
    time_limit_s=5400.0,
    average_every=300,
)

# en-zh-docs' mix with Debian's documentation (zh/docs) and Debian's guides (zh/guides: the Installation Guide, the New
# Maintainers' Guide, the FAQ, the Edu manual; 4,283 training pairs) three times an epoch each, the same lr (factor
# 0.05), 80 minutes, averaging its last five 300-step weights, from the shipped weights. Set before the run (5
# December, 10:40; a first start without zh/guides was stopped at step 270, nothing scored): the best of three
# candidates, its final weights, its averaged/ and averaged/ averaged with the shipped weights (python -m
# transformer average; the third added at 10:55, while it ran, before any was scored), replaces checkpoints/en-zh
# only if its BLEU on the pooled dev pages of every Chinese corpus with dev pages that it trains on
# (scripts/evaluate_zh.py --dev --dev-corpora zh/libreoffice,zh/everyday,zh/gnome,zh/apps,zh/docs,zh/guides: 1,269
# sentences) is above the shipped weights' on the same pages (20.42, measured before the run), and its held-out
# pages keep BLEU >= 25, chrF >= 30. Why that bar: the documentation's and the guides' dev pages are the manual
# register the GIMP test reads, left out of the earlier bar only to keep runs comparable. Written knowing that
# en-zh-docs lost on the earlier bar while every test set rose.
EN_ZH_MANUALS = dataclasses.replace(
    EN_ZH_DOCS,
    real_data=(*EN_ZH_DOCS.real_data, "zh/guides"),
    real_repeat=(*EN_ZH_HELP.real_repeat, ("zh/docs", 3), ("zh/guides", 3)),
    time_limit_s=4800.0,
)

# en-zh-manuals' mix with Inkscape's nine tutorials (zh/tutorials: 917 training pairs of graphics-editing prose, the
# GIMP manual's subject, built 5 December) five times an epoch, from the shipped weights (en-zh's third session), the
# same lr (factor 0.05), 80 minutes, averaging its last five 300-step weights. Set before the run (5 December, 13:13)
# with en-zh-manuals' rule unchanged: the best of three candidates, its final weights, its averaged/ and averaged/
# averaged with the shipped weights, replaces checkpoints/en-zh only if its BLEU on the pooled dev pages of the six
# Chinese corpora with dev pages (scripts/evaluate_zh.py --dev: 1,269 sentences) is above the shipped weights' on the
# same pages (21.44, measured before the run on their float16 weights), and its held-out pages keep BLEU >= 25,
# chrF >= 30. The tutorials have no dev pages; the GIMP manual, which they are meant to help, is measured only after
# the rule has decided. Run on 5 December, 13:13-14:34 (2,901 steps in its 80 minutes): dev BLEU 22.31 final, 22.06
# averaged/, 21.76 averaged/ with the shipped weights: the final weights kept as en-zh's fourth session.
EN_ZH_TUTORIALS = dataclasses.replace(
    EN_ZH_MANUALS,
    real_data=(*EN_ZH_MANUALS.real_data, "zh/tutorials"),
    real_repeat=(*EN_ZH_MANUALS.real_repeat, ("zh/tutorials", 5)),
)

# en-zh-tutorials again (the same mix, lr factor 0.05, 80 minutes), from the shipped weights (en-zh's fourth
# session): en-zh's fifth session. Set before the run (5 December, 15:28) with the same rule: the best of three
# candidates, its final weights, its averaged/ and averaged/ averaged with the shipped weights, replaces
# checkpoints/en-zh only if its BLEU on the pooled dev pages of the six Chinese corpora with dev pages
# (scripts/evaluate_zh.py --dev: 1,269 sentences) is above the shipped weights' on the same pages (22.31, measured
# before the run on their float16 weights), and its held-out pages keep BLEU >= 25, chrF >= 30. GIMP is measured only
# after the rule has decided. Run on 5 December, 15:28-16:49 (2,429 steps in its 80 minutes, on a slower machine): dev
# BLEU 22.33 final, 22.46 averaged/, 22.31 averaged/ with the shipped weights: averaged/ kept as en-zh's fifth
# session (22.47 as stored in float16).
EN_ZH_TUTORIALS_AGAIN = EN_ZH_TUTORIALS

# en-zh-tutorials' mix in a new order (seed 6: the two sessions before read the same batches in the same order), the
# same lr (factor 0.05), 95 minutes, averaging its last five 300-step weights, from the shipped weights (en-zh's fifth
# session). Set before the run (5 December, 18:09) with the same rule: the best of three candidates, its final
# weights, its averaged/ and averaged/ averaged with the shipped weights, replaces checkpoints/en-zh only if its BLEU
# on the pooled dev pages of the six Chinese corpora with dev pages (scripts/evaluate_zh.py --dev: 1,269 sentences)
# is above the shipped weights' on the same pages (22.47, measured before the run on their float16 weights), and its
# held-out pages keep BLEU >= 25, chrF >= 30. GIMP is measured only after the rule has decided. Started 18:09,
# stopped by hand at step 515 (18:29, nothing scored) to give the CPU to en-zh-office instead, once the two corpora
# below were built.
EN_ZH_RESHUFFLED = dataclasses.replace(EN_ZH_TUTORIALS, seed=6, time_limit_s=5700.0)

# en-zh-reshuffled's mix (seed 6) with the two corpora built on 5 December, evening: LibreOffice's own zh_CN interface
# (zh/office_ui, 9,774 pairs: the terms of the LibreOffice help the dev pages read) once an epoch and the Debian Edu
# ITIL manual (zh/itil, 2,131 pairs of manual prose) three times, as the documentation and the guides; the same lr
# (factor 0.05), 80 minutes, averaging its last five 300-step weights, from the shipped weights (en-zh's fifth
# session). Set before the run (5 December, 18:30) with the same rule: the best of three candidates, its final
# weights, its averaged/ and averaged/ averaged with the shipped weights, replaces checkpoints/en-zh only if its BLEU
# on the pooled dev pages of the six Chinese corpora with dev pages (scripts/evaluate_zh.py --dev: 1,269 sentences;
# the two new files have none) is above the shipped weights' on the same pages (22.47, measured before the run on
# their float16 weights), and its held-out pages keep BLEU >= 25, chrF >= 30. GIMP is measured only after the rule
# has decided. Run on 5 December, 18:29-19:50 (2,401 steps in its 80 minutes): dev BLEU 22.73 final, 22.63 averaged/,
# 22.57 averaged/ with the shipped weights: the final weights kept as en-zh's sixth session (22.72 as stored).
EN_ZH_OFFICE = dataclasses.replace(
    EN_ZH_RESHUFFLED,
    real_data=(*EN_ZH_TUTORIALS.real_data, "zh/office_ui", "zh/itil"),
    real_repeat=(*EN_ZH_TUTORIALS.real_repeat, ("zh/itil", 3)),
    time_limit_s=4800.0,
)

# en-zh-office's mix in a new order (seed 7), the same lr (factor 0.05), 90 minutes, averaging its last five 300-step
# weights, from the shipped weights (en-zh's sixth session): en-zh's seventh session if its rule keeps it. Set before
# the run (5 December, 20:57; no GPU lent) with the same rule: the best of three candidates, its final weights, its
# averaged/ and averaged/ averaged with the shipped weights, replaces checkpoints/en-zh only if its BLEU on the pooled
# dev pages of the six Chinese corpora with dev pages (scripts/evaluate_zh.py --dev: 1,269 sentences) is above the
# shipped weights' on the same pages (22.72, measured at 20:56 on their float16 weights), and its held-out pages keep
# BLEU >= 25, chrF >= 30. GIMP is measured only after the rule has decided. Run on 5 December, 20:58-22:28 (2,458
# steps in its 90 minutes): dev BLEU 22.63 final, 22.86 averaged/, 22.54 averaged/ with the shipped weights:
# averaged/ kept as en-zh's seventh session (22.87 as stored).
EN_ZH_OFFICE_AGAIN = dataclasses.replace(EN_ZH_OFFICE, seed=7, time_limit_s=5400.0)

# en-zh-office-again's mix with KiCad 6's manuals (zh/kicad, 1,730 pairs built on 5 December, night: manual prose
# about a design program's tools, panels and dialogs, the GIMP manual's register) five times an epoch, as Inkscape's
# tutorials, in a new order (seed 8), the same lr (factor 0.05), 90 minutes, averaging its last five 300-step
# weights, from the shipped weights (en-zh's seventh session): en-zh's eighth session if its rule keeps it. Set before
# the run (5 December, 23:27; no GPU lent) with the same rule: the best of three candidates, its final weights, its
# averaged/ and averaged/ averaged with the shipped weights, replaces checkpoints/en-zh only if its BLEU on the pooled
# dev pages of the six Chinese corpora with dev pages (scripts/evaluate_zh.py --dev: 1,269 sentences; zh/kicad has
# none) is above the shipped weights' on the same pages (22.87, measured at 23:25 on their float16 weights), and its
# held-out pages keep BLEU >= 25, chrF >= 30. GIMP is measured only after the rule has decided. Run on 5-6 December,
# 23:28-00:59 (2,549 steps in its 90 minutes): dev BLEU 23.10 final, 22.95 averaged/, 22.91 averaged/ with the
# shipped weights: the final weights kept as en-zh's eighth session (23.08 as stored).
EN_ZH_KICAD = dataclasses.replace(
    EN_ZH_OFFICE_AGAIN,
    real_data=(*EN_ZH_OFFICE.real_data, "zh/kicad"),
    real_repeat=(*EN_ZH_OFFICE.real_repeat, ("zh/kicad", 5)),
    seed=8,
)

# en-zh-kicad's mix with the interfaces of graphics programs other than GIMP (zh/graphics, 21,669 pairs built on 6
# December: Blender, RawTherapee, Dia, Hugin, Synfig Studio and four more; tooltips and messages about layers,
# curves, brushes, exposure, the GIMP manual's subject) once an epoch, as zh/office_ui, in a new order (seed 9), the
# same lr (factor 0.05), averaging its last five 300-step weights, from the shipped weights (en-zh's eighth session):
# en-zh's ninth session if its rule keeps it; 90 minutes. Set before the run (6 December, 02:18; no GPU lent) with
# the same rule: the best of three candidates, its final weights, its averaged/ and averaged/ averaged with the
# shipped weights, replaces checkpoints/en-zh only if its BLEU on the pooled dev pages of the six Chinese corpora
# with dev pages (scripts/evaluate_zh.py --dev: 1,269 sentences; zh/graphics has none) is above the shipped weights'
# on the same pages (23.08, measured at 02:17 on their float16 weights), and its held-out pages keep BLEU >= 25,
# chrF >= 30. GIMP is measured only after the rule has decided. Run on 6 December, 02:18-03:49 (2,265 steps in its
# 90 minutes): dev BLEU 22.95 final, 23.01 averaged/, 23.15 averaged/ with the shipped weights: that last kept as
# en-zh's ninth session (23.13 as stored).
EN_ZH_GRAPHICS = dataclasses.replace(
    EN_ZH_KICAD,
    real_data=(*EN_ZH_KICAD.real_data, "zh/graphics"),
    seed=9,
)

# Issue 61: en-fr from scratch on Tatoeba's everyday sentences (twice an epoch) beside en-fr's manuals, everyday text
# and coreference corpus, with a joint vocabulary learnt on all of it (12,000 pieces and the shipped shape, both chosen
# by measurement: docs/models.md); resumable (last/ every 100 steps). Its rule, set before the run: docs/models.md.
EN_FR_TATOEBA = dataclasses.replace(
    REAL_KDE_ALIGN,
    model_overrides=dict(
        d_model=192, d_ff=1536, n_heads=4, n_encoder_layers=3, n_decoder_layers=3,
        attention_dropout=0.0, activation_dropout=0.0,
    ),
    real_data=(*EN_FR_EVERYDAY_ONLY.real_data, "libreoffice", "handbook", "gnome", "apps", "kde", "ui", "tatoeba"),
    real_repeat=(("tatoeba", 2), ("everyday", 2)),
    vocab_size=12000,
    steps=40000,
    batch_tokens=6000,
    lr_factor=0.4,  # peak 0.4 * 192^-0.5 * 800^-0.5 = 1.0e-3 at step 800
    warmup_steps=800,
    snapshot_steps=(0, 1000, 4000),
    snapshot_dtype="float16",
    checkpoint_every=100,
    average_every=500,
    time_limit_s=0.0,
)

PRESETS: dict[str, TrainConfig] = {
    # checkpoints/coref-en-fr, the default before real-coref.
    "coref": COREF,
    # English → 简体中文 from scratch, separate vocabularies (see EN_ZH above): the first checkpoints/en-zh, replaced
    # by en-zh-more's
    "en-zh": EN_ZH,
    # checkpoints/en-zh since 4 December's second GPU session: en-zh with the three Chinese corpora measured after
    # it (docs/corpus.md): GNOME's desktop help (zh/gnome) and GNOME / MATE applications' help (zh/apps), both split
    # by page, and the zh_CN interface catalogues of those applications and four image editors, messages of 3+
    # English words, training only (zh/ui); 3,895 steps in 300 s: held-out pages BLEU 37.96, GIMP 9.36 (the first
    # en-zh: 34.34 and 5.57; see its README)
    "en-zh-more": EN_ZH_MORE,
    # en-zh continued on en-zh-more's corpora (see EN_ZH_CONTINUED above)
    "en-zh-continued": EN_ZH_CONTINUED,
    # en-zh continued on a CPU (see EN_ZH_CPU above)
    "en-zh-cpu": EN_ZH_CPU,
    # en-zh continued on a CPU with the everyday Chinese text (see EN_ZH_OBJECTS above)
    "en-zh-objects": EN_ZH_OBJECTS,
    # en-zh continued on the CPU at half en-zh-objects' lr, with the trainer's averaging (see EN_ZH_LOW_LR above)
    "en-zh-low-lr": EN_ZH_LOW_LR,
    # en-zh-low-lr with the help corpora twice an epoch (see EN_ZH_HELP above)
    "en-zh-help": EN_ZH_HELP,
    # en-zh-help with Debian's documentation, at half its lr for 90 minutes (see EN_ZH_DOCS above)
    "en-zh-docs": EN_ZH_DOCS,
    # en-zh-docs with the documentation and the guides three times an epoch, judged on every corpus's dev pages
    # (see EN_ZH_MANUALS)
    "en-zh-manuals": EN_ZH_MANUALS,
    # en-zh-manuals with Inkscape's tutorials five times an epoch (see EN_ZH_TUTORIALS)
    "en-zh-tutorials": EN_ZH_TUTORIALS,
    # en-zh-tutorials once more: en-zh's fifth session (see EN_ZH_TUTORIALS_AGAIN)
    "en-zh-tutorials-again": EN_ZH_TUTORIALS_AGAIN,
    # en-zh-tutorials in a new order, 95 minutes: en-zh's sixth session if its rule keeps it (see EN_ZH_RESHUFFLED)
    "en-zh-reshuffled": EN_ZH_RESHUFFLED,
    # en-zh-reshuffled with LibreOffice's interface and the ITIL manual: en-zh's sixth session if its rule keeps it
    # (see EN_ZH_OFFICE)
    "en-zh-office": EN_ZH_OFFICE,
    # en-zh-office in a new order, 90 minutes: en-zh's seventh session if its rule keeps it (see EN_ZH_OFFICE_AGAIN)
    "en-zh-office-again": EN_ZH_OFFICE_AGAIN,
    # en-zh-office-again with KiCad's manuals in a new order: en-zh's eighth session (see EN_ZH_KICAD)
    "en-zh-kicad": EN_ZH_KICAD,
    # en-zh-kicad with the interfaces of graphics programs other than GIMP in a new order: en-zh's ninth session (see
    # EN_ZH_GRAPHICS)
    "en-zh-graphics": EN_ZH_GRAPHICS,
    # checkpoints/coref-en-fr-encoder: a model whose encoder resolves "it". One decoder layer, and every
    # cross-attention head's rows that write il/elle and the connective pulled onto their English words,
    # leave the encoder as the only place where the antecedent can be found (see its README).
    "coref-encoder": dataclasses.replace(
        COREF, model_overrides=dict(n_encoder_layers=3, n_decoder_layers=1), seed=1, align_pronoun=1.0
    ),
    # Twins that show why the decoder's look-ahead mask exists (checkpoints/leak-*): the same run with
    # and without the mask. Without it the decoder sees the token it must predict and copies it.
    "leak-masked": LEAK_MASKED,
    "leak-no-mask": dataclasses.replace(LEAK_MASKED, look_ahead_mask=False),
    # Real text: LibreOffice help, the Debian handbook, GNOME's help and four image editors' interface strings
    # (transformer/corpus/data/), mixed with the coreference corpus and its typed variants; one joint
    # sentencepiece vocabulary. checkpoints/real-coref (the default before real-kde-align): 4,500 steps, 58.7 min
    # wall on 2 cores; held-out chrF 56.3, GIMP 40.2, pronoun accuracy 1.000, best probe head encoder L2 H2 1.000
    # (see its README and scripts/evaluate_real_coref.py).
    "real-coref": REAL_COREF,
    # Beside the default: better on real text (GIMP chrF 41.1 against 40.2), but no single head reaches the probe
    # goal (cross L2 H3 0.91), so by issue 17's rule it is not the default (see checkpoints/real-apps/README.md).
    "real-apps": REAL_APPS,
    # real-apps plus the KDE applications' handbooks: 4,740 steps in its 58 minutes; held-out pages chrF 58.6, GIMP
    # 43.5, pronoun accuracy 0.9989, but the best probe head is cross L2 H2 0.875 (see checkpoints/real-kde/README.md)
    "real-kde": REAL_KDE,
    # checkpoints/real-kde-align (the default): real-kde with the alignment loss; 4,620 steps in its 58 minutes;
    # held-out pages chrF 58.6, GIMP 43.7 greedy (60.3 and 45.0 with beam 4 at the α = 3 its card chose on the dev
    # pages: scripts/sweep_length_penalty.py), pronoun accuracy 1.000, typed variants 1.000, best probe head encoder
    # L2 H3 1.000 (see its README)
    "real-kde-align": REAL_KDE_ALIGN,
    "en-fr-scratch": EN_FR_SCRATCH,
    # everyday English → French (issue 33): real-kde-align continued on everyday text (see EN_FR above)
    "en-fr": EN_FR,
    # en-fr continued on a CPU (see EN_FR_CONTINUED above)
    "en-fr-continued": EN_FR_CONTINUED,
    # en-fr continued again, on a GPU (see EN_FR_GPU above)
    "en-fr-gpu": EN_FR_GPU,
    # en-fr continued on the CPU with four more games' catalogues: checkpoints/en-fr's session 4 (see EN_FR_GAMES)
    "en-fr-games": EN_FR_GAMES,
    # en-fr continued on the CPU with the household text: checkpoints/en-fr's session 5 (see EN_FR_OBJECTS)
    "en-fr-objects": EN_FR_OBJECTS,
    # en-fr continued on the CPU with three more games' talk: checkpoints/en-fr's session 6 (see EN_FR_DIALOGUE)
    "en-fr-dialogue": EN_FR_DIALOGUE,
    # en-fr continued on the CPU with stories, children's words and four more games: session 7 (see EN_FR_STORIES)
    "en-fr-stories": EN_FR_STORIES,
    # en-fr continued on the CPU with its feed-forward layers widened to 1,536 units: session 8 (see EN_FR_WIDE)
    "en-fr-wide": EN_FR_WIDE,
    # en-fr's feed-forward layers widened again, to 3,072 units: tried as session 9, not kept (see EN_FR_WIDER)
    "en-fr-wider": EN_FR_WIDER,
    # en-fr continued at its own size and session 9's low peak: tried as session 10, not kept (see EN_FR_STEADY)
    "en-fr-steady": EN_FR_STEADY,
    # en-fr continued on its everyday corpora alone, the manuals left out, averaged with the weights before: session
    # 11, the ninth kept (its metrics rows are marked "session": 9; see EN_FR_EVERYDAY_ONLY)
    "en-fr-everyday-only": EN_FR_EVERYDAY_ONLY,
    # issue 61: en-fr from scratch with Tatoeba and a new vocabulary (see EN_FR_TATOEBA)
    "en-fr-tatoeba": EN_FR_TATOEBA,
    # checkpoints/coref-variants: the coref recipe on a corpus whose sentences are 40 % typed variants (clause
    # first, commas, "did not", very/so/really/extremely, lower case, no full stop, new nouns and verbs).
    "coref-variants": dataclasses.replace(
        COREF, corpus=CorpusSpec(n_examples=60000, both_share=0.5, number_share=0.2, variant_share=0.4)
    ),
    # Under a minute on two cores: small enough for a demo in class (tests shorten it further).
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
