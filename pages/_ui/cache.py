"""Caching shared by every session: models (read-only), analyses (compact arrays, bounded).

Heatmaps are not cached: one builds in ~2 ms. What is worth keeping is the model call behind them, and the
plotly figure of every head (widgets.shared_figure, through memo): it costs a run ~10 ms, paid by every
session of a class that follows one view.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import fields
from typing import Any, TypeVar

import numpy as np
import streamlit as st
import torch

from transformer.analysis import Analysis
from transformer.options import DEFAULT, CallOptions

from . import slots
from .keys import call_key, identify
from .loading import MODELS, STAMP_S, checkpoint, forget_stamps, loaded, stamp
from .lru import BoundedCache, size_of

# what callers read as cache.X: the keys (keys.py) and the checkpoints (loading.py) live next door
__all__ = [
    "ANALYSIS_TTL_S",
    "MODELS",
    "STAMP_S",
    "YIELD_TO_MODEL_S",
    "analyse",
    "analyses",
    "call_key",
    "checkpoint",
    "forget_stamps",
    "limits",
    "loaded",
    "memo",
    "results",
    "stamp",
]

# Measured: ~100 kB per analysis of a 30-piece sentence with the shipped model, ~1.8 MB at 127 pieces.
ANALYSIS_TTL_S = 6 * 3600
# how long a page whose analysis is there waits for the batcher to finish the other sessions' sentences
# before drawing (a class that never stops typing still gets its heatmaps)
YIELD_TO_MODEL_S = 1.0


def limits() -> tuple[int, int]:
    """(entries, bytes) of each shared cache: $TRANSFORMER_CACHE_ENTRIES (2048), $TRANSFORMER_CACHE_MB (256)."""
    entries = int(os.environ.get("TRANSFORMER_CACHE_ENTRIES", "2048"))
    return entries, int(float(os.environ.get("TRANSFORMER_CACHE_MB", "256")) * 2**20)


def _freeze(a: Analysis) -> Analysis:
    for f in fields(a):
        v = getattr(a, f.name)
        if isinstance(v, np.ndarray):
            v.setflags(write=False)  # shared by every session
    return a


@st.cache_resource(show_spinner=False, max_entries=2)
def _analyses(entries: int, nbytes: int) -> BoundedCache[Analysis]:
    return BoundedCache(entries, nbytes, size_of, ANALYSIS_TTL_S)


def analyses() -> BoundedCache[Analysis]:
    """The server's one analysis cache."""
    return _analyses(*limits())


def analyse(
    path: str,
    text: str,
    beam: int = 1,
    options: CallOptions = DEFAULT,
    *,
    first: Callable[[Analysis], None] | None = None,
) -> Analysis:
    """The translation and every attention map of text, computed once for all sessions.

    A miss goes to the batcher (transformer.serving): sessions asking at the same moment share one
    padded model pass; with $TRANSFORMER_RAY_ADDRESS set, to the Ray Serve deployment there.
    first: a little output that needs only the result (the translation), run as soon as it is there,
    before this session takes a work slot back. A batch answers many sessions at once; without it they
    would show their translations one slot after another, each behind the others' heatmaps.
    """
    ckpt = checkpoint(path)
    beam = int(beam)

    backend = _backend()

    key = call_key(analyse, (ckpt, text, beam, options), {})

    def compute() -> Analysis:
        a = _freeze(backend.analyse(ckpt, text, beam, options))
        identify(a, ("analysis", *key))  # keys built from it (a view's figure) name it by this key
        return a

    # A backend that computes elsewhere (the batcher's thread, Ray) leaves this thread only waiting, for
    # its own request or another session's of the same key: its work slot goes to another session
    # meanwhile, whose request can then join the same batch. (Holding it while waiting for a session
    # that needs a slot back to finish would deadlock.)
    with slots.released() if backend.elsewhere else nullcontext():
        a = analyses().get(key, compute)
        if first is not None:
            first(a)
        # the model's thread first: drawing this page now would slow the sentences it still decodes
        backend.wait_idle(YIELD_TO_MODEL_S)
        return a


@st.cache_resource(show_spinner=False)
def _backend():
    """The server's one analysis backend: in-process batcher, or a client of the Ray Serve deployment."""
    from transformer.serving import backend_from_env

    return backend_from_env(arriving=slots.arriving)


T = TypeVar("T")


@st.cache_resource(show_spinner=False, max_entries=2)
def _results(entries: int, nbytes: int) -> BoundedCache[Any]:
    return BoundedCache(entries, nbytes, size_of, ANALYSIS_TTL_S)


def results() -> BoundedCache[Any]:
    """The server's one cache of page results (demos, statistics), bounded like the analyses."""
    return _results(*limits())


def memo(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """fn(*args, **kwargs), computed once for every session; the key is fn and the arguments it
    receives (pass the checkpoint, model or tokenizer of cache.checkpoint). Never mutate the result."""
    key = call_key(fn, args, kwargs)

    def run() -> T:
        with torch.inference_mode():
            return fn(*args, **kwargs)

    return results().get(key, run)
