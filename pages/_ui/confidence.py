"""The confidence line beside a translation (transformer.inspection.confidence reads the decoder's probabilities)."""

from __future__ import annotations

import streamlit as st

from transformer.analysis import Analysis
from transformer.inspection.confidence import ConfidenceLevel, confidence

from .i18n import Translator

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


def confidence_line(a: Analysis, tr: Translator) -> None:
    text = confidence_text(a, tr)
    if text is not None:
        with st.container(key="confidence"):
            st.caption(text, help=tr("conf.help"))
