"""The checkpoints folder as the sidebar sees it: which checkpoints it holds, their language pairs, the links that
lead out of it; scanned again only when the folder changes, and the scans shared by every session."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import streamlit as st

from transformer.layout import (
    CARD_FILE,
    DEFAULT_NAME,
    checkpoints_root,
    inside,
    list_checkpoints,
    outside_links,
    tree_signature,
)
from transformer.provenance import pair_label

from . import cache
from .lru import BoundedCache


# Keyed by the folders' modification times (tree_signature), so a new sentence does not rescan the folder
# (~12 ms); the time limit is a backstop for what the signature cannot see (a link's target changing).
@st.cache_data(ttl=60, max_entries=16, show_spinner=False)
def _scan(root: str, signature: str) -> dict[str, str]:
    root_path = Path(root)
    found = list_checkpoints(root_path)
    found.sort(key=lambda p: (p.name != DEFAULT_NAME, len(p.relative_to(root_path).parts), str(p)))
    return {str(p.relative_to(root_path)): str(p) for p in found}


@st.cache_data(ttl=60, max_entries=16, show_spinner=False)
def _links(root: str, signature: str) -> list[str]:
    return outside_links(root)


SIGNATURE_S = cache.STAMP_S  # how long one read of the folder's signature serves every session (the same rule)
_signatures: BoundedCache[str] = BoundedCache(16, 2**16, ttl_s=SIGNATURE_S)  # root -> signature


def _signature(root: Path) -> str:
    """tree_signature as one short string (st.cache_data hashes a 40-character key faster than the tuple),
    read at most once per SIGNATURE_S for the whole server: a checkpoint copied in shows within a second.
    Each read is ~150 system calls; read on every run, under 30 sessions each of those calls waited for
    the interpreter lock again, and the reads took a third of the sessions' script time (profiled with
    bench/bench_load.py)."""
    return _signatures.get(root, lambda: hashlib.sha1(repr(tree_signature(root)).encode()).hexdigest())


_insides: BoundedCache[bool] = BoundedCache(256, 2**20, size_of=lambda _: 1, ttl_s=SIGNATURE_S)


def inside_root(path: str) -> bool:
    """layout.inside(checkpoints_root(), path), decided at most once per SIGNATURE_S for the server, and again
    as soon as the folder's signature changes. Each decision resolves every link on the way (~30 system calls);
    made twice per run, under 30 sessions they took a tenth of the server's time (py-spy, bench/bench_load.py)."""
    root = checkpoints_root()
    return _insides.get((str(root), path, _signature(root)), lambda: inside(root, Path(path)))


def checkpoint_choices() -> dict[str, str]:
    """label -> path of every checkpoint under the root, the shipped default first (scanned again when a
    folder under the root changes)."""
    root = checkpoints_root()
    return _scan(str(root), _signature(root))


# A card's pair, kept while the card file is the same (its time and size): the folder's scans expire each minute,
# and reading every card again (2 MB of JSON for en-fr and en-zh, ~80 ms) made one session's run a minute slow.
_card_pairs: BoundedCache[str] = BoundedCache(256, 2**20, size_of=lambda _: 1)


def _pair(folder: str) -> str | None:
    card = Path(folder) / CARD_FILE
    try:
        stat = card.stat()
        return _card_pairs.get(
            (str(card), stat.st_mtime_ns, stat.st_size),
            lambda: pair_label(json.loads(card.read_text(encoding="utf-8"))),
        )
    except (OSError, ValueError):
        return None


@st.cache_data(ttl=60, max_entries=16, show_spinner=False)
def _pairs(root: str, signature: str) -> dict[str, str]:
    """label -> "en → zh" of every checkpoint under the root, from its card (an unreadable card: no pair)."""
    pairs = {label: _pair(path) for label, path in _scan(root, signature).items()}
    return {label: pair for label, pair in pairs.items() if pair is not None}


def checkpoint_pairs() -> dict[str, str]:
    """label -> the language pair ("en → zh") of every checkpoint the picker lists."""
    root = checkpoints_root()
    return _pairs(str(root), _signature(root))


def refused_links() -> list[str]:
    """Entries of the checkpoints folder that are links leading out of it (never listed nor read)."""
    root = checkpoints_root()
    return _links(str(root), _signature(root))


def refresh_choices() -> None:
    """Scan the checkpoints folder again on the next call (a run has just written a new checkpoint)."""
    _signatures.clear()
    _insides.clear()
    _scan.clear()
    _pairs.clear()
    _card_pairs.clear()
    cache.forget_stamps()
