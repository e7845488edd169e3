"""Scaled dot-product attention, step by step on the model's own numbers, and why it divides by √d_k."""

from __future__ import annotations

import streamlit as st

from pages._ui import cache, figures
from pages._ui.i18n import Translator, md_token
from pages._ui.lesson_views import StageView
from pages._ui.query import model_inputs, pick_head_and_query, query_rows
from pages._ui.sentence import sentence_analysis
from pages._ui.session import Subject, open_page
from pages._ui.widgets import check, lazy_tabs, plot, show_view, table
from transformer.analysis import Analysis
from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint
from transformer.inspection.arithmetic import walkthrough
from transformer.inspection.scaling import model_scaling, random_scaling

TABS = ("steps", "scaling")
KINDS = list(AttentionKind)
FORMULAS = {
    "q": r"q = x\,W_Q^{(i)} + b_Q^{(i)}",
    "K": r"K = Y\,W_K^{(i)} + b_K^{(i)}",
    "V": r"V = Y\,W_V^{(i)} + b_V^{(i)}",
    "scores": r"s = q\,K^{\top}",
    "scaled": r"s / \sqrt{d_k}",
    "masked": r"\tilde s_j = \begin{cases} s_j/\sqrt{d_k} & \text{mask}_j\\ -\infty & \text{otherwise}\end{cases}",
    "weights": r"a = \operatorname{softmax}(\tilde s)",
    "head": r"\mathrm{head}_i = a\,V",
    "heads": r"\mathrm{head}_1, \dots, \mathrm{head}_h",
    "concat": r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)",
    "attention": r"\mathrm{MultiHead} = \mathrm{Concat}(\dots)\,W_O + b_O",
    "residual": r"x + \mathrm{MultiHead}",
    "norm": r"\mathrm{LayerNorm}(x + \mathrm{MultiHead})",
    "cross": r"h_2 = \mathrm{LayerNorm}(h_1 + \mathrm{CrossAttention}(h_1, \mathrm{memory}))",
    "ffn": r"\mathrm{FFN}(h) = \max(0,\,h W_1 + b_1)\,W_2 + b_2",
    "ffn_swish": r"\mathrm{FFN}(h) = \mathrm{swish}(h W_1 + b_1)\,W_2 + b_2,\ \mathrm{swish}(z) = z\,\sigma(z)",
    "output": r"\mathrm{LayerNorm}(h + \mathrm{FFN}(h))",
}
FIGURES = {"q", "K", "V", "scores", "scaled", "masked", "weights", "head", "heads"}


def steps_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    choice, query = pick_head_and_query("steps_query", subj, ckpt, a, tr)
    src, dec = model_inputs(ckpt, a)
    w = cache.memo(walkthrough, ckpt.model, src, dec, choice, query, a.labels(choice.kind))
    token = query_rows(a, choice.kind)[0][query]
    st.markdown(tr(f"steps.where.{choice.kind.value}", token=md_token(token), d_k=w.d_k, d_model=ckpt.config.d_model))
    for name, stage in w.stages.items():
        with st.container(border=True, key=f"stage_{name}"):
            st.markdown(f"**{tr(f'steps.stage.{name}')}**")
            if name in FORMULAS:
                swish = name == "ffn" and ckpt.config.activation == "swish"  # opus-mt's feed-forward
                st.latex(FORMULAS["ffn_swish" if swish else name])
            if name in FIGURES:
                show_view(StageView(name), w, tr, f"stage_fig_{name}", csv=name in ("K", "V", "heads"))
            else:
                st.caption(tr("steps.vector", n=stage.value.size, norm=float((stage.value**2).sum() ** 0.5)))
            if stage.delta is not None:
                limit = 1e-5 if name == "output" else None
                check(f"step_{name}", tr("steps.delta"), stage.delta, limit, tr)
    check("step_final", tr("steps.final"), w.final_delta, 1e-5, tr)


def scaling_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("scaling.intro"))
    exp = _random()
    with_, without = tr("scaling.with"), tr("scaling.without")
    x = exp.d_ks
    charts = {
        "variance": ({without: (x, exp.variance), with_: (x, exp.variance_scaled)}, True),
        "entropy": ({without: (x, exp.entropy), with_: (x, exp.entropy_scaled)}, False),
        "max_weight": ({without: (x, exp.max_weight), with_: (x, exp.max_weight_scaled)}, False),
        "gradient": ({without: (x, exp.gradient), with_: (x, exp.gradient_scaled)}, False),
    }
    cols = st.columns(2) + st.columns(2)
    for col, (name, (series, log_y)) in zip(cols, charts.items()):
        with col:
            fig = figures.line_chart(
                series,
                tr(f"scaling.{name}"),
                x_title="d_k",
                y_title=tr(f"scaling.{name}_axis"),
                log_x=True,
                log_y=log_y,
                markers=True,
                height=300,
            )
            plot(fig, f"scaling_{name}", tr)
    st.caption(tr("scaling.random_note", n_keys=exp.n_keys))
    st.subheader(tr("scaling.model_title"))
    src, dec = model_inputs(ckpt, a)
    stats = cache.memo(model_scaling, ckpt.model, src, dec)
    table(
        [
            {
                tr("scaling.col_layer"): f"{tr(f'kind.{s.kind.value}')} L{s.layer}",
                tr("scaling.col_var"): round(s.variance, 2),
                tr("scaling.col_var_scaled"): round(s.variance_scaled, 2),
                tr("scaling.col_entropy"): round(s.entropy, 3),
                tr("scaling.col_entropy_unscaled"): round(s.entropy_unscaled, 3),
                tr("scaling.col_max"): round(s.max_weight, 3),
                tr("scaling.col_max_unscaled"): round(s.max_weight_unscaled, 3),
            }
            for s in stats
        ],
        "scaling_model",
        tr,
    )
    st.caption(tr("scaling.model_note", d_k=ckpt.config.d_k))


@st.cache_resource(show_spinner=False)
def _random():
    """The random experiment does not depend on any model: computed once per server."""
    return random_scaling()


RENDER = {"steps": steps_tab, "scaling": scaling_tab}


def page() -> None:
    tr, subj, ckpt = open_page("steps.title")
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V")
    a = sentence_analysis(subj, ckpt, tr)
    lazy_tabs("steps_tab", TABS, "steps.tab", tr, RENDER, subj, ckpt, a, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
