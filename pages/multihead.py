"""Multi-head attention: each head's output, their concatenation, W_O, and how much each head contributes."""

from __future__ import annotations

import streamlit as st

from pages._ui import cache
from pages._ui.i18n import Translator, md_token
from pages._ui.lesson_views import ContributionView, Vectors, VectorsView
from pages._ui.query import model_inputs, pick_head_and_query
from pages._ui.sentence import sentence_analysis
from pages._ui.session import open_page
from pages._ui.widgets import check, show_view, table
from transformer.attention import AttentionKind
from transformer.inspection.heads import summarize_layer
from transformer.inspection.multihead import head_contributions

KINDS = list(AttentionKind)


def describe(summary, key_labels: list[str], tr: Translator) -> str:
    """One measured sentence per head: what most of its rows attend to."""
    if summary.pattern in ("spread", "varies"):
        return tr(f"multihead.pattern.{summary.pattern}", head=summary.head, entropy=summary.entropy)
    token = key_labels[summary.key] if summary.key is not None else ""
    return tr(f"multihead.pattern.{summary.pattern}", head=summary.head, share=summary.share, token=md_token(token))


def page() -> None:
    tr, subj, ckpt = open_page("multihead.title")
    st.latex(r"\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W_O + b_O")
    st.markdown(tr("multihead.intro", h=ckpt.config.n_heads, d_k=ckpt.config.d_k, d_model=ckpt.config.d_model))
    a = sentence_analysis(subj, ckpt, tr)
    choice, query = pick_head_and_query("mh_query", subj, ckpt, a, tr)
    src, dec = model_inputs(ckpt, a)
    c = cache.memo(head_contributions, ckpt.model, src, dec, choice.kind, choice.layer, query)
    st.subheader(tr("multihead.what_heads_do", layer=choice.layer))
    with st.container(key="head_sentences"):
        keys = a.labels(choice.kind)[1]
        for summary in summarize_layer(a.maps(choice.kind), choice.kind, choice.layer):
            st.markdown("- " + describe(summary, keys, tr))
    st.caption(tr("multihead.measured_note"))
    c1, c2 = st.columns([2, 1])
    with c1:
        show_view(VectorsView(Vectors.HEADS), c, tr, "mh_heads")
        show_view(VectorsView(Vectors.CONCAT), c, tr, "mh_concat")
    with c2:
        show_view(ContributionView(), c, tr, "mh_shares")
    show_view(VectorsView(Vectors.W_O), c, tr, "mh_w_o")
    st.markdown(tr("multihead.contribution_text"))
    table(
        [
            {
                tr("multihead.col_head"): h,
                tr("multihead.col_norm"): round(float(c.norms[h]), 4),
                tr("multihead.col_share"): f"{c.shares[h]:.1%}",
            }
            for h in range(len(c.norms))
        ],
        "mh_table",
        tr,
    )
    check("mh_reconstruction", tr("multihead.check_reconstruction"), c.reconstruction_error(), 1e-5, tr)
    check("mh_sum", tr("multihead.check_sum"), c.sum_error(), 1e-5, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
