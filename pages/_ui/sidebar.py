"""The sidebar: language, checkpoint, examples, sentence and beam, and what was refused on the way."""

from __future__ import annotations

import streamlit as st

from transformer.beams import PAPER_ALPHA
from transformer.checkpoint import DECODING, Checkpoint, CheckpointError
from transformer.inspection import everyday_examples
from transformer.inspection.reorder import card_examples
from transformer.layout import checkpoints_root

from . import cache, lecture, roles
from .folder import checkpoint_choices, checkpoint_pairs, inside_root, refused_links
from .i18n import DEFAULT_LANGUAGE, LANGUAGES, Translator
from .session import BEAMS, EXAMPLES, PERSISTENT, translator
from .share_link import apply_share_link
from .widgets import ensure_choice


def setup() -> Translator:
    """Defaults before any widget exists; the share link on a session's first run; keys kept across pages."""
    ss = st.session_state
    roles.sign_in()  # a teacher key in the address bar, or the teacher's cookie (lecture mode only)
    lecture.join_from_link()
    for key in PERSISTENT:  # a widget's value is dropped when a page without it runs; keep these
        if key in ss:
            ss[key] = ss[key]
    choices = checkpoint_choices()
    if "_started" not in ss:
        ss["_started"] = True
        try:
            ss["_refused_params"] = apply_share_link(choices)
        except (ValueError, TypeError, KeyError):  # a link is anyone's text: refuse it whole rather than crash
            ss["_refused_params"] = sorted(st.query_params)
    ss.setdefault("lang", DEFAULT_LANGUAGE)
    ss.setdefault("text", EXAMPLES[0])
    ss.setdefault("example", EXAMPLES[0])
    ss.setdefault("beam", 1)
    if choices and ss.get("checkpoint") not in choices:  # first visit, or the folder has gone
        if ss.get("checkpoint") is not None:
            ss["_missing_checkpoint"] = ss["checkpoint"]
        ss["checkpoint"] = next(iter(choices))
    return translator()


def _loaded(path: str) -> Checkpoint | None:
    """The sidebar's checkpoint, or None when there is none or it cannot load (the page itself says why)."""
    if not path or not inside_root(path):
        return None
    try:
        return cache.checkpoint(path)
    except CheckpointError:
        return None


def examples_for(path: str) -> list[str]:
    """The sidebar's examples: the coreference pairs, then the held-out everyday sentences the model translates
    well and the held-out real sentences whose cross-attention reorders, that the checkpoint's card names (both
    found by computation: transformer/inspection/everyday_examples.py and reorder.py)."""
    ckpt = _loaded(path)
    if ckpt is None:
        return EXAMPLES
    out = list(EXAMPLES)
    for s in everyday_examples.card_examples(ckpt.card) + card_examples(ckpt.card):
        if s not in out:
            out.append(s)
    return out


def everyday_for(path: str) -> set[str]:
    """The everyday examples of the checkpoint's card (marked apart in the sidebar)."""
    ckpt = _loaded(path)
    return set() if ckpt is None else set(everyday_examples.card_examples(ckpt.card)) - set(EXAMPLES)


def _example_label(tr: Translator, text: str, everyday: set[str]) -> str:
    if text in EXAMPLES:
        return text
    return tr("conf.everyday_example", text=text) if text in everyday else tr("sidebar.reorder_example", text=text)


def beam_help(tr: Translator, path: str) -> str:
    """The beam slider's help: the length penalty α this checkpoint's beam search uses, and where it comes from."""
    ckpt = _loaded(path)
    alpha = PAPER_ALPHA if ckpt is None else ckpt.alpha
    why = tr("sidebar.beam_alpha_card" if ckpt is not None and DECODING in ckpt.card else "sidebar.beam_alpha_paper")
    return tr("sidebar.beam_help", alpha=f"{alpha:g}", why=why)


def _use_example() -> None:
    st.session_state["text"] = st.session_state["example"]


def sidebar(tr: Translator) -> None:
    ss = st.session_state
    with st.sidebar:
        st.selectbox(tr("sidebar.language"), list(LANGUAGES), format_func=LANGUAGES.get, key="lang")
        st.header(tr("sidebar.header"))
        choices = checkpoint_choices()
        if choices:
            pairs = checkpoint_pairs()
            st.selectbox(
                tr("sidebar.checkpoint"),
                list(choices),
                key="checkpoint",
                help=tr("sidebar.checkpoint_help"),
                format_func=lambda name: tr("zh.pair", name=name, pair=pairs[name]) if name in pairs else name,
            )
        else:  # the pages that need a model say so; the training page still works
            st.error(tr("sidebar.no_checkpoint", root=str(checkpoints_root())))
        path = choices.get(ss.get("checkpoint"), "")
        examples, everyday = examples_for(path), everyday_for(path)
        ensure_choice("example", examples, ss["text"] if ss.get("text") in examples else examples[0])
        st.selectbox(
            tr("sidebar.examples"),
            examples,
            key="example",
            on_change=_use_example,
            format_func=lambda s: _example_label(tr, s, everyday),
            help=(tr("sidebar.examples_help") + (" " + tr("conf.everyday_examples_help") if everyday else ""))
            if len(examples) > len(EXAMPLES)
            else None,
        )
        st.text_area(tr("sidebar.sentence"), key="text", height=110)
        st.slider(tr("sidebar.beam"), BEAMS.start, BEAMS.stop - 1, key="beam", help=beam_help(tr, path))
        refused = refused_links()
        if refused:
            st.warning(tr("sidebar.outside_links"))
            st.text("\n".join(refused))
        if ss.get("_refused_params"):
            st.warning(tr("sidebar.bad_params", names=", ".join(ss["_refused_params"])))
        if ss.get("_missing_checkpoint"):
            st.warning(tr("sidebar.missing_checkpoint"))
            st.text(str(ss.pop("_missing_checkpoint")))
