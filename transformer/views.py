"""Pure array helpers behind the app's views (no streamlit, no plotting).

Everything takes numpy arrays of attention weights shaped (L, H, T_q, T_k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The rule of transformer.tokenizer.word_groups, in words for the app.
WORD_MERGE_RULE = (
    "A word is a piece that starts with '▁' plus the pieces that follow it up to the next '▁' "
    "(special tokens such as </s> stay words of their own). Attention *to* a word is the sum of the "
    "weights on its pieces, so every row still sums to 1; attention *from* a word is the mean of its "
    "pieces' rows."
)


def word_labels(pieces: list[str], groups: list[list[int]]) -> list[str]:
    return ["".join(pieces[i] for i in g).replace("▁", "") or "▁" for g in groups]


def merge_words(weights: np.ndarray, row_groups: list[list[int]], col_groups: list[list[int]]) -> np.ndarray:
    """(..., T_q, T_k) piece attention -> (..., W_q, W_k) word attention (rows: mean, columns: sum)."""
    cols = np.stack([weights[..., g].sum(-1) for g in col_groups], axis=-1)  # (..., T_q, W_k)
    return np.stack([cols[..., g, :].mean(-2) for g in row_groups], axis=-2)  # (..., W_q, W_k)


def token_focus(weights: np.ndarray, query: int) -> np.ndarray:
    """One query row in every layer and head: (L, H, T_q, T_k) -> (L·H, T_k), row = layer·H + head."""
    L, H = weights.shape[:2]
    return weights[:, :, query, :].reshape(L * H, -1)


@dataclass
class Difference:
    """a − b for two attention maps of the same kind, on the positions they share."""

    delta: np.ndarray  # (L, H, T_q, T_k)
    same_shape: bool
    rows: int
    cols: int


def difference(a: np.ndarray, b: np.ndarray) -> Difference:
    rows, cols = min(a.shape[-2], b.shape[-2]), min(a.shape[-1], b.shape[-1])
    delta = a[..., :rows, :cols] - b[..., :rows, :cols]
    return Difference(delta, a.shape == b.shape, rows, cols)


def diff_labels(a: list[str], b: list[str], n: int) -> list[str]:
    """Axis labels for a difference map: one token where both sentences agree, "a | b" where they differ."""
    return [x if x == y else f"{x} | {y}" for x, y in zip(a[:n], b[:n])]


def to_csv(matrix: np.ndarray, row_labels: list[str], col_labels: list[str]) -> str:
    """A matrix as CSV text with labelled rows and columns (quotes doubled, never evaluated)."""

    def cell(s: str) -> str:
        s = str(s)
        if s[:1] in ("=", "+", "-", "@"):
            s = "'" + s  # keep spreadsheets from reading a token as a formula
        return '"' + s.replace('"', '""') + '"'

    lines = [",".join([cell("query \\ key")] + [cell(c) for c in col_labels])]
    for label, row in zip(row_labels, matrix):
        lines.append(",".join([cell(label)] + [f"{x:.6f}" for x in row]))
    return "\n".join(lines) + "\n"


@dataclass
class Analysis:
    """Everything the explorer shows for one sentence, as plain arrays (cheap to cache and copy)."""

    text: str  # the text actually translated (after truncation)
    truncated: bool
    n_pieces: int  # pieces of the original text
    unknown_words: list[str]
    source_pieces: list[str]  # encoder input, </s> last; one per encoder row/column
    target_pieces: list[str]  # decoder input, <s> first; one per decoder row
    output_pieces: list[str]  # the token each decoder row produced
    translation: str
    encoder: np.ndarray  # (L, H, S, S)
    decoder: np.ndarray  # (L, H, T, T)
    cross: np.ndarray  # (L, H, T, S)
    top_tokens: list[list[str]]  # per decoder row: the 5 most probable next pieces
    top_probs: np.ndarray  # (T, 5)

    def maps(self, kind: str) -> np.ndarray:
        return {"encoder": self.encoder, "decoder": self.decoder, "cross": self.cross}[kind]

    def labels(self, kind: str) -> tuple[list[str], list[str]]:
        """(row labels, column labels): decoder rows are named by the token they produce."""
        if kind == "encoder":
            return self.source_pieces, self.source_pieces
        if kind == "decoder":
            return self.output_pieces, self.target_pieces
        return self.output_pieces, self.source_pieces


def analyse(model, tokenizer, text: str, beam_size: int = 1) -> Analysis:
    """Translate text and collect every attention map (model and tokenizer from a Checkpoint)."""
    from .decoding import translate_ids
    from .tokenizer import EOS_ID

    ids = tokenizer.encode(text)
    limit = model.config.max_len - 1
    truncated = len(ids) > limit
    kept = ids[:limit]
    decoded = translate_ids(model, kept + [EOS_ID], beam_size=beam_size, max_new_tokens=limit)
    att = decoded.attention
    stack = lambda maps: np.stack([m[0].float().numpy() for m in maps])  # noqa: E731  [L] (1,H,.,.) -> (L,H,.,.)
    probs, top = decoded.log_probs.exp().topk(5, dim=-1)
    return Analysis(
        text=tokenizer.decode(kept) if truncated else text,
        truncated=truncated,
        n_pieces=len(ids),
        unknown_words=tokenizer.unknown_words(text),
        source_pieces=tokenizer.pieces(kept + [EOS_ID]),
        target_pieces=tokenizer.pieces(decoded.decoder_input),
        output_pieces=tokenizer.pieces(decoded.tokens),
        translation=tokenizer.decode(decoded.tokens),
        encoder=stack(att.encoder),
        decoder=stack(att.decoder),
        cross=stack(att.cross),
        top_tokens=[tokenizer.pieces(row) for row in top.tolist()],
        top_probs=probs.numpy(),
    )
