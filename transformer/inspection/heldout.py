"""Held-out sentences for the head lab's research measures (roles, importance, pruning), and their batches.

Which sentences, by what the checkpoint's card says it was trained on:

- a model trained with committed real text: the test pages of those corpora (whole pages never trained on);
- a model trained on the generated coreference corpus only: its held-out split;
- an imported opus-mt model (no corpus of ours): the test pages of the committed LibreOffice help and
  Debian handbook (English–French text the app ships; opus-mt's own training data is not known here).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ..corpus import CorpusSpec, generate_test
from ..corpus.real import load_real, real_files
from ..provenance import is_imported
from ..tokenizer import TokenizerBase, pad_batch

DEFAULT_REAL = ("libreoffice", "handbook")


@dataclass(frozen=True)
class HeldOut:
    """(source, reference) pairs and where they come from (a catalogue key's suffix: real, generated)."""

    pairs: tuple[tuple[str, str], ...]
    origin: str


def _real_names(card: dict[str, Any]) -> tuple[str, ...] | None:
    train = card.get("train_config") if isinstance(card, dict) else None
    names = train.get("real_data") if isinstance(train, dict) else None
    if isinstance(names, list) and names:
        files = real_files()
        return tuple(n for n in names if n in files and n != "ui")  # the interface strings hold no test pages
    return None


def heldout_pairs(card: dict[str, Any], n: int = 200) -> HeldOut:
    """The first n held-out (source, reference) pairs of a checkpoint (see the module's docstring)."""
    names = None if is_imported(card) else _real_names(card)
    if names is None and not is_imported(card) and isinstance(card.get("train_config"), dict):
        examples = generate_test(CorpusSpec.from_card(card))[:n]
        return HeldOut(tuple((ex.src, ex.tgt) for ex in examples), "generated")
    pairs = load_real("test", names or DEFAULT_REAL)
    # every k-th pair, so that n pairs cover many pages rather than the first few
    step = max(1, len(pairs) // max(n, 1))
    return HeldOut(tuple(pairs[::step][:n]), "real")


def fitting(tokenizer: TokenizerBase, pairs, max_len: int) -> list[tuple[list[int], list[int], list[int]]]:
    """(source ids, decoder input, decoder target) of the pairs whose source and target fit in max_len."""
    out = []
    for src, tgt in pairs:
        s = tokenizer.source_ids(src)
        t_in, t_out = tokenizer.target_ids(tgt)
        if len(s) <= max_len and len(t_in) <= max_len:
            out.append((s, t_in, t_out))
    return out


def batches(
    items: list[tuple[list[int], list[int], list[int]]], pad: int, batch_size: int = 32, device=None
) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Padded (src, tgt_in, tgt_out) batches, sorted by length (less padding), on device."""
    order = sorted(range(len(items)), key=lambda i: (len(items[i][0]), len(items[i][1])))
    for b in range(0, len(order), batch_size):
        chunk = [items[i] for i in order[b : b + batch_size]]
        yield tuple(pad_batch([c[k] for c in chunk], pad).to(device) for k in range(3))
