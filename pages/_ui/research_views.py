"""Typed views of the head lab's research tabs (roles, importance and pruning, logit lens): each reads a
measured result and yields its matrix with labels, its figure and its CSV, like the explorer's views."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from transformer.attention import AttentionKind, HeadId
from transformer.inspection.importance import CURVE_KINDS, Importance, PruningCurve
from transformer.inspection.logit_lens import LogitLens
from transformer.inspection.roles import ROLE_KINDS, HeadRoles

from . import figures
from .views import Matrix, Tr, View, kind_name


def _grid_style(tr: Tr, value_title: str, L: int) -> dict:
    return {
        "row_title": tr("common.layer"),
        "col_title": tr("common.head"),
        "value_title": value_title,
        "height": 150 + 50 * L,
    }


def _with_text(fig: figures.Heatmap, text: np.ndarray) -> figures.Heatmap:
    """The heatmap with text written in its cells (badges, pieces)."""
    fig.trace.update(text=np.asarray(text, dtype=object).astype(str), texttemplate="%{text}", textfont=dict(size=10))
    return fig


@dataclass(frozen=True, eq=False)
class RolesResult:
    """What the roles view reads: the measured roles and the probe's coreference heads (head -> score)."""

    roles: HeadRoles
    coreference: dict[HeadId, float]


@dataclass(frozen=True)
class RoleGridView(View):
    """One role's share of rows per head of one kind, (L, H), each cell with the head's badges."""

    kind: AttentionKind
    role: str

    def matrix(self, ctx: RolesResult) -> Matrix:
        grid = ctx.roles.shares[self.kind][self.role]
        return Matrix(grid, [f"L{la}" for la in range(grid.shape[0])], [f"H{h}" for h in range(grid.shape[1])])

    def title(self, ctx: RolesResult, tr: Tr) -> str:
        return tr("hlab.roles_grid_title", role=tr(f"hlab.role.{self.role}"), kind=kind_name(self.kind, tr))

    def style(self, ctx: RolesResult, tr: Tr) -> dict:
        return _grid_style(tr, tr("hlab.share"), self.matrix(ctx).values.shape[0])

    def figure(self, ctx: RolesResult, tr: Tr) -> figures.Heatmap:
        m = self.matrix(ctx)
        badges = ctx.roles.badges(self.kind, ctx.coreference)
        text = np.vectorize(lambda v, b: f"{v:.2f} {b}".strip())(np.nan_to_num(m.values), badges)
        return _with_text(super().figure(ctx, tr), text)

    def file_name(self) -> str:
        return f"roles_{AttentionKind(self.kind).value}_{self.role}"


def role_choices(roles: HeadRoles, kind: AttentionKind) -> tuple[str, ...]:
    """The roles measured for this kind: its positional and rare-word ones, then the syntactic ones measured."""
    measured = roles.shares[AttentionKind(kind)]
    return tuple(r for r in ROLE_KINDS[AttentionKind(kind)]) + tuple(r for r in measured if r not in ROLE_KINDS[kind])


@dataclass(frozen=True)
class ImportanceView(View):
    """Michel et al.'s importance I_h of every head of one kind, (L, H)."""

    kind: AttentionKind

    def matrix(self, ctx: Importance) -> Matrix:
        grid = ctx.scores[self.kind]
        return Matrix(grid, [f"L{la}" for la in range(grid.shape[0])], [f"H{h}" for h in range(grid.shape[1])])

    def title(self, ctx: Importance, tr: Tr) -> str:
        return tr("hlab.importance_title", kind=kind_name(self.kind, tr), n=ctx.n_sentences)

    def style(self, ctx: Importance, tr: Tr) -> dict:
        top = max(float(v.max()) for v in ctx.scores.values()) or 1.0
        return {**_grid_style(tr, tr("hlab.importance"), ctx.scores[self.kind].shape[0]), "zrange": (0.0, top)}

    def figure(self, ctx: Importance, tr: Tr) -> figures.Heatmap:
        m = self.matrix(ctx)
        return _with_text(super().figure(ctx, tr), np.char.mod("%.3f", m.values))

    def file_name(self) -> str:
        return f"importance_{AttentionKind(self.kind).value}"


def curve_name(kind: AttentionKind | None, tr: Tr) -> str:
    return tr("hlab.all_heads") if kind is None else kind_name(kind, tr)


@dataclass(frozen=True)
class PruningView(View):
    """chrF (metric "chrf") or pronoun accuracy ("accuracy") against heads kept, a line per kind and one for all.

    Its matrix: a row per point of every curve: heads kept, heads pruned, chrF, pronoun accuracy."""

    metric: str = "chrf"

    def matrix(self, ctx: tuple[PruningCurve, ...]) -> Matrix:
        rows, values = [], []
        for c in ctx:
            name = "all" if c.kind is None else c.kind.value
            for i, p in enumerate(c.pruned):
                acc = c.accuracy[i]
                rows.append(f"{name} · {c.kept[i]}")
                values.append([c.kept[i], p, c.chrf[i], np.nan if acc is None else acc])
        cols = ["heads_kept", "heads_pruned", "chrf", "pronoun_accuracy"]
        return Matrix(np.asarray(values, dtype=float).reshape(-1, 4), rows, cols)

    def title(self, ctx, tr: Tr) -> str:
        return tr(f"hlab.pruning_title_{self.metric}")

    def figure(self, ctx: tuple[PruningCurve, ...], tr: Tr) -> go.Figure:
        series = {}
        for c in ctx:
            ys = c.chrf if self.metric == "chrf" else c.accuracy
            if any(y is None for y in ys):
                continue
            share = [k / len(c.order) for k in c.kept]
            series[f"{curve_name(c.kind, tr)} ({len(c.order)})"] = (share, list(ys))
        return figures.line_chart(
            series,
            self.title(ctx, tr),
            x_title=tr("hlab.kept_share"),
            y_title=tr(f"hlab.metric_{self.metric}"),
            markers=True,
            height=380,
        )

    def file_name(self) -> str:
        return "pruning_curves"


def ordered_curves(curves) -> tuple[PruningCurve, ...]:
    """Curves in CURVE_KINDS' order."""
    by = {c.kind: c for c in curves}
    return tuple(by[k] for k in CURVE_KINDS if k in by)


@dataclass(frozen=True)
class LensView(View):
    """Per decoder layer (rows) and step (columns): the probability the layer gives the piece the model wrote;
    each cell names the layer's own top piece."""

    def matrix(self, ctx: LogitLens) -> Matrix:
        return Matrix(ctx.written_prob, [f"L{la}" for la in range(ctx.n_layers)], ctx.steps)

    def title(self, ctx: LogitLens, tr: Tr) -> str:
        return tr("hlab.lens_title")

    def style(self, ctx: LogitLens, tr: Tr) -> dict:
        return {
            "row_title": tr("common.layer"),
            "col_title": tr("hlab.written"),
            "value_title": tr("fig.probability"),
            "height": 200 + 40 * ctx.n_layers,
        }

    def figure(self, ctx: LogitLens, tr: Tr) -> figures.Heatmap:
        text = np.array([[ctx.top_pieces[la][t][0] for t in range(len(ctx.steps))] for la in range(ctx.n_layers)])
        return _with_text(super().figure(ctx, tr), text)

    def file_name(self) -> str:
        return "logit_lens"


@dataclass(frozen=True)
class LensStepView(View):
    """One step: every layer's top pieces and their probabilities, (L, k) with the pieces as cell text."""

    step: int

    def matrix(self, ctx: LogitLens) -> Matrix:
        k = ctx.top_probs.shape[-1]
        return Matrix(
            ctx.top_probs[:, self.step], [f"L{la}" for la in range(ctx.n_layers)], [f"#{i + 1}" for i in range(k)]
        )

    def title(self, ctx: LogitLens, tr: Tr) -> str:
        return tr("hlab.lens_step_title", step=self.step + 1, piece=ctx.steps[self.step])

    def style(self, ctx: LogitLens, tr: Tr) -> dict:
        return {
            "row_title": tr("common.layer"),
            "col_title": tr("hlab.rank"),
            "value_title": tr("fig.probability"),
            "height": 200 + 40 * ctx.n_layers,
        }

    def figure(self, ctx: LogitLens, tr: Tr) -> figures.Heatmap:
        m = self.matrix(ctx)
        pieces = np.array([ctx.top_pieces[la][self.step] for la in range(ctx.n_layers)])
        text = np.vectorize(lambda p, v: f"{p} {v:.2f}")(pieces, m.values)
        return _with_text(super().figure(ctx, tr), text)

    def csv(self, ctx: LogitLens) -> str:
        from .export import csv_text

        k = ctx.top_probs.shape[-1]
        header = ["layer"] + [f"piece_{i + 1}" for i in range(k)] + [f"p_{i + 1}" for i in range(k)]
        rows = [
            [f"L{la}", *ctx.top_pieces[la][self.step], *ctx.top_probs[la, self.step].tolist()]
            for la in range(ctx.n_layers)
        ]
        return csv_text(header, rows)

    def file_name(self) -> str:
        return f"logit_lens_step{self.step + 1}"
