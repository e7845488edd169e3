"""Typed views of the lesson pages (masks, positions): each reads a measured result and yields its
matrix with labels, its figure and its CSV, like the explorer's views."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import plotly.graph_objects as go

from transformer.attention import HeadId
from transformer.inspection.masking import MASK_STAGES, LookAheadDemo, PaddingDemo, Stage
from transformer.inspection.positions import OrderDemo, wavelength

from . import figures
from .views import Matrix, Tr, View

STAGES = MASK_STAGES


def _cells(tr: Tr) -> dict:
    """Axis titles of a matrix of numbers (rows, columns, values)."""
    return {"row_title": tr("fig.row"), "col_title": tr("fig.column"), "value_title": tr("fig.value")}


def _axes(tr: Tr, col_key: str, **extra) -> dict:
    """Heatmap style of the positional-encoding views: positions down, col_key across, 420 px high."""
    return {
        "row_title": tr("fig.position"),
        "col_title": tr(col_key),
        "value_title": tr("fig.value"),
        "height": 420,
        **extra,
    }


@dataclass(frozen=True)
class StageOfHeadView(View):
    """One stage (QKᵀ/√d_k, masked, softmax) of one head; `prefix` names its CSV file."""

    stage: Stage
    head: HeadId
    prefix = ""

    def title(self, ctx, tr: Tr) -> str:
        return tr(f"stage.{self.stage}")

    def style(self, ctx, tr: Tr) -> dict:
        if self.stage in (Stage.WEIGHTS, Stage.OPEN):
            return {"diverging": False, "value_title": tr("stage.weights")}
        return {"diverging": True, "value_title": tr(f"stage.{self.stage}")}

    def file_name(self) -> str:
        return f"{self.prefix}_{self.stage}_L{self.head.layer}_H{self.head.head}"


@dataclass(frozen=True)
class PaddingStageView(StageOfHeadView):
    """A stage of an encoder head on the padded sentence of the batch."""

    prefix = "padding"

    def matrix(self, ctx: PaddingDemo) -> Matrix:
        b = ctx.padded
        return Matrix(ctx.stage(self.stage)[b, self.head.layer, self.head.head], ctx.pieces[b], ctx.pieces[b])


@dataclass(frozen=True)
class LookAheadView(StageOfHeadView):
    """A stage of a decoder self-attention head under teacher forcing; Stage.OPEN = weights without the mask."""

    prefix = "look_ahead"

    def matrix(self, ctx: LookAheadDemo) -> Matrix:
        return Matrix(ctx.stage(self.stage)[self.head.layer, self.head.head], ctx.targets, ctx.inputs)


@dataclass(frozen=True)
class LookAheadRowView(View):
    """One decoder row: its scaled scores, masked scores and softmax weights over the keys, side by side."""

    head: HeadId
    row: int

    def matrix(self, ctx: LookAheadDemo) -> Matrix:
        values = np.stack([ctx.stage(s)[self.head.layer, self.head.head, self.row] for s in STAGES])  # (3, T)
        return Matrix(values, [s.value for s in STAGES], ctx.inputs)

    def title(self, ctx: LookAheadDemo, tr: Tr) -> str:
        return tr("masks.row_title", row=self.row, token=ctx.targets[self.row])

    def figure(self, ctx: LookAheadDemo, tr: Tr) -> figures.Heatmap:
        m = self.matrix(ctx)
        return figures.attention_heatmap(
            m.values,
            [tr(f"stage.{s}") for s in STAGES],
            m.cols,
            tr,
            self.title(ctx, tr),
            diverging=True,
            show_values=True,
            height=260,
            row_title=tr("fig.stage"),
            value_title=tr("fig.value"),
        )


@dataclass(frozen=True)
class TableView(View):
    """The positional-encoding table: positions × dimensions (first n positions)."""

    n: int

    def matrix(self, ctx: np.ndarray) -> Matrix:
        table = ctx[: self.n]
        return Matrix(table, [str(p) for p in range(len(table))], [str(d) for d in range(table.shape[1])], True)

    def title(self, ctx: np.ndarray, tr: Tr) -> str:
        return tr("positions.table_title", n=min(self.n, len(ctx)), d=ctx.shape[1])

    def style(self, ctx: np.ndarray, tr: Tr) -> dict:
        bounded = np.abs(ctx[: self.n]).max() <= 1
        return _axes(tr, "fig.dimension", zrange=(-1.0, 1.0) if bounded else None)

    def file_name(self) -> str:
        return "positional_encoding"


@dataclass(frozen=True)
class SimilarityView(View):
    """PE · PEᵀ over the first n positions."""

    n: int

    def matrix(self, ctx: np.ndarray) -> Matrix:
        table = np.asarray(ctx[: self.n], dtype=np.float64)
        labels = [str(p) for p in range(len(table))]
        return Matrix(table @ table.T, labels, labels)

    def title(self, ctx: np.ndarray, tr: Tr) -> str:
        return tr("positions.similarity_title")

    def style(self, ctx: np.ndarray, tr: Tr) -> dict:
        sim = self.matrix(ctx).values
        return _axes(
            tr, "fig.position", zrange=(float(sim.min()), float(sim.max())), colorscale=figures.SEQUENTIAL_SIGNED
        )

    def file_name(self) -> str:
        return "position_similarity"


@dataclass(frozen=True)
class WavesView(View):
    """Chosen dimensions of the table as functions of the position, with their wavelengths."""

    dims: tuple[int, ...]
    n: int

    def matrix(self, ctx: np.ndarray) -> Matrix:
        table = ctx[: self.n]
        return Matrix(table[:, list(self.dims)].T, [f"dim {d}" for d in self.dims], [str(p) for p in range(len(table))])

    def figure(self, ctx: np.ndarray, tr: Tr) -> go.Figure:
        m = self.matrix(ctx)
        d_model = ctx.shape[1]
        series = {
            tr("positions.wave", dim=d, wavelength=wavelength(d // 2, d_model)): (range(m.values.shape[1]), row)
            for d, row in zip(self.dims, m.values)
        }
        return figures.line_chart(
            series, tr("positions.waves_title"), x_title=tr("fig.position"), y_title=tr("fig.value"), height=360
        )

    def file_name(self) -> str:
        return "waves"


@dataclass(frozen=True)
class OrderMapView(View):
    """Encoder attention with the positions removed: the original sentence's head, or the shuffled one's."""

    shuffled: bool
    head: HeadId

    def matrix(self, ctx: OrderDemo) -> Matrix:
        maps = ctx.shuffled_maps_without if self.shuffled else ctx.maps_without
        pieces = ctx.shuffled_pieces if self.shuffled else ctx.pieces
        return Matrix(maps[self.head.layer, self.head.head], pieces, pieces)

    def title(self, ctx: OrderDemo, tr: Tr) -> str:
        return tr("positions.shuffled_map" if self.shuffled else "positions.original_map")

    def file_name(self) -> str:
        return f"order_{'shuffled' if self.shuffled else 'original'}_L{self.head.layer}_H{self.head.head}"


@dataclass(frozen=True)
class StageView(View):
    """One stage of the step-by-step walkthrough as a small heatmap with its numbers."""

    stage: str

    def matrix(self, ctx) -> Matrix:
        s = ctx.stages[self.stage]
        values = np.atleast_2d(s.value)
        if self.stage in ("K", "V"):
            rows = ctx.key_labels
        elif self.stage == "heads":
            rows = [f"head {h}" for h in range(values.shape[0])]
        else:
            rows = [self.stage]
        if self.stage in ("scores", "scaled", "masked", "weights"):
            cols = ctx.key_labels
        else:
            cols = [str(i) for i in range(values.shape[1])]
        return Matrix(values, rows, cols, True)

    def title(self, ctx, tr: Tr) -> str:
        return tr(f"steps.stage.{self.stage}")

    def style(self, ctx, tr: Tr) -> dict:
        m = self.matrix(ctx)
        weights = self.stage == "weights"
        return {
            "diverging": not weights,
            "zrange": (0.0, 1.0) if weights else None,
            "show_values": m.values.size <= 160,
            "height": 90 + 24 * len(m.rows) + (60 if len(m.cols[0]) > 2 else 20),
            **_cells(tr),
        }

    def file_name(self) -> str:
        return f"step_{self.stage}"


@dataclass(frozen=True)
class ContributionView(View):
    """Each head's contribution to the layer's attention output for one token: its norm and share."""

    def matrix(self, ctx) -> Matrix:
        values = np.stack([ctx.norms, ctx.shares], axis=1)
        return Matrix(values, [f"head {h}" for h in range(len(values))], ["norm", "share"])

    def figure(self, ctx, tr: Tr) -> go.Figure:
        m = self.matrix(ctx)
        labels = [tr("fig.head_n", head=h) for h in range(len(m.rows))]
        return figures.bar_chart(
            labels,
            m.values[:, 1].tolist(),
            tr,
            tr("multihead.shares_title"),
            value_title=tr("multihead.share_axis"),
            highlight=int(np.argmax(m.values[:, 1])),
        )

    def file_name(self) -> str:
        return "head_contributions"


class Vectors(StrEnum):
    """What a VectorsView shows of one multi-head attention call."""

    HEADS = "heads"  # each head's output, (H, d_k)
    CONCAT = "concat"  # Concat(head_1, ..., head_h), (d_model,)
    W_O = "w_o"  # the output projection, (d_model, d_model)


@dataclass(frozen=True)
class VectorsView(View):
    """A stack of vectors (head outputs, their concatenation, W_O) as a heatmap."""

    what: Vectors

    def matrix(self, ctx) -> Matrix:
        if self.what == Vectors.HEADS:
            v = ctx.heads
            rows = [f"head {h}" for h in range(len(v))]
        elif self.what == Vectors.CONCAT:
            v = ctx.concat[None, :]
            rows = ["concat"]
        else:
            v = ctx.w_o
            rows = [str(i) for i in range(len(v))]
        return Matrix(v, rows, [str(i) for i in range(v.shape[1])], True)

    def title(self, ctx, tr: Tr) -> str:
        return tr(f"multihead.{self.what}_title")

    def style(self, ctx, tr: Tr) -> dict:
        rows = len(self.matrix(ctx).rows)
        return {"height": 380 if self.what == Vectors.W_O else 110 + 26 * rows, **_cells(tr)}

    def file_name(self) -> str:
        return f"multihead_{self.what}"


@dataclass(frozen=True)
class WindowMapView(View):
    """One encoder head with self-attention restricted to a window of r (index into the runs)."""

    run: int
    head: HeadId

    def matrix(self, ctx) -> Matrix:
        runs, pieces = ctx
        return Matrix(runs[self.run].maps[self.head.layer, self.head.head], pieces, pieces)

    def title(self, ctx, tr: Tr) -> str:
        runs, _ = ctx
        r = runs[self.run].window
        return tr("variants.window_map", r="∞" if r is None else r, layer=self.head.layer, head=self.head.head)
