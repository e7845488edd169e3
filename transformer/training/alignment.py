"""Alignment supervision (``TrainConfig.align_pronoun``): a loss that pulls the cross-attention row writing
il/elle onto "it"/"they", and the row writing the connective onto the English one (word alignment,
Garg et al. 2019), so that only the encoder can resolve the reference."""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch
from torch import Tensor

from ..corpus import Example
from ..tokenizer import Tokenizer, word_groups


@dataclass
class Alignment:
    """One supervised row of a pair: the target row (the decoder row that writes a word) and the source
    pieces of the English word it translates."""

    row: int
    columns: list[int]


FRENCH_CONNECTIVE = re.compile(r"(parce qu|puisqu|car )")


def pronoun_alignments(tokenizer: Tokenizer, ex: Example, connective: bool = True) -> list[Alignment]:
    """il/elle ↔ it/they and (with connective) parce que/puisque/car ↔ because/since/as, for one pronoun
    example ([] when it has none)."""
    from ..evaluate import probe_rows

    rows = probe_rows(tokenizer, ex)
    if rows is None:
        return []
    out = [Alignment(rows.cross_row, [rows.pronoun_row])]
    m = FRENCH_CONNECTIVE.search(ex.tgt)
    if connective and m is not None and ex.pronoun > 0:
        words = word_groups(tokenizer.source_pieces(tokenizer.encode(ex.src)))
        pieces = tokenizer.encode_with_offsets(ex.tgt)
        row = next((i for i, (_, _, b, e) in enumerate(pieces) if b <= m.start() < e), None)
        if row is not None:
            out.append(Alignment(row, words[ex.pronoun - 1]))
    return out


def alignment_loss(cross: list[Tensor], alignments: list[list[Alignment]]) -> Tensor | None:
    """Mean of -log(weight on the aligned source pieces) over every cross-attention layer and head.

    cross: [L] (B, H, T, S) weights; alignments: the supervised rows of each batch row.
    """
    terms = []
    for b, rows in enumerate(alignments):
        for a in rows:
            for w in cross:
                columns = torch.tensor(a.columns, dtype=torch.long, device=w.device)
                terms.append(w[b, :, a.row, columns].sum(-1).clamp_min(1e-9).log())  # (H,)
    return -torch.cat(terms).mean() if terms else None
