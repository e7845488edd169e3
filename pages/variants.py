"""Attention variants: additive, dot-product and general scoring side by side; restricted attention
on the real model's encoder; the paper's Table 1 beside measured time and memory."""

from __future__ import annotations

import numpy as np
import streamlit as st

from pages._ui import cache, figures
from pages._ui.i18n import Translator
from pages._ui.lesson_views import WindowMapView
from pages._ui.sentence import sentence_analysis
from pages._ui.session import Subject, open_page
from pages._ui.widgets import check, ensure_choice, head_picker, lazy_tabs, plot, show_view, table
from transformer.analysis import Analysis
from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint
from transformer.inspection import attention_variants

TABS = ("scoring", "restricted", "table1")
SCORERS = ("dot", "scaled_dot", "general", "additive")
FORMULAS = {
    "dot": r"q^{\top}k",
    "scaled_dot": r"\dfrac{q^{\top}k}{\sqrt{d_k}}",
    "general": r"q^{\top}W\,k",
    "additive": r"v^{\top}\tanh(W_1 q + W_2 k)",
}
TIMING_SIZES = [(16, 32), (64, 32), (256, 32), (64, 128), (256, 128)]


@st.cache_resource(show_spinner=False)
def _measurements():
    """Timings and saturation on random data: independent of any model, measured once per server."""
    av = attention_variants
    return av.time_scorers(TIMING_SIZES), av.saturation(), av.complexity()


def scoring_tab(ckpt: Checkpoint, tr: Translator) -> None:
    st.markdown(tr("variants.scoring_intro"))
    d_k = ckpt.config.d_k
    cols = st.columns(4)
    for col, name in zip(cols, SCORERS):
        with col:
            st.markdown(f"**{tr(f'variants.{name}')}**")
            st.latex(FORMULAS[name])
            st.caption(tr("variants.params", n=attention_variants.parameter_counts(d_k)[name], d_k=d_k))
    timing, saturation, _ = _measurements()
    series = {
        tr(f"variants.{name}"): ([f"n={n}, d_k={d}" for n, d in zip(timing.n, timing.d_k)], timing.ms[name])
        for name in timing.ms
    }
    c1, c2 = st.columns(2)
    with c1:
        plot(
            figures.line_chart(
                series, tr("variants.timing"), x_title=tr("variants.size"), y_title="ms", log_y=True, markers=True
            ),
            "variants_timing",
            tr,
        )
    with c2:
        sat = {tr(f"variants.{name}"): (saturation.d_ks, saturation.max_weight[name]) for name in SCORERS}
        plot(
            figures.line_chart(
                sat,
                tr("variants.saturation"),
                x_title="d_k",
                y_title=tr("scaling.max_weight_axis"),
                log_x=True,
                markers=True,
            ),
            "variants_saturation",
            tr,
        )
    st.caption(tr("variants.measured_here"))
    st.markdown(tr("variants.saturation_text"))


def restricted_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("variants.restricted_intro"))
    S = len(a.source_pieces)
    windows = [None, S, *range(S - 1, -1, -1)]
    runs = cache.memo(attention_variants.restricted_runs, ckpt.model, ckpt.tokenizer, a.text, windows)
    full = runs[0]
    flip = next((run.window for run in runs[2:] if run.pronoun != full.pronoun), None)
    if full.pronoun is None:
        st.info(tr("variants.no_pronoun"))
    elif flip is None:
        st.success(tr("variants.no_flip", pronoun=full.pronoun))
    else:
        st.warning(
            tr("variants.flip", r=flip, before=full.pronoun, after=next(r.pronoun for r in runs if r.window == flip))
        )
    wide = runs[1]
    delta = float(np.abs(wide.maps - full.maps).max())
    check("window_full", tr("variants.check_wide", S=S), delta, 0.0, tr)
    same = wide.translation == full.translation
    st.caption(tr("variants.same_translation" if same else "variants.other_translation"))
    table(
        [
            {
                tr("variants.col_r"): "∞" if run.window is None else run.window,
                tr("variants.col_pronoun"): run.pronoun or "—",
                tr("variants.col_translation"): run.translation,
            }
            for run in runs[1:]
        ],
        "restricted_table",
        tr,
    )
    options = list(range(1, len(runs)))
    ensure_choice("window_run", options, min(len(runs) - 1, 4))
    index = st.select_slider(
        tr("variants.window"), options, key="window_run", format_func=lambda i: str(runs[i].window)
    )
    choice = head_picker("window", ckpt, tr, default_kind=AttentionKind.ENCODER)
    c1, c2 = st.columns(2)
    with c1:
        show_view(WindowMapView(0, choice), (runs, a.source_pieces), tr, "window_full_map")
    with c2:
        show_view(WindowMapView(index, choice), (runs, a.source_pieces), tr, "window_map")


def table1_tab(tr: Translator) -> None:
    st.markdown(tr("variants.table1_intro"))
    rows = [
        ("self", "O(n²·d)", "O(1)", "O(1)"),
        ("recurrent", "O(n·d²)", "O(n)", "O(n)"),
        ("convolutional", "O(k·n·d²)", "O(1)", "O(log_k(n))"),
        ("restricted", "O(r·n·d)", "O(1)", "O(n/r)"),
    ]
    table(
        [
            {
                tr("variants.col_layer_type"): tr(f"variants.layer.{name}"),
                tr("variants.col_complexity"): c,
                tr("variants.col_sequential"): s,
                tr("variants.col_path"): p,
            }
            for name, c, s, p in rows
        ],
        "table1",
        tr,
    )
    _, _, measured = _measurements()
    full, restricted = tr("variants.full"), tr("variants.restricted", r=measured.window)
    panels = (
        ("time", "ms", measured.ms_full, measured.ms_restricted),
        ("memory", "MB", measured.mb_full, measured.mb_restricted),
    )
    for col, (name, unit, ys_full, ys_restricted) in zip(st.columns(2), panels):
        with col:
            series = {full: (measured.n, ys_full), restricted: (measured.n, ys_restricted)}
            fig = figures.line_chart(
                series, tr(f"variants.{name}_title"), x_title="n", y_title=unit, log_x=True, log_y=True, markers=True
            )
            plot(fig, f"table1_{name}", tr)
    st.caption(tr("variants.table1_note", d=64))


RENDER = {
    "scoring": lambda subj, ckpt, tr: scoring_tab(ckpt, tr),
    "restricted": lambda subj, ckpt, tr: restricted_tab(subj, ckpt, sentence_analysis(subj, ckpt, tr), tr),
    "table1": lambda subj, ckpt, tr: table1_tab(tr),
}


def page() -> None:
    tr, subj, ckpt = open_page("variants.title")
    lazy_tabs("variants_tab", TABS, "variants.tab", tr, RENDER, subj, ckpt, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
