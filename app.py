"""Attention Is All You Need — the entry page (streamlit run app.py): a router, the sidebar, the share link."""

from __future__ import annotations

import os

import streamlit as st
import torch

from pages import arithmetic, explorer, headlab, masks, multihead, positions, training, variants
from pages._ui import session

# One intra-op thread per model call. At most one page body per core runs at once (session.work_slot),
# so the sessions keep the cores busy; 2 threads measured no better with 30 sessions (bench/bench_load.py).
torch.set_num_threads(int(os.environ.get("TRANSFORMER_TORCH_THREADS", "1")))

st.set_page_config(page_title="Attention Is All You Need", page_icon=":material/grid_view:", layout="wide")
tr = session.setup()
sections = {
    "nav.explore": [
        st.Page(
            explorer.page, title=tr("nav.explorer"), icon=":material/grid_view:", url_path="explorer", default=True
        ),
        st.Page(headlab.page, title=tr("nav.headlab"), icon=":material/science:", url_path="headlab"),
    ],
    "nav.learn": [
        st.Page(masks.page, title=tr("nav.masks"), icon=":material/visibility_off:", url_path="masks"),
        st.Page(positions.page, title=tr("nav.positions"), icon=":material/waves:", url_path="positions"),
        st.Page(arithmetic.page, title=tr("nav.steps"), icon=":material/calculate:", url_path="arithmetic"),
        st.Page(multihead.page, title=tr("nav.multihead"), icon=":material/view_column:", url_path="multihead"),
        st.Page(variants.page, title=tr("nav.variants"), icon=":material/compare_arrows:", url_path="variants"),
    ],
    "nav.train": [
        st.Page(training.page, title=tr("nav.training"), icon=":material/model_training:", url_path="training"),
    ],
}
nav = st.navigation({tr(name): pages for name, pages in sections.items()})
session.sidebar(tr)
session.follow_link({p.url_path or "explorer": p for pages in sections.values() for p in pages})  # default: ""
with session.work_slot():
    nav.run()
session.share_link()
