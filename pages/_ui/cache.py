"""Caching shared by every session: models (read-only), analyses (compact arrays, bounded).

Figures are not cached: a heatmap builds in ~2 ms, while unpickling a cached one costs
~10 ms (measured; see README). What is worth keeping is the model call behind them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Hashable
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import streamlit as st
import torch

from transformer.analysis import Analysis, analyse
from transformer.checkpoint import Checkpoint, load_checkpoint
from transformer.layout import MODEL_FILE
from transformer.options import DEFAULT, CallOptions

from .lru import BoundedCache

# Measured: ~100 kB per analysis of a 30-piece sentence with the shipped model, ~1.8 MB at 127 pieces.
ANALYSIS_TTL_S = 6 * 3600


def limits() -> tuple[int, int]:
    """(entries, bytes) of each shared cache: $TRANSFORMER_CACHE_ENTRIES (2048), $TRANSFORMER_CACHE_MB (256)."""
    entries = int(os.environ.get("TRANSFORMER_CACHE_ENTRIES", "2048"))
    return entries, int(float(os.environ.get("TRANSFORMER_CACHE_MB", "256")) * 2**20)


MODELS = 8  # a checkpoint and its snapshots (the head lab walks through them); ~5 MB each shipped


def stamp(path: str) -> float:
    """The weights' modification time: a checkpoint rewritten in place is loaded again."""
    p = Path(path) / MODEL_FILE
    return p.stat().st_mtime if p.exists() else 0.0


@st.cache_resource(show_spinner=False, max_entries=MODELS)
def _checkpoint(path: str, mtime: float) -> Checkpoint:
    ckpt = load_checkpoint(path)
    for p in ckpt.model.parameters():  # shared by every session: nothing may train or change it
        p.requires_grad_(False)
    return ckpt


def checkpoint(path: str) -> Checkpoint:
    """The model of a checkpoint directory, loaded once per server and never mutated (raises CheckpointError)."""
    return _checkpoint(path, stamp(path))


def analysis_size(a: Analysis) -> int:
    total = 0
    for f in fields(a):
        v = getattr(a, f.name)
        if isinstance(v, np.ndarray):
            total += v.nbytes
        elif isinstance(v, str):
            total += len(v)
        elif isinstance(v, list):
            total += 64 * len(v)
    return total + 1024


def _freeze(a: Analysis) -> Analysis:
    for f in fields(a):
        v = getattr(a, f.name)
        if isinstance(v, np.ndarray):
            v.setflags(write=False)  # shared by every session
    return a


@st.cache_resource(show_spinner=False, max_entries=2)
def _analyses(entries: int, nbytes: int) -> BoundedCache[Analysis]:
    return BoundedCache(entries, nbytes, analysis_size, ANALYSIS_TTL_S)


def analyses() -> BoundedCache[Analysis]:
    """The server's one analysis cache."""
    return _analyses(*limits())


def analysis(path: str, text: str, beam: int = 1, options: CallOptions = DEFAULT) -> Analysis:
    """The translation and every attention map of text, computed once for all sessions."""
    ckpt = checkpoint(path)
    key = (path, stamp(path), text, int(beam), options)

    def compute() -> Analysis:
        with torch.inference_mode():
            return _freeze(analyse(ckpt.model, ckpt.tokenizer, text, int(beam), options))

    return analyses().get(key, compute)


T = TypeVar("T")


def size_of(value: Any) -> int:
    """Bytes held by a result: numpy arrays, strings and containers of them (an estimate for the others)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(size_of(v) for v in value.values()) + 64 * len(value)
    if isinstance(value, (list, tuple)):
        return sum(size_of(v) for v in value) + 8 * len(value)
    if dataclasses.is_dataclass(value):
        return sum(size_of(getattr(value, f.name)) for f in fields(value)) + 64
    return 32


@st.cache_resource(show_spinner=False, max_entries=2)
def _results(entries: int, nbytes: int) -> BoundedCache[Any]:
    return BoundedCache(entries, nbytes, size_of, ANALYSIS_TTL_S)


def results() -> BoundedCache[Any]:
    """The server's one cache of page results (demos, statistics), bounded like the analyses."""
    return _results(*limits())


def memo(name: str, path: str, key: Hashable, compute: Callable[[Checkpoint], T]) -> T:
    """compute(checkpoint), once per (name, checkpoint, key) for every session; never mutate the result."""
    ckpt = checkpoint(path)

    def run() -> T:
        with torch.inference_mode():
            return compute(ckpt)

    return results().get((name, path, stamp(path), key), run)
