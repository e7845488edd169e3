"""One sentence through the model: the translation and every attention map, as plain arrays.

This is what the app caches per (checkpoint, sentence, beam, options) and what
``python -m transformer translate --json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .attention import AttentionKind
from .beams import PAPER_ALPHA
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
    source_ids: list[int]  # encoder input, </s> last; one per encoder row/column
    decoder_ids: list[int]  # decoder input, <s> first; one per decoder row (teacher forcing replays these)
    output_ids: list[int]  # the token each decoder row produced
    source_pieces: list[str]  # the pieces of source_ids
    target_pieces: list[str]  # the pieces of decoder_ids
    output_pieces: list[str]  # the pieces of output_ids
    translation: str
    encoder: np.ndarray  # (L, H, S, S)
    decoder: np.ndarray  # (L, H, T, T)
    cross: np.ndarray  # (L, H, T, S)
    top_tokens: list[list[str]]  # per decoder row: the 5 most probable next pieces
    top_probs: np.ndarray  # (T, 5)
    # (T,) the probability the decoder gave each piece it produced (output_ids), at the step that produced it:
    # what the confidence line (transformer.inspection.confidence) reads
    output_probs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))

    def maps(self, kind: AttentionKind) -> np.ndarray:
        """(L, H, T_q, T_k) weights of one kind."""
        kind = AttentionKind(kind)
        return {AttentionKind.ENCODER: self.encoder, AttentionKind.DECODER: self.decoder}.get(kind, self.cross)

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


@dataclass(frozen=True)
class Source:
    """A text as the encoder reads it: its ids (cut to the model's length, EOS last) and what was lost."""

    text: str  # the text actually translated (after truncation)
    ids: list[int]  # encoder input
    truncated: bool
    n_pieces: int
    unknown_chars: list[str]

    @classmethod
    def of(cls, tokenizer: Tokenizer, text: str, max_len: int) -> Source:
        ids = tokenizer.encode(text)
        src_ids = tokenizer.source_ids(text, max_len)
        kept = src_ids[:-1]
        truncated = len(kept) < len(ids)
        return cls(
            tokenizer.decode_source(kept) if truncated else text,
            src_ids,
            truncated,
            len(ids),
            tokenizer.unknown_words(text),
        )


def max_new_tokens(source: Source) -> int:
    """How long a translation may grow: twice the source and a margin (decoding also stops at max_len)."""
    return 2 * len(source.ids) + 8


def assemble(
    tokenizer: Tokenizer,
    source: Source,
    tokens: list[int],
    decoder_input: list[int],
    maps: dict[AttentionKind, np.ndarray],
    log_probs: torch.Tensor,
) -> Analysis:
    """An Analysis from a decoded sentence: its maps (L, H, T_q, T_k) per kind and (T, vocab) log-probabilities."""
    probs, top = log_probs.float().exp().topk(5, dim=-1)
    produced = torch.tensor(tokens, dtype=torch.long, device=log_probs.device)[: log_probs.shape[0], None]
    output_probs = log_probs.float()[: produced.shape[0]].gather(1, produced).exp()[:, 0]
    return Analysis(
        text=source.text,
        truncated=source.truncated,
        n_pieces=source.n_pieces,
        unknown_chars=source.unknown_chars,
        source_ids=list(source.ids),
        decoder_ids=list(decoder_input),
        output_ids=list(tokens),
        source_pieces=tokenizer.source_pieces(source.ids),
        target_pieces=tokenizer.target_pieces(decoder_input),
        output_pieces=tokenizer.target_pieces(tokens),
        translation=tokenizer.decode(tokens),
        encoder=maps[AttentionKind.ENCODER],
        decoder=maps[AttentionKind.DECODER],
        cross=maps[AttentionKind.CROSS],
        top_tokens=[tokenizer.target_pieces(row) for row in top.tolist()],
        top_probs=probs.cpu().numpy(),
        output_probs=output_probs.cpu().numpy(),
    )


def analyse(
    model: Transformer,
    tokenizer: Tokenizer,
    text: str,
    beam_size: int = 1,
    options: CallOptions = DEFAULT,
    *,
    alpha: float = PAPER_ALPHA,
) -> Analysis:
    """Translate text and collect every attention map. Text longer than the model reads is cut.

    beam_size 1 is greedy decoding; above it, beam search with length penalty alpha (a checkpoint's
    own: Checkpoint.alpha). transformer.serving.analyse_batch computes the same for many texts in one
    padded pass.
    """
    source = Source.of(tokenizer, text, model.config.max_len)
    decoded = translate_ids(
        model, source.ids, beam_size=beam_size, max_new_tokens=max_new_tokens(source), options=options, alpha=alpha
    )
    att = decoded.attention
    maps = {kind: np.stack([m[0].float().cpu().numpy() for m in att.of(kind)]) for kind in AttentionKind}
    return assemble(tokenizer, source, decoded.tokens, decoded.decoder_input, maps, decoded.log_probs)
