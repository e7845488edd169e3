"""Attention Is All You Need — the entry page (streamlit run app.py): a router, the sidebar, the share link."""

from __future__ import annotations

import streamlit as st
import torch

from pages import arithmetic, explorer, masks, multihead, positions, variants
from pages._ui import session

torch.set_num_threads(1)  # measured: one thread per model call serves many sessions best (bench/bench_load.py)

st.set_page_config(page_title="Attention Is All You Need", page_icon="🔍", layout="wide")
tr = session.setup()
nav = st.navigation(
    {
        tr("nav.explore"): [
            st.Page(explorer.page, title=tr("nav.explorer"), icon="🔍", url_path="explore", default=True),
        ],
        tr("nav.learn"): [
            st.Page(masks.page, title=tr("nav.masks"), icon="🎭", url_path="mask-effects"),
            st.Page(positions.page, title=tr("nav.positions"), icon="〰️", url_path="positional-encoding"),
            st.Page(arithmetic.page, title=tr("nav.steps"), icon="🧮", url_path="scaled-dot-product"),
            st.Page(multihead.page, title=tr("nav.multihead"), icon="🧩", url_path="multi-head"),
            st.Page(variants.page, title=tr("nav.variants"), icon="⚖️", url_path="attention-variants"),
        ],
    }
)
session.sidebar(tr)
nav.run()
session.share_link()
