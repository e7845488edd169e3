"""The confidence line beside a translation (transformer.inspection.confidence reads the decoder's probabilities);
its help says how well the line agreed with reality on this checkpoint's held-out sentences, where that was measured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from transformer.analysis import Analysis
from transformer.inspection.confidence import ConfidenceLevel, confidence, measured_agreement

from .i18n import Translator, corpus_name, md_literal

LEVEL_KEYS = {
    ConfidenceLevel.SURE: "conf.sure",
    ConfidenceLevel.PARTLY: "conf.partly",
    ConfidenceLevel.UNSURE: "conf.unsure",
}


def confidence_text(a: Analysis, tr: Translator) -> str | None:
    """The line's text for an analysis (None when the decoder produced nothing)."""
    c = confidence(a.output_probs)
    if c is None:
        return None
    low = round(c.low_share * c.n_pieces)
    return tr(
        "conf.line",
        level=tr(LEVEL_KEYS[c.level]),
        mean=c.mean_log_prob,
        typical=c.geometric_mean_prob,
        low=low,
        n=c.n_pieces,
        threshold=c.threshold,
    )


def confidence_help(card: Mapping[str, Any], tr: Translator) -> str:
    """What the line is, and what scripts/confidence_vs_chrf.py measured of it on this model (when it did)."""
    m = measured_agreement(card)
    if m is None:
        return tr("conf.help")
    measured = tr(
        "conf.measured",
        n=m.n_sentences,
        corpus=md_literal(corpus_name(m.corpus, tr)),
        r=m.pearson,
        least=m.least_confident_chrf,
        most=m.most_confident_chrf,
    )
    general = tr("conf.help") if m.pearson > 0 else tr("conf.help_no_agreement")
    return f"{general}\n\n{measured}"


def confidence_line(a: Analysis, tr: Translator, card: Mapping[str, Any]) -> None:
    text = confidence_text(a, tr)
    if text is not None:
        with st.container(key="confidence"):
            st.caption(text, help=confidence_help(card, tr))
