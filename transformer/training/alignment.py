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
    # every supervised (row, column) of the batch at once: a few kernels per layer, not a few per row
    # (per-row indexing cost a GPU step more than its matrix products)
    batch, row, column, group = [], [], [], []
    n_groups = 0
    for b, rows in enumerate(alignments):
        for a in rows:
            for c in a.columns:
                batch.append(b), row.append(a.row), column.append(c), group.append(n_groups)
            n_groups += 1
    if n_groups == 0:
        return None
    device = cross[0].device
    b_idx, r_idx, c_idx, g_idx = (torch.tensor(v, dtype=torch.long, device=device) for v in (batch, row, column, group))
    terms = []
    for w in cross:
        picked = w[b_idx, :, r_idx, c_idx]  # (N, H): the weight each head puts on each aligned column
        sums = torch.zeros(n_groups, w.size(1), dtype=w.dtype, device=device).index_add_(0, g_idx, picked)
        terms.append(sums.clamp_min(1e-9).log())  # (G, H)
    return -torch.cat(terms).mean()
