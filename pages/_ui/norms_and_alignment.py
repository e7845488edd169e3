"""The head lab's tabs for norm-weighted attention (Kobayashi et al. 2020) and word alignment from
cross-attention (naive and Shift-Att, Chen et al. 2020), with their views, SVG and CSV downloads.

The long computations (the disagreement over held-out sentences, the AER over the gold set) are plain
functions of transformer/inspection that report progress(fraction); they run in the background lane, off
the page threads, while the page shows their progress (research.computed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from transformer.analysis import Analysis
from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint
from transformer.inspection.alignment import (
    AerReport,
    AlignMethod,
    GoldSentence,
    align,
    cross_attention,
    gold_aer,
    load_gold,
    sentence_words,
)
from transformer.inspection.norms import Disagreement, disagreement, sentence_maps

from . import cache, figures, svg
from .export import csv_text
from .i18n import Translator
from .research import _heldout, computed
from .session import PICK, Subject
from .views import Matrix, Tr, View, kind_name
from .widgets import csv_button, head_picker, plot, svg_button

TABS = ("hlb.norms", "hlb.align")
NORM_SENTENCES = 100  # held-out sentences of the disagreement statement
KINDS = list(AttentionKind)
METHOD_LABEL = {AlignMethod.NAIVE: "naive", AlignMethod.SHIFT: "Shift-Att"}


def show(view: View, ctx, tr: Translator, key: str) -> None:
    """A view's figure with its CSV and SVG downloads."""
    fig = view.figure(ctx, tr)
    plot(fig, key)
    c1, c2 = st.columns(2)
    with c1:
        csv_button(view.csv(ctx), view.file_name(), f"{key}_csv", tr)
    with c2:
        svg_button(
            view.svg(ctx, tr) if hasattr(view, "svg") else svg.figure_svg(fig), view.file_name(), f"{key}_svg", tr
        )


# ---------------------------------------------------------------- norm-weighted attention


@dataclass(frozen=True, eq=False)
class NormContext:
    """One sentence's raw and norm-weighted maps per kind, and the labels of each kind's rows and columns."""

    maps: dict  # kind -> (raw, normed), each (L, H, T_q, T_k)
    labels: dict  # kind -> (rows, cols)


@dataclass(frozen=True)
class NormView(View):
    """One head's raw weights α_ij, or ‖α_ij f(x_j)‖ (normed)."""

    head: HeadId
    normed: bool

    def matrix(self, ctx: NormContext) -> Matrix:
        raw, normed = ctx.maps[self.head.kind]
        values = (normed if self.normed else raw)[self.head.layer, self.head.head]
        rows, cols = ctx.labels[self.head.kind]
        return Matrix(values, list(rows), list(cols))

    def title(self, ctx: NormContext, tr: Tr) -> str:
        h = self.head
        key = "hlb.norm_title" if self.normed else "hlb.raw_title"
        return tr(key, kind=kind_name(h.kind, tr), layer=h.layer, head=h.head)

    def style(self, ctx: NormContext, tr: Tr) -> dict:
        if not self.normed:
            return {}
        top = float(np.nanmax(self.matrix(ctx).values)) or 1.0
        return {"zrange": (0.0, top), "value_title": tr("hlb.norm_value")}

    def file_name(self) -> str:
        h = self.head
        return f"{'norm' if self.normed else 'weights'}_{h.kind.value}_L{h.layer}_H{h.head}"


@dataclass(frozen=True)
class DisagreementView(View):
    """Per head of one kind, (L, H): the share of rows whose top key differs between α and ‖α f(x)‖."""

    kind: AttentionKind

    def matrix(self, ctx: Disagreement) -> Matrix:
        grid = ctx.shares[self.kind]
        return Matrix(grid, [f"L{la}" for la in range(grid.shape[0])], [f"H{h}" for h in range(grid.shape[1])])

    def title(self, ctx: Disagreement, tr: Tr) -> str:
        return tr("hlb.disagree_title", kind=kind_name(self.kind, tr))

    def style(self, ctx: Disagreement, tr: Tr) -> dict:
        L = ctx.shares[self.kind].shape[0]
        return {
            "row_title": tr("common.layer"),
            "col_title": tr("common.head"),
            "value_title": tr("hlb.share"),
            "height": 150 + 50 * L,
            "show_values": True,
        }

    def file_name(self) -> str:
        return f"norm_disagreement_{self.kind.value}"


def _norm_context(model, src: tuple[int, ...], dec: tuple[int, ...], labels: tuple) -> NormContext:
    return NormContext(sentence_maps(model, list(src), list(dec)), dict(labels))


def norms_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("hlb.norms_intro"))
    head = head_picker(PICK, ckpt, tr, kinds=KINDS)
    normed = st.toggle(tr("hlb.norm_toggle"), value=True, key="hlb_norm")
    ctx = norm_context(ckpt, a)
    show(NormView(head, normed), ctx, tr, "hlb_norm_map")
    raw, nw = ctx.maps[head.kind]
    differ = raw[head.layer, head.head].argmax(-1) != nw[head.layer, head.head].argmax(-1)
    with st.container(key="hlb_norm_sentence"):
        st.markdown(tr("hlb.norm_sentence", n=int(differ.sum()), rows=len(differ)))
    held = _heldout(ckpt, NORM_SENTENCES)
    d = computed(
        disagreement,
        (ckpt.model, ckpt.tokenizer, held.pairs),
        len(held.pairs),
        tr("hlb.running_norms", n=len(held.pairs)),
        "hlb_norms_progress",
        tr,
    )
    if d is None:
        return
    with st.container(key="hlb_norm_finding"):
        st.markdown(
            tr(
                "hlb.norm_finding",
                n=d.sentences,
                **{k.value: f"{d.overall(k):.1%}" for k in KINDS},
            )
        )
    for kind in KINDS:
        show(DisagreementView(kind), d, tr, f"hlb_disagree_{kind.value}")


# ---------------------------------------------------------------- alignment


@dataclass(frozen=True, eq=False)
class LinkContext:
    sentence: GoldSentence
    links: frozenset


@dataclass(frozen=True)
class LinksView(View):
    """One gold sentence's predicted links (layer, method) as a (target word × source word) matrix:
    2 predicted and sure, 1 predicted and possible, −1 predicted and wrong, −2 sure but missed, 0 else."""

    layer: int
    method: AlignMethod

    def matrix(self, ctx: LinkContext) -> Matrix:
        en, fr = ctx.sentence.en.split(), ctx.sentence.fr.split()
        gold = ctx.sentence.gold
        m = np.zeros((len(fr), len(en)))
        for s, t in gold.sure:
            m[t, s] = -2
        for s, t in ctx.links:
            m[t, s] = 2 if (s, t) in gold.sure else 1 if (s, t) in gold.possible else -1
        return Matrix(m, fr, en, diverging=True)

    def title(self, ctx: LinkContext, tr: Tr) -> str:
        return tr("hlb.links_title", method=METHOD_LABEL[self.method], layer=self.layer)

    def figure(self, ctx: LinkContext, tr: Tr) -> go.Figure:
        en, fr = ctx.sentence.en.split(), ctx.sentence.fr.split()
        gold = ctx.sentence.gold
        fig = go.Figure()
        for s, t in sorted(ctx.links):
            ok = (s, t) in gold.possible
            fig.add_trace(
                go.Scatter(
                    x=[s / max(len(en) - 1, 1), t / max(len(fr) - 1, 1)],
                    y=[1, 0],
                    mode="lines",
                    line=dict(color="#1f77b4" if ok else "#d62728", dash="solid" if ok else "dash"),
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
        for words, y in ((en, 1), (fr, 0)):
            fig.add_trace(
                go.Scatter(
                    x=[i / max(len(words) - 1, 1) for i in range(len(words))],
                    y=[y] * len(words),
                    mode="text",
                    text=[figures.esc(w) for w in words],
                    textposition="top center" if y else "bottom center",
                    showlegend=False,
                )
            )
        fig.update_layout(
            title=figures.esc(self.title(ctx, tr)),
            height=260,
            xaxis=dict(visible=False, range=[-0.08, 1.08]),
            yaxis=dict(visible=False, range=[-0.4, 1.4]),
            margin=dict(l=10, r=10, t=40, b=10),
        )
        return fig

    def svg(self, ctx: LinkContext, tr: Tr) -> str:
        return svg.links_svg(
            ctx.sentence.en.split(),
            ctx.sentence.fr.split(),
            set(ctx.links),
            self.title(ctx, tr),
            set(ctx.sentence.gold.possible),
        )

    def file_name(self) -> str:
        return f"alignment_{self.method.value}_L{self.layer}"


@dataclass(frozen=True)
class AerView(View):
    """AER per decoder layer (columns) and method (rows)."""

    def matrix(self, ctx: AerReport) -> Matrix:
        methods = list(AlignMethod)
        values = np.array([ctx.aer[m] for m in methods])
        return Matrix(values, [METHOD_LABEL[m] for m in methods], [f"L{la}" for la in range(values.shape[1])])

    def title(self, ctx: AerReport, tr: Tr) -> str:
        return tr("hlb.aer_title", n=ctx.sentences)

    def figure(self, ctx: AerReport, tr: Tr) -> go.Figure:
        m = self.matrix(ctx)
        layers = list(range(m.values.shape[1]))
        series = {name: (layers, list(row)) for name, row in zip(m.rows, m.values)}
        return figures.line_chart(
            series, self.title(ctx, tr), x_title=tr("common.layer"), y_title="AER", markers=True, y_range=(0, 1.02)
        )

    def csv(self, ctx: AerReport) -> str:
        m = self.matrix(ctx)
        return csv_text(["method", *m.cols], ([r, *v] for r, v in zip(m.rows, m.values)))

    def file_name(self) -> str:
        return "aer_per_layer"


def align_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("hlb.align_intro"))
    gold = cache.memo(load_gold)
    report = computed(
        gold_aer,
        (ckpt.model, ckpt.tokenizer, gold),
        len(gold),
        tr("hlb.running_aer", n=len(gold)),
        "hlb_aer_progress",
        tr,
    )
    if report is None:
        return
    best = {m: int(np.nanargmin(v)) for m, v in report.aer.items()}
    with st.container(key="hlb_aer_finding"):
        st.markdown(
            tr(
                "hlb.aer_finding",
                n=report.sentences,
                skipped=report.skipped,
                naive=f"{report.aer[AlignMethod.NAIVE][best[AlignMethod.NAIVE]]:.3f}",
                naive_layer=best[AlignMethod.NAIVE],
                shift=f"{report.aer[AlignMethod.SHIFT][best[AlignMethod.SHIFT]]:.3f}",
                shift_layer=best[AlignMethod.SHIFT],
            )
        )
    show(AerView(), report, tr, "hlb_aer")
    fitting = [g for g in gold if sentence_words(ckpt.tokenizer, g) is not None]
    if not fitting:
        st.info(tr("hlb.no_gold"))
        return
    ids = [g.id for g in fitting]
    if st.session_state.get("hlb_sentence") not in ids:
        st.session_state["hlb_sentence"] = ids[0]
    sid = st.selectbox(
        tr("hlb.sentence"), ids, key="hlb_sentence", format_func=lambda i: f"{i}: {fitting[ids.index(i)].en}"
    )
    sentence = fitting[ids.index(sid)]
    n_layers = ckpt.config.n_layers(AttentionKind.CROSS)
    if st.session_state.get("hlb_layer", 0) >= n_layers:
        st.session_state["hlb_layer"] = n_layers - 1
    layer = st.selectbox(tr("common.layer"), list(range(n_layers)), key="hlb_layer")
    method = AlignMethod(
        st.radio(
            tr("hlb.method"),
            [m.value for m in AlignMethod],
            key="hlb_method",
            format_func=lambda v: METHOD_LABEL[AlignMethod(v)],
            horizontal=True,
        )
    )
    src_ids, tgt_in, src_words, tgt_words = sentence_words(ckpt.tokenizer, sentence)
    cross = cache.memo(cross_attention, ckpt.model, src_ids, tgt_in)
    links = frozenset(align(cross[layer], method, src_words, tgt_words))
    show(LinksView(layer, method), LinkContext(sentence, links), tr, "hlb_links")
    st.caption(tr("hlb.links_caption"))


RENDER = {"hlb.norms": norms_tab, "hlb.align": align_tab}


def norm_context(ckpt: Checkpoint, a: Analysis) -> NormContext:
    """The sentence's raw and norm-weighted maps (the model's own translation, teacher-forced)."""
    labels = tuple((k, a.labels(k)) for k in KINDS)
    return cache.memo(_norm_context, ckpt.model, tuple(a.source_ids), tuple(a.decoder_ids), labels)


def explorer_toggle(tr: Translator) -> bool:
    """The explorer's switch between raw weights and ‖α f(x)‖."""
    return st.toggle(tr("hlb.norm_toggle"), value=False, key="hlb_explorer_norm")


def show_norm_head(head: HeadId, ctx, tr: Translator, key: str) -> None:
    """The explorer's head map weighted by the norm (ctx: the explorer's view context)."""
    show(NormView(head, True), norm_context(ctx.checkpoint, ctx.analysis), tr, key)
