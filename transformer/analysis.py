"""One sentence through the model: the translation and every attention map, as plain arrays.

This is what the app caches per (checkpoint, sentence, beam, options) and what
``python -m transformer translate --json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import AttentionKind
from .corpus import pronoun_piece
from .decoding import translate_ids
from .model import Transformer
from .options import DEFAULT, CallOptions
from .tokenizer import Tokenizer


@dataclass
class Analysis:
    """Everything the explorer shows for one sentence, as plain arrays (cheap to cache and copy)."""

    text: str  # the text actually translated (after truncation)
    truncated: bool
    n_pieces: int  # pieces of the original text
    unknown_chars: list[str]  # words with a character the tokenizer cannot represent
    source_pieces: list[str]  # encoder input, </s> last; one per encoder row/column
    target_pieces: list[str]  # decoder input, <s> first; one per decoder row
    output_pieces: list[str]  # the token each decoder row produced
    translation: str
    encoder: np.ndarray  # (L, H, S, S)
    decoder: np.ndarray  # (L, H, T, T)
    cross: np.ndarray  # (L, H, T, S)
    top_tokens: list[list[str]]  # per decoder row: the 5 most probable next pieces
    top_probs: np.ndarray  # (T, 5)

    def maps(self, kind: AttentionKind) -> np.ndarray:
        """(L, H, T_q, T_k) weights of one kind."""
        return getattr(self, AttentionKind(kind).value)

    def labels(self, kind: AttentionKind) -> tuple[list[str], list[str]]:
        """(row labels, column labels): decoder rows are named by the token they produce."""
        kind = AttentionKind(kind)
        if kind is AttentionKind.ENCODER:
            return self.source_pieces, self.source_pieces
        if kind is AttentionKind.DECODER:
            return self.output_pieces, self.target_pieces
        return self.output_pieces, self.source_pieces

    @property
    def pronoun_step(self) -> int | None:
        """The decoder row that writes the French subject pronoun (il, elle, ...), if any."""
        return pronoun_piece(self.output_pieces)

    @property
    def pronoun_source(self) -> int | None:
        """The source piece of "it" / "they", if any."""
        return next((i for i, p in enumerate(self.source_pieces) if p.strip("▁").lower() in ("it", "they")), None)


def analyse(
    model: Transformer, tokenizer: Tokenizer, text: str, beam_size: int = 1, options: CallOptions = DEFAULT
) -> Analysis:
    """Translate text and collect every attention map. Text longer than the model reads is cut."""
    ids = tokenizer.encode(text)
    src_ids = tokenizer.source_ids(text, model.config.max_len)
    kept = src_ids[:-1]
    truncated = len(kept) < len(ids)
    decoded = translate_ids(model, src_ids, beam_size=beam_size, max_new_tokens=2 * len(src_ids) + 8, options=options)
    att = decoded.attention
    stack = lambda maps: np.stack([m[0].float().numpy() for m in maps])  # noqa: E731  [L] (1,H,.,.) -> (L,H,.,.)
    probs, top = decoded.log_probs.exp().topk(5, dim=-1)
    return Analysis(
        text=tokenizer.decode(kept) if truncated else text,
        truncated=truncated,
        n_pieces=len(ids),
        unknown_chars=tokenizer.unknown_words(text),
        source_pieces=tokenizer.pieces(src_ids),
        target_pieces=tokenizer.pieces(decoded.decoder_input),
        output_pieces=tokenizer.pieces(decoded.tokens),
        translation=tokenizer.decode(decoded.tokens),
        encoder=stack(att.encoder),
        decoder=stack(att.decoder),
        cross=stack(att.cross),
        top_tokens=[tokenizer.pieces(row) for row in top.tolist()],
        top_probs=probs.numpy(),
    )
