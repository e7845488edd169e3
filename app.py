"""Attention Is All You Need — the entry page (streamlit run app.py): a router, the sidebar, the share link."""

from __future__ import annotations

import streamlit as st
import torch

from pages import explorer
from pages._ui import session

torch.set_num_threads(1)  # measured: one thread per model call serves many sessions best (bench/bench_load.py)

st.set_page_config(page_title="Attention Is All You Need", page_icon="🔍", layout="wide")
tr = session.setup()
nav = st.navigation(
    {
        tr("nav.explore"): [
            st.Page(explorer.page, title=tr("nav.explorer"), icon="🔍", url_path="explore", default=True),
        ],
    }
)
session.sidebar(tr)
nav.run()
session.share_link()
