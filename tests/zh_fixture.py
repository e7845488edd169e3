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
