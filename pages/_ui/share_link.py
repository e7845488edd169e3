"""The share link: the session's view written into the address bar, and read back on a session's first run.

A link is typed or pasted by anyone, so every value is checked: a number is ASCII digits only ("²" and "①" are
digits to str.isdigit, not to int), a name must be one the app offers, and what is refused is named in the sidebar.
"""

from __future__ import annotations

import re

import streamlit as st

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint, CheckpointError

from . import cache
from .i18n import LANGUAGES
from .probe import default_head
from .session import BEAMS, EXAMPLES, MAX_SHARED_TEXT, MAX_TEXT, PICK
from .widgets import open_tab, set_head

_SMALL_INT = re.compile(r"[0-9]{1,4}")


def small_int(value: object) -> int | None:
    """A link's number: one to four ASCII digits, else None."""
    return int(value) if isinstance(value, str) and _SMALL_INT.fullmatch(value) else None


def _in(values, value):
    return value if value in values else None


def apply_share_link(choices: dict[str, str]) -> list[str]:
    """Set the session from the URL's parameters (first run of a session); returns the names refused.

    A head is checked against the linked checkpoint's shape; a linked head opens the explorer's
    all-heads tab on it.
    """
    ss, qp, refused = st.session_state, st.query_params, []

    def take(name: str, key: str, parse) -> None:
        if name in qp:
            value = parse(qp[name])
            if value is None:
                refused.append(name)
            else:
                ss[key] = value

    take("lang", "lang", lambda v: v if v in LANGUAGES else None)
    take("ckpt", "checkpoint", lambda v: v if v in choices else None)
    take("text", "text", lambda v: v[:MAX_TEXT])
    take("beam", "beam", lambda v: _in(BEAMS, small_int(v)))
    take("kind", f"{PICK}_kind", lambda v: AttentionKind(v) if v in {k.value for k in AttentionKind} else None)
    if "text" in qp:
        ss["example"] = ss["text"] if ss["text"] in EXAMPLES else EXAMPLES[0]
    kind = ss.get(f"{PICK}_kind")
    if not (isinstance(kind, AttentionKind) and choices):
        return refused + [name for name in ("layer", "head") if name in qp]  # without a kind they name no head
    path = choices.get(ss.get("checkpoint")) or next(iter(choices.values()))
    try:
        ckpt = cache.checkpoint(path)
    except CheckpointError:
        return refused
    head, bad = linked_head(qp, ckpt, kind)
    set_head(PICK, head, path)
    open_tab("explorer_tab", "overview")  # a linked head opens the all-heads view on it
    return refused + bad


def linked_head(qp, ckpt: Checkpoint, kind: AttentionKind) -> tuple[HeadId, list[str]]:
    """The head a link's "layer" and "head" name in this checkpoint, and the names refused (a part that is
    missing, not a number or not in the model is the picker's default)."""
    default = default_head(ckpt, kind)
    parts = {"layer": default.layer, "head": default.head}
    refused = []
    for name, limit in (("layer", ckpt.config.n_layers(kind)), ("head", ckpt.config.n_heads)):
        if name in qp:
            value = small_int(qp[name])
            if value is not None and value < limit:
                parts[name] = value
            else:
                refused.append(name)
    return HeadId(kind, parts["layer"], parts["head"]), refused


def share_link() -> None:
    """Write the session's view into the URL, so the address bar is a link that opens the same view."""
    ss, qp = st.session_state, st.query_params
    kind = ss.get(f"{PICK}_kind")
    wanted = {
        "lang": ss.get("lang"),
        "ckpt": ss.get("checkpoint"),
        "beam": ss.get("beam"),
        "text": ss.get("text") if len(str(ss.get("text", ""))) <= MAX_SHARED_TEXT else None,
        "kind": kind.value if isinstance(kind, AttentionKind) else None,
        "layer": ss.get(f"{PICK}_layer"),
        "head": ss.get(f"{PICK}_head"),
    }
    for name, value in wanted.items():
        if value is None:
            if name in qp:
                del qp[name]
        elif qp.get(name) != str(value):
            qp[name] = str(value)
