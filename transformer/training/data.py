"""Training pairs and their batches: tokenised once, batched by length, deterministic in (seed, epoch)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch
from torch import Tensor

from ..corpus import Example, generate, read_tsv
from ..corpus.real import load_real
from ..corpus.tatoeba import without_test_sentences
from ..decoding import on_device
from ..tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer, pad_batch
from .alignment import Alignment, pronoun_alignments
from .lock import TrainingError
from .presets import TrainConfig


def load_training_examples(config: TrainConfig) -> list[tuple[str, str]] | list[Example]:
    """The --data file's (source, target) pairs, else the generated corpus's training split (Examples);
    then the training split of every committed real-text corpus the config names (source, target pairs), less
    every pair whose English is a test sentence (corpus.tatoeba.without_test_sentences)."""
    examples = read_tsv(config.data_file) if config.data_file else generate(config.corpus)[0]
    if config.real_data:
        repeat = dict(config.real_repeat)
        unknown = sorted(set(repeat) - set(config.real_data))
        if unknown:
            raise TrainingError(f"real_repeat names corpora that real_data does not: {', '.join(unknown)}")
        examples = list(examples)
        for name in config.real_data:
            pairs = without_test_sentences(load_real("train", (name,)), lambda p: p[0])
            examples.extend(pairs * max(int(repeat.get(name, 1)), 1))
    return examples


def source_target(ex: tuple[str, str] | Example) -> tuple[str, str]:
    return (ex.src, ex.tgt) if isinstance(ex, Example) else ex


class TrainingData:
    """Tokenised training pairs and their batches: about batch_tokens target tokens each, of similar length,
    deterministic in (seed, epoch); each rank of a distributed run takes every world_size-th batch."""

    def __init__(
        self,
        examples: Sequence[tuple[str, str]] | Sequence[Example],
        tokenizer: Tokenizer,
        config: TrainConfig,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        self.config, self.rank, self.world_size = config, rank, world_size
        self.pairs: list[tuple[list[int], list[int]]] = []
        self.alignments: list[list[Alignment]] = []
        for ex in examples:
            src, tgt = source_target(ex)
            x, y = tokenizer.encode(src), tokenizer.encode_target(tgt)
            if not (0 < len(x) < config.max_len and 0 < len(y) < config.max_len):
                continue
            self.pairs.append((x, y))
            supervised = config.align_pronoun and isinstance(ex, Example)
            self.alignments.append(pronoun_alignments(tokenizer, ex, config.align_connective) if supervised else [])
        if not self.pairs:
            raise TrainingError("no usable training pairs (all empty or longer than max_len)")

    def __len__(self) -> int:
        return len(self.pairs)

    def epoch(self, epoch: int) -> list[list[int]]:
        """This rank's batches of one epoch, as lists of pair indices."""
        rng = random.Random(self.config.seed * 1000003 + epoch)
        pairs = self.pairs
        order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][1]), len(pairs[i][0]), rng.random()))
        batches, current, longest = [], [], 0
        for i in order:
            n = max(len(pairs[i][0]), len(pairs[i][1]))
            if current and max(longest, n) * (len(current) + 1) > self.config.batch_tokens:
                batches.append(current)
                current, longest = [], 0
            current.append(i)
            longest = max(longest, n)
        if current:
            batches.append(current)
        rng.shuffle(batches)
        return batches[self.rank :: self.world_size]

    def collate(
        self, idx: list[int], device: torch.device | str | None = None, pad_id: int = PAD_ID
    ) -> tuple[Tensor, Tensor, Tensor]:
        """src (B, S) = x + EOS; tgt_in (B, T) = BOS + y; tgt_out (B, T) = y + EOS; padded with pad_id, on
        device (None: torch's default device)."""
        with on_device(device):
            src = pad_batch([self.pairs[i][0] + [EOS_ID] for i in idx], pad_id)
            tgt_in = pad_batch([[BOS_ID] + self.pairs[i][1] for i in idx], pad_id)
            tgt_out = pad_batch([self.pairs[i][1] + [EOS_ID] for i in idx], pad_id)
        return src, tgt_in, tgt_out


class BatchStream:
    """The run's batches, epoch after epoch, and where it stands (so a resumed run takes the very next one)."""

    def __init__(self, data: TrainingData) -> None:
        self.data = data
        self.epoch = 0  # epochs started so far
        self.left: list[list[int]] = []  # the current epoch's batches not yet used (taken from the end)

    def next(self) -> list[int]:
        if not self.left:
            self.left = self.data.epoch(self.epoch)
            self.epoch += 1
        return self.left.pop()

    def state(self) -> dict[str, int]:
        return {"epoch": self.epoch, "batches_left": len(self.left)}

    def restore(self, state: dict) -> None:
        """Rebuild the interrupted epoch, minus the batches already used."""
        if state.get("epoch"):
            self.epoch = int(state["epoch"])
            self.left = self.data.epoch(self.epoch - 1)[: int(state["batches_left"])]
