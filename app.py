"""Attention explorer: the entry page (streamlit run app.py)."""

from __future__ import annotations

import streamlit as st

from pages.common import EXAMPLES, checkpoint_choices, sidebar_state

st.set_page_config(page_title="Attention Is All You Need — explorer", page_icon="🔍", layout="wide")

explorer = st.Page("pages/explorer.py", title="Attention explorer", icon="🔍", default=True)
nav = st.navigation([explorer])

sidebar_state()  # defaults before the widgets exist: the flagship sentence on a first visit

with st.sidebar:
    st.header("Model and sentence")
    choices = checkpoint_choices()
    if not choices:
        st.error("No checkpoint found under checkpoints/. Train one with `python -m transformer train --preset coref`.")
        st.stop()
    labels = list(choices)
    st.selectbox("Checkpoint", labels, key="checkpoint", help="Any valid checkpoint directory under checkpoints/.")

    def _use_example() -> None:
        st.session_state["text"] = st.session_state["example"]

    st.selectbox("Examples", EXAMPLES, key="example", on_change=_use_example)
    st.text_area("Sentence (English)", key="text", height=110, max_chars=5000)
    st.slider("Beam size", 1, 8, key="beam", help="1 = greedy decoding; the paper uses 4 (§6.1).")

nav.run()
