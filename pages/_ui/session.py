"""Session state: what belongs to one session (st.session_state, under the keys below), its defaults, and the
subject a page works on. The sidebar (sidebar.py), the share link (share_link.py) and the checkpoints folder
(folder.py) have rooms of their own. Every session shares the models and analyses (see cache.py). Callbacks
are module functions: a page's script namespace is never captured by a widget.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from transformer.checkpoint import Checkpoint, CheckpointError
from transformer.corpus import SEED_SENTENCES
from transformer.layout import checkpoints_root

from . import cache
from .folder import checkpoint_choices, inside_root
from .i18n import DEFAULT_LANGUAGE, Translator

EXAMPLES = [
    SEED_SENTENCES[0][0],
    SEED_SENTENCES[1][0],
    "The cow didn't cross the road because it was too scared.",
    "The cow didn't cross the road because it was too narrow.",
    "The dogs didn't cross the bridge because they were too tired.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "The trophy didn't fit in the suitcase because it was too small.",
    "The horse stopped at the river since it was too flooded.",
    "The goat avoided the bridges because they were too dangerous.",
]
MAX_TEXT = 20_000  # characters kept from a paste; the model reads far fewer pieces (see the page's note)
MAX_SHARED_TEXT = 600  # a longer sentence is left out of the share link
BEAMS = range(1, 9)
# The main head picker of every page uses these keys, so a head chosen on one page is kept on the next.
PICK = "pick"
PERSISTENT = ("lang", "checkpoint", "text", "beam", f"{PICK}_kind", f"{PICK}_layer", f"{PICK}_head")


def translator() -> Translator:
    return Translator(st.session_state.get("lang", DEFAULT_LANGUAGE))


def follow_link(pages: dict) -> None:
    """A button asked to open another page (e.g. the head lab's "open in the explorer"): go there now."""
    target = st.session_state.pop("_goto", None)
    if target in pages:
        st.switch_page(pages[target])


@dataclass(frozen=True)
class Subject:
    """What a page works on: a checkpoint and a sentence, as chosen in the sidebar."""

    label: str
    path: str
    text: str
    beam: int


def subject() -> Subject:
    """The sidebar's checkpoint and sentence; without any checkpoint the page stops with a message."""
    choices = checkpoint_choices()
    if not choices:
        st.error(translator()("sidebar.no_checkpoint", root=str(checkpoints_root())))
        st.stop()
    ss = st.session_state
    label = ss.get("checkpoint")
    if label not in choices:
        label = next(iter(choices))
    return Subject(label, choices[label], str(ss.get("text", ""))[:MAX_TEXT], int(ss.get("beam", 1)))


def load(subj: Subject, tr: Translator) -> Checkpoint:
    """The subject's checkpoint; a checkpoint that fails validation stops the page with the loader's message."""
    if not inside_root(subj.path):
        st.error(tr("common.outside_root"))
        st.stop()
    try:
        if cache.loaded(subj.path):  # no spinner: its timer thread cost every run a thread start
            return cache.checkpoint(subj.path)
        with st.spinner(tr("common.loading")):
            return cache.checkpoint(subj.path)
    except CheckpointError as exc:
        st.error(tr("common.bad_checkpoint"))
        st.text(str(exc))
        st.stop()


def open_page(title_key: str) -> tuple[Translator, Subject, Checkpoint]:
    """The start of every page that works on the sidebar's checkpoint: its title, the subject, the model."""
    tr = translator()
    subj = subject()
    ckpt = load(subj, tr)
    st.title(tr(title_key))
    return tr, subj, ckpt
