"""A trained model moved onto a new vocabulary (vocabulary transfer: a piece the old vocabulary has keeps its
trained row; a new piece starts as the mean of the rows of the old pieces its text is cut into, as in Gee et al.
2022, "Fast Vocabulary Transfer for Language Model Compression", §3).

Everything between the embeddings and the pre-softmax projection (attention, feed-forward, layer norms) is kept as
trained, so a run that learns a vocabulary on new text (a manuals-trained model's ``▁do ctor`` becoming one
``▁doctor``) starts from what the old model knows instead of from nothing. The embeddings are √d_model-scaled and
the projection is tied to the target embedding (§3.4), so one row per piece carries both.
"""

from __future__ import annotations

import dataclasses

import torch

from ..model import Transformer
from ..tokenizer import TokenizerBase

# the tables with a row per piece: the embeddings and the pre-softmax projection (tied to the target embedding)
VOCABULARY_TABLES = frozenset({"src_embed.weight", "tgt_embed.weight", "generator.weight", "generator.bias"})


def old_rows(pieces: list[str], old_ids: dict[str, int], cut, unk: int) -> tuple[list[list[int]], dict[str, int]]:
    """For each new piece, the old rows it starts from: its own ("kept"), else those of the old pieces its text is
    cut into, unknown ones left out ("composed"), else none ("fresh": it keeps the model's initialisation); and
    how many pieces went each way."""
    rows, counts = [], {"kept": 0, "composed": 0, "fresh": 0}
    for piece in pieces:
        if piece in old_ids:
            rows.append([old_ids[piece]])
            counts["kept"] += 1
        else:
            rows.append([j for j in cut(piece.replace("▁", " ").strip()) if j != unk])
            counts["composed" if rows[-1] else "fresh"] += 1
    return rows, counts


def _fill(new_table: torch.Tensor, old_table: torch.Tensor, rows: list[list[int]]) -> None:
    """new_table[i] = the mean of old_table's rows[i] (in place), where rows[i] names any."""
    for i, r in enumerate(rows):
        if r:
            new_table[i] = old_table[r].mean(dim=0)


@torch.no_grad()
def transfer_vocabulary(
    model: Transformer, old: TokenizerBase, new: TokenizerBase, seed: int = 0
) -> tuple[Transformer, dict[str, dict[str, int]]]:
    """A new model for ``new``'s vocabularies with ``model``'s weights; ``model`` is not changed.

    Args:
        model: a trained model whose vocabularies are ``old``'s (its projection tied to the target embedding).
        old: the model's tokenizer.
        new: the tokenizer to move to (one vocabulary for both sides, or separate ones, as ``old`` has).
        seed: seeds the rows of pieces whose text the old vocabulary cannot write (the model's own initialisation).

    Returns the model (in ``model``'s mode, on its device) and, for each side ("source", and "target" where the
    vocabularies are separate), how many rows were kept, composed and left fresh. Special tokens (pad, unk,
    start, end) take the old special tokens' rows.
    """
    if old.separate_vocabularies != new.separate_vocabularies:
        raise ValueError("the new tokenizer must have separate vocabularies exactly where the old one has")
    if not model.config.tie_embeddings:
        raise ValueError("vocabulary transfer needs the projection tied to the target embedding (§3.4)")
    config = dataclasses.replace(
        model.config,
        vocab_size=new.vocab_size,
        **({"tgt_vocab_size": new.target_vocab_size} if new.separate_vocabularies else {}),
    )
    device = next(model.parameters()).device
    torch.manual_seed(seed)
    moved = Transformer(config).to(device)
    old_state, state = model.state_dict(), moved.state_dict()
    for name, value in state.items():  # everything but the vocabulary's rows, as trained
        if name not in VOCABULARY_TABLES:  # (same-sized tables too: a row's id names another piece now)
            value.copy_(old_state[name])

    def side(table: str, old_pieces, new_pieces, n_old: int, n_new: int, cut) -> dict[str, int]:
        old_ids = {p: i for i, p in enumerate(old_pieces(range(n_old)))}
        for s_old, s_new in zip(old.special, new.special, strict=True):  # pad, unk, start, end
            old_ids[new_pieces([s_new])[0]] = s_old
        rows, counts = old_rows(new_pieces(range(n_new)), old_ids, cut, old.special.unk)
        _fill(state[table], old_state[table], rows)
        if config.output_bias and table == target_table:  # the projection's bias is per target piece, as its weight
            _fill(state["generator.bias"][:, None], old_state["generator.bias"][:, None], rows)
        return counts

    target_table = "tgt_embed.weight" if new.separate_vocabularies else "src_embed.weight"
    report = {
        "source": side(
            "src_embed.weight", old.source_pieces, new.source_pieces, old.vocab_size, new.vocab_size, old.encode
        )
    }
    if new.separate_vocabularies:
        report["target"] = side(
            "tgt_embed.weight",
            old.target_pieces,
            new.target_pieces,
            old.target_vocab_size,
            new.target_vocab_size,
            old.encode_target,
        )
    moved.load_state_dict(state)
    return moved.train(model.training), report
