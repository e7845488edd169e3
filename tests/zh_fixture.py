"""A tiny English → 简体中文 checkpoint trained here for a few steps (the en-zh preset's recipe at the tiny size):
separate source and target sentencepiece models learnt on the committed Chinese everyday corpus, a card that
names its corpora (zh/everyday) as the en-zh preset's does."""

from __future__ import annotations

import dataclasses
from pathlib import Path


def make_en_zh_checkpoint(path: Path, steps: int = 2) -> Path:
    from transformer.training import PRESETS, Trainer

    cfg = dataclasses.replace(
        PRESETS["en-zh"],
        model_preset="tiny",
        model_overrides={},
        real_data=("zh/everyday",),
        real_repeat=(),
        vocab_size=1000,
        tgt_vocab_size=3500,
        steps=steps,
        batch_tokens=500,
        snapshot_steps=(),
        checkpoint_every=1000,
        time_limit_s=0.0,
        mixed_precision=False,
    )
    Trainer(cfg, Path(path)).train()
    return Path(path)


# Six sentence pairs a tiny model learns by heart in a few hundred steps: it then writes real Chinese.
PAIRS = [
    ("the book is on the table.", "书在桌子上。"),
    ("the cat is on the table.", "猫在桌子上。"),
    ("the book is red.", "书是红色的。"),
    ("the cat is black.", "猫是黑色的。"),
    ("i see the cat.", "我看见猫。"),
    ("i see the book.", "我看见书。"),
]


def train_tiny_writer(tmp: Path, path: Path) -> Path:
    """The tiny preset with separate 40 + 30-piece vocabularies, 1,000 steps on PAIRS (seeded): a model that
    translates them into the Chinese it was trained on (600 steps left "cat" and "book" confused in two of them on an
    Intel Xeon, where an AMD EPYC's arithmetic had learnt all six)."""
    import torch

    from transformer.training import PRESETS, Trainer

    data = Path(tmp) / "pairs.tsv"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in PAIRS * 30), encoding="utf-8")
    cfg = dataclasses.replace(
        PRESETS["tiny"],
        data_file=str(data),
        vocab_size=40,
        tgt_vocab_size=30,
        steps=1000,
        batch_tokens=300,
        snapshot_steps=(),
        checkpoint_every=1000,
        warmup_steps=50,
        lr_factor=1.0,
        label_smoothing=0.0,
    )
    torch.manual_seed(0)
    Trainer(cfg, Path(path)).train()
    return Path(path)
