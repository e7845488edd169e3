"""Attention Is All You Need — the entry page (streamlit run app.py): a router, the sidebar, the share link."""

from __future__ import annotations

import os

import streamlit as st
import torch

from pages._ui import lecture, lecture_banner, session, share_link, sidebar
from pages._ui.entry import Navigation
from pages._ui.slots import ServerBusy, work_slot

# One intra-op thread per model call. At most one page body per core runs at once (slots.work_slot),
# so the sessions keep the cores busy; 2 threads measured no better with 30 sessions (bench/bench_load.py).
torch.set_num_threads(int(os.environ.get("TRANSFORMER_TORCH_THREADS", "1")))

st.set_page_config(page_title="Attention Is All You Need", page_icon=":material/grid_view:", layout="wide")
tr = sidebar.setup()
nav = Navigation(tr)  # the pages (catalogue titles, every url path) and the page this run opens
lecture.follow(nav)  # a student following a lecture takes the teacher's view (lecture mode only)
lecture.publish(nav)  # the teacher's view, as this run starts, goes to the class
try:
    with work_slot():  # the sidebar too: 30 sidebars drawn at once slowed the model's batches
        nav.sidebar()
        sidebar.sidebar(tr)
        lecture.sidebar_section(tr)
        drawn = st.sidebar.empty()
        session.follow_link(nav.pages)  # by module name, e.g. "explorer"
        lecture_banner.banner(tr)
        try:
            nav.current.run()
        finally:  # a page that stops early (an empty sentence) drew its view too
            lecture.publish(nav, announce=False)  # what the page completed, kept for late joiners
            lecture.marker(drawn, tr)
except ServerBusy:  # every slot held for SLOT_WAIT_S: say so, and let the reader try again
    st.warning(tr("common.server_busy"))
share_link.share_link()
