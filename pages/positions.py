"""Positional encoding: the §3.5 table, its waves and similarity, the relative-position property,
and what removing the positions does to the real model (order-blindness)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from pages._ui import cache, figures
from pages._ui.i18n import Translator
from pages._ui.lesson_views import OrderMapView, SimilarityView, TableView, WavesView
from pages._ui.sentence import sentence_analysis
from pages._ui.session import Subject, open_page
from pages._ui.widgets import check, head_picker, lazy_tabs, plot, show_view, table
from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint
from transformer.inspection import positions

TABS = ("table", "sentence", "order")
FORMULA = (
    r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right),\qquad "
    r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)"
)
ROTATION = (
    r"PE_{pos+k} = M_k\,PE_{pos},\qquad M_k = \operatorname{diag}\!\left(\begin{bmatrix}\cos k\omega_i & "
    r"\sin k\omega_i\\ -\sin k\omega_i & \cos k\omega_i\end{bmatrix}\right)_{i},\quad \omega_i = 10000^{-2i/d_{model}}"
)


def table_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    kind = ckpt.config.positional
    pe = positions.position_table(ckpt.model, ckpt.config.max_len)
    if pe is None:
        st.info(tr("positions.none"))
        return
    if kind == "learned":
        st.info(tr("positions.learned"))
    else:
        st.latex(FORMULA)
        st.markdown(tr("positions.formula_text", d_model=ckpt.config.d_model))
    n = min(len(pe), 64)
    c1, c2 = st.columns(2)
    with c1:
        show_view(TableView(n), pe, tr, "pe_table")
    with c2:
        show_view(SimilarityView(n), pe, tr, "pe_similarity")
    st.caption(tr("positions.similarity_text"))
    d = pe.shape[1]
    default = [0, 1, min(8, d - 2), min(d // 2, d - 2), d - 2]
    dims = st.multiselect(tr("positions.dims"), list(range(d)), default=sorted(set(default)), key="pe_dims")
    if dims:
        show_view(WavesView(tuple(dims), n), pe, tr, "pe_waves")
    if kind != "sinusoidal":
        return
    st.subheader(tr("positions.relative_title"))
    st.latex(ROTATION)
    k = st.slider(tr("positions.k"), 1, 32, 5, key="pe_k")
    error = positions.relative_position_error(pe, k)
    check("relative", tr("positions.relative_check", k=k, n=len(pe) - k), error, 1e-5, tr)
    st.caption(tr("positions.relative_text"))


def sentence_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    ids = ckpt.tokenizer.source_ids(subj.text, ckpt.config.max_len)
    emb, pe = positions.embedding_norms(ckpt.model, ids)
    pieces = ckpt.tokenizer.source_pieces(ids)
    series = {tr("positions.norm_embedding"): (list(range(len(ids))), emb.tolist())}
    if pe is not None:
        series[tr("positions.norm_pe")] = (list(range(len(ids))), pe.tolist())
    fig = figures.line_chart(
        series, tr("positions.norms_title"), x_title=tr("fig.position"), y_title="‖·‖", markers=True
    )
    plot(fig, "pe_norms", tr)
    st.text(" ".join(f"{i}:{p}" for i, p in enumerate(pieces)))
    ratio = float(np.median(emb) / np.median(pe)) if pe is not None else float("nan")
    st.markdown(tr("positions.norms_text", d_model=ckpt.config.d_model, scale=ckpt.config.d_model**0.5, ratio=ratio))


def _reshuffle() -> None:
    st.session_state["pe_seed"] = int(st.session_state.get("pe_seed", 0)) + 1


def order_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    st.markdown(tr("positions.order_intro"))
    ss = st.session_state
    ss.setdefault("pe_seed", 0)
    c1, c2 = st.columns([1, 3])
    c1.button(tr("positions.shuffle"), on_click=_reshuffle, key="pe_shuffle")
    c2.markdown(tr("positions.seed", seed=ss["pe_seed"]))
    seed = int(ss["pe_seed"])
    demo = cache.memo(positions.order_blindness, ckpt.model, ckpt.tokenizer, subj.text, seed)
    st.caption(tr("positions.original"))
    st.text(" ".join(demo.pieces))
    st.caption(tr("positions.shuffled"))
    st.text(" ".join(demo.shuffled_pieces))
    if ckpt.config.positional == "none":
        st.info(tr("positions.order_none"))
    check("order_without", tr("positions.order_without"), demo.delta_without, 1e-5, tr)
    if ckpt.config.positional != "none":
        check("order_with", tr("positions.order_with"), demo.delta_with, 1e-5, tr, above=True)
    table(
        [
            {
                tr("positions.col_positions"): tr("positions.removed"),
                tr("positions.col_original"): demo.translation_without,
                tr("positions.col_shuffled"): demo.shuffled_translation_without,
            },
            {
                tr("positions.col_positions"): tr("positions.kept"),
                tr("positions.col_original"): demo.translation_with,
                tr("positions.col_shuffled"): demo.shuffled_translation_with,
            },
        ],
        "order_table",
        tr,
    )
    choice = head_picker("pe_order", ckpt, tr, default_kind=AttentionKind.ENCODER)
    c1, c2 = st.columns(2)
    with c1:
        show_view(OrderMapView(False, choice), demo, tr, "order_original")
    with c2:
        show_view(OrderMapView(True, choice), demo, tr, "order_shuffled")


RENDER = {"table": table_tab, "sentence": sentence_tab, "order": order_tab}


def page() -> None:
    tr, subj, ckpt = open_page("positions.title")
    st.markdown(tr("positions.intro", kind=ckpt.config.positional))
    sentence_analysis(subj, ckpt, tr, show=False)
    lazy_tabs("positions_tab", TABS, "positions.tab", tr, RENDER, subj, ckpt, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
