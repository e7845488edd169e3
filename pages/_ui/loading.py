"""Checkpoints loaded once per server (read-only): the stamps that identify a checkpoint's files on disk,
and the st.cache_resource model loading behind cache.checkpoint."""

from __future__ import annotations

import weakref

import streamlit as st

from transformer.checkpoint import Checkpoint, load_checkpoint
from transformer.layout import checkpoint_stamp

from .keys import _register
from .lru import BoundedCache

MODELS = 8  # a checkpoint and its snapshots (the head lab walks through them); ~5 MB each shipped

STAMP_S = 1.0  # how long one read of the file system (a weights' time, the folder's signature) serves every session
_stamps: BoundedCache[float] = BoundedCache(64, 2**16, size_of=lambda _: 1, ttl_s=STAMP_S)


def stamp(path: str) -> tuple:
    """What identifies a loaded checkpoint: the modification time and size of its weights, card, config and
    tokenizer: a checkpoint rewritten in place, or its card updated (update_card), is loaded again (within
    STAMP_S; at once after forget_stamps). Read once per STAMP_S for the server: three reads per run, under 30 sessions
    each system call waited for the interpreter lock again (7 % of the server's time, py-spy)."""
    return _stamps.get(path, lambda: checkpoint_stamp(path))


def forget_stamps() -> None:
    """Read every checkpoint's time again on the next call (a run has just written one)."""
    _stamps.clear()


_LOADED: weakref.WeakValueDictionary[tuple[str, tuple], Checkpoint] = weakref.WeakValueDictionary()


@st.cache_resource(show_spinner=False, max_entries=MODELS)
def _checkpoint(path: str, mtime: tuple) -> Checkpoint:
    ckpt = load_checkpoint(path)
    for p in ckpt.model.parameters():  # shared by every session: nothing may train or change it
        p.requires_grad_(False)
    _register(ckpt, ("checkpoint", str(path), mtime))
    _LOADED[(path, mtime)] = ckpt
    return ckpt


def loaded(path: str) -> bool:
    """Whether checkpoint(path) is in memory already (its weights unchanged since): it needs no spinner."""
    return (path, stamp(path)) in _LOADED


def checkpoint(path: str) -> Checkpoint:
    """The model of a checkpoint directory, loaded once per server and never mutated (raises CheckpointError)."""
    return _checkpoint(path, stamp(path))
