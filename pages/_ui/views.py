"""Typed views: each is a small frozen dataclass that yields its matrix (with labels) and its figure.

The page, the CSV buttons and the benchmarks all go through these classes, so they
show and export the same numbers. A new view is a new class, not a branch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import plotly.graph_objects as go

from transformer.analysis import Analysis
from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint
from transformer.inspection.languages import target_word_groups
from transformer.inspection.maps import diff_labels, difference, merge_words, token_focus, word_labels
from transformer.provenance import target_language
from transformer.tokenizer import word_groups

from . import figures
from .export import to_csv
from .i18n import Translator
from .probe import probe_marks

Tr = Callable[..., str]


class ViewContext(Protocol):
    """What a view reads: the sentence's analysis, its checkpoint, and other sentences' analyses."""

    analysis: Analysis
    checkpoint: Checkpoint

    def other(self, text: str) -> Analysis: ...


@dataclass(frozen=True)
class Context:
    analysis: Analysis
    checkpoint: Checkpoint
    other_fn: Callable[[str], Analysis]

    def other(self, text: str) -> Analysis:
        return self.other_fn(text)


@dataclass(frozen=True)
class Matrix:
    """A labelled matrix: rows are queries, columns are keys."""

    values: np.ndarray
    rows: list[str]
    cols: list[str]
    diverging: bool = False


def _no_other(text: str) -> Analysis:
    raise TypeError("figure_of draws views of one sentence; a view that reads another (DiffView) is drawn alone")


def figure_of(view: View, analysis: Analysis, checkpoint: Checkpoint, lang: str) -> go.Figure | figures.Heatmap:
    """The figure a view draws of one sentence's analysis in one language: what widgets.shared_figure keeps for
    every session (keyed by these arguments, which are all the figure reads)."""
    return view.figure(Context(analysis, checkpoint, _no_other), Translator(lang))


def kind_name(kind: AttentionKind, tr: Tr) -> str:
    return tr(f"kind.{AttentionKind(kind).value}")


class View:
    """Base class: a heatmap of matrix() with title() and style(); subclasses override what differs."""

    def matrix(self, ctx: ViewContext) -> Matrix:
        raise NotImplementedError

    def title(self, ctx: ViewContext, tr: Tr) -> str:
        return ""

    def style(self, ctx: ViewContext, tr: Tr) -> dict:
        """Extra arguments of figures.attention_heatmap (axis titles, height, ...)."""
        return {}

    def file_name(self) -> str:
        return type(self).__name__.removesuffix("View").lower()

    def figure(self, ctx: ViewContext, tr: Tr) -> figures.Heatmap:
        m = self.matrix(ctx)
        style = {"diverging": m.diverging, **self.style(ctx, tr)}
        return figures.attention_heatmap(m.values, m.rows, m.cols, tr, self.title(ctx, tr), **style)

    def csv(self, ctx: ViewContext) -> str:
        m = self.matrix(ctx)
        return to_csv(m.values, m.rows, m.cols)


@dataclass(frozen=True)
class KindHeadView(View):
    """A view of one head; `slug` names its CSV file."""

    head: HeadId
    slug = ""
    title_key = "view.head"

    def title(self, ctx: ViewContext, tr: Tr) -> str:
        h = self.head
        return tr(self.title_key, kind=kind_name(h.kind, tr), layer=h.layer, head=h.head)

    def file_name(self) -> str:
        h = self.head
        return f"{self.slug}{AttentionKind(h.kind).value}_L{h.layer}_H{h.head}"


@dataclass(frozen=True)
class HeadView(KindHeadView):
    """One head of one layer: (T_q, T_k)."""

    def matrix(self, ctx: ViewContext) -> Matrix:
        h = self.head
        rows, cols = ctx.analysis.labels(h.kind)
        return Matrix(ctx.analysis.maps(h.kind)[h.layer, h.head], rows, cols)


@dataclass(frozen=True)
class OverviewView(View):
    """Every layer and head of one kind, tiled; the highlighted head is framed."""

    kind: AttentionKind
    highlight: HeadId | None = None

    def matrix(self, ctx: ViewContext) -> Matrix:
        maps = ctx.analysis.maps(self.kind)  # (L, H, T_q, T_k)
        L, H, Tq, Tk = maps.shape
        rows, cols = ctx.analysis.labels(self.kind)
        labels = [f"L{layer} H{head} · {rows[q]}" for layer in range(L) for head in range(H) for q in range(Tq)]
        return Matrix(maps.reshape(L * H * Tq, Tk), labels, cols)

    def title(self, ctx: ViewContext, tr: Tr) -> str:
        L, H = ctx.analysis.maps(self.kind).shape[:2]
        return tr("view.overview", kind=kind_name(self.kind, tr), layers=L, heads=H)

    def figure(self, ctx: ViewContext, tr: Tr) -> go.Figure:
        framed = None if self.highlight is None else (self.highlight.layer, self.highlight.head)
        return figures.heads_overview(ctx.analysis.maps(self.kind), tr, self.title(ctx, tr), highlight=framed)

    def file_name(self) -> str:
        return f"{AttentionKind(self.kind).value}_all_heads"


@dataclass(frozen=True)
class FocusView(View):
    """One query row in every layer and head: (L·H, T_k); ★ marks the probe's best heads."""

    kind: AttentionKind
    query: int

    def matrix(self, ctx: ViewContext) -> Matrix:
        maps = ctx.analysis.maps(self.kind)
        H = maps.shape[1]
        marks = probe_marks(ctx.checkpoint, self.kind)
        rows = []
        for i in range(maps.shape[0] * H):
            head = HeadId(self.kind, *divmod(i, H))
            star = f" ★{marks[head]:.2f}" if head in marks else ""
            rows.append(f"L{head.layer} H{head.head}{star}")
        return Matrix(token_focus(maps, self.query), rows, ctx.analysis.labels(self.kind)[1])

    def title(self, ctx: ViewContext, tr: Tr) -> str:
        token = ctx.analysis.labels(self.kind)[0][self.query]
        return tr(f"view.focus.{AttentionKind(self.kind).value}", token=token)

    def style(self, ctx: ViewContext, tr: Tr) -> dict:
        return {"row_title": tr("fig.layer_head")}

    def file_name(self) -> str:
        return f"{AttentionKind(self.kind).value}_focus_{self.query}"


@dataclass(frozen=True)
class WordsView(KindHeadView):
    """One head with pieces merged into words (columns summed, rows averaged)."""

    slug = "words_"
    title_key = "view.words"

    def matrix(self, ctx: ViewContext) -> Matrix:
        h = self.head
        rows, cols = ctx.analysis.labels(h.kind)
        lang = target_language(ctx.checkpoint.card)  # target rows (and columns) merge by the target's writing
        kind = AttentionKind(h.kind)
        rg = word_groups(rows) if kind is AttentionKind.ENCODER else target_word_groups(rows, lang)
        cg = target_word_groups(cols, lang) if kind is AttentionKind.DECODER else word_groups(cols)
        merged = merge_words(ctx.analysis.maps(h.kind)[h.layer, h.head], rg, cg)
        return Matrix(merged, word_labels(rows, rg), word_labels(cols, cg))


@dataclass(frozen=True)
class DiffView(KindHeadView):
    """This sentence's head minus the same head on another sentence, on the positions they share."""

    other_text: str = ""
    slug = "diff_"

    def matrix(self, ctx: ViewContext) -> Matrix:
        h, a, b = self.head, ctx.analysis, ctx.other(self.other_text)
        d = difference(a.maps(h.kind), b.maps(h.kind))
        (ra, ka), (rb, kb) = a.labels(h.kind), b.labels(h.kind)
        return Matrix(d.delta[h.layer, h.head], diff_labels(ra, rb, d.rows), diff_labels(ka, kb, d.cols), True)

    def title(self, ctx: ViewContext, tr: Tr) -> str:
        return tr("view.diff")


@dataclass(frozen=True)
class ReplayView(View):
    """Decoding step `step` (1-based): every head's cross-attention row of one layer, (H, S)."""

    layer: int
    step: int

    def matrix(self, ctx: ViewContext) -> Matrix:
        rows = ctx.analysis.cross[self.layer, :, self.step - 1]
        return Matrix(rows, [f"H{h}" for h in range(rows.shape[0])], ctx.analysis.source_pieces)

    def title(self, ctx: ViewContext, tr: Tr) -> str:
        token = ctx.analysis.output_pieces[self.step - 1]
        return tr("view.replay", step=self.step, layer=self.layer, token=token)

    def style(self, ctx: ViewContext, tr: Tr) -> dict:
        return {
            "row_title": tr("fig.head"),
            "col_title": tr("fig.source"),
            "height": 120 + 40 * ctx.analysis.cross.shape[1],
        }

    def file_name(self) -> str:
        return f"replay_L{self.layer}_step{self.step}"


@dataclass(frozen=True)
class CandidatesView(View):
    """The five most probable next pieces at decoding step `step` (1-based)."""

    step: int

    def matrix(self, ctx: ViewContext) -> Matrix:
        a = ctx.analysis
        return Matrix(a.top_probs[self.step - 1][:, None], a.top_tokens[self.step - 1], [""])

    def title(self, ctx: ViewContext, tr: Tr) -> str:
        return tr("view.candidates")

    def figure(self, ctx: ViewContext, tr: Tr) -> go.Figure:
        m = self.matrix(ctx)
        return figures.bar_chart(
            m.rows, m.values[:, 0].tolist(), tr, self.title(ctx, tr), value_title=tr("fig.probability")
        )
