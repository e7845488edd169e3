"""Caching shared by every session: models (read-only), analyses (compact arrays, bounded).

Figures are not cached: a heatmap builds in ~2 ms, while unpickling a cached one costs
~10 ms (measured; see README). What is worth keeping is the model call behind them.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import inspect
import os
import types
import weakref
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import streamlit as st
import torch

from transformer.analysis import Analysis
from transformer.checkpoint import Checkpoint, load_checkpoint
from transformer.layout import CARD_FILE, CONFIG_FILE, MODEL_FILE, TOKENIZER_FILE, tokenizer_files
from transformer.options import DEFAULT, CallOptions

from . import slots
from .lru import BoundedCache, size_of

# Measured: ~100 kB per analysis of a 30-piece sentence with the shipped model, ~1.8 MB at 127 pieces.
ANALYSIS_TTL_S = 6 * 3600
# how long a page whose analysis is there waits for the batcher to finish the other sessions' sentences
# before drawing (a class that never stops typing still gets its heatmaps)
YIELD_TO_MODEL_S = 1.0


def limits() -> tuple[int, int]:
    """(entries, bytes) of each shared cache: $TRANSFORMER_CACHE_ENTRIES (2048), $TRANSFORMER_CACHE_MB (256)."""
    entries = int(os.environ.get("TRANSFORMER_CACHE_ENTRIES", "2048"))
    return entries, int(float(os.environ.get("TRANSFORMER_CACHE_MB", "256")) * 2**20)


MODELS = 8  # a checkpoint and its snapshots (the head lab walks through them); ~5 MB each shipped


STAMP_S = 1.0  # how long one read of the file system (a weights' time, the folder's signature) serves every session
_stamps: BoundedCache[float] = BoundedCache(64, 2**16, size_of=lambda _: 1, ttl_s=STAMP_S)


def _stat(path: str) -> tuple:
    """(name, mtime_ns, size) of each file a checkpoint is read from: the weights, the card, the config and
    the tokenizer files (a missing one counts as absent)."""
    folder = Path(path)
    names = (MODEL_FILE, CARD_FILE, CONFIG_FILE, *(tokenizer_files(folder) or (TOKENIZER_FILE,)))
    out = []
    for name in names:
        try:
            st_ = (folder / name).stat()
        except OSError:
            out.append((name, None, None))
        else:
            out.append((name, st_.st_mtime_ns, st_.st_size))
    return tuple(out)


def stamp(path: str) -> tuple:
    """What identifies a loaded checkpoint: the modification time and size of its weights, card, config and
    tokenizer: a checkpoint rewritten in place, or its card updated (update_card), is loaded again (within
    STAMP_S; at once after forget_stamps). Read once per STAMP_S for the server: three reads per run, under 30 sessions
    each system call waited for the interpreter lock again (7 % of the server's time, py-spy)."""
    return _stamps.get(path, lambda: _stat(path))


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

    def compute() -> Analysis:
        return _freeze(backend.analyse(ckpt, text, beam, options))

    # A backend that computes elsewhere (the batcher's thread, Ray) leaves this thread only waiting, for
    # its own request or another session's of the same key: its work slot goes to another session
    # meanwhile, whose request can then join the same batch. (Holding it while waiting for a session
    # that needs a slot back to finish would deadlock.)
    with slots.released() if backend.elsewhere else nullcontext():
        a = analyses().get(call_key(analyse, (ckpt, text, beam, options), {}), compute)
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


# --- Keys from what a computation reads -------------------------------------------------------------
# A loaded checkpoint (and its model and tokenizer) stands for its directory and its files' times and sizes;
# every other argument is hashed by value, as st.cache_data does: arrays and tensors by content,
# dataclasses (CallOptions, HeadMask, ...) field by field, enums by value. A type it cannot hash is
# an error rather than a silently shared entry.
_IDENTITY: dict[int, tuple[weakref.ref, tuple]] = {}


def _register(ckpt: Checkpoint, identity: tuple) -> None:
    """The checkpoint, its model, its tokenizer and its card count as the checkpoint's identity (the card is
    read once with the weights and never changed; hashing a real-text model's 600 kB card by content cost
    ~0.2 s per page run). Entries go when the checkpoint does (a dict cannot be weakly referenced: the
    card's entry holds it, and the checkpoint's weakref callback drops them all)."""
    ids = [id(ckpt), id(ckpt.model), id(ckpt.tokenizer), id(ckpt.card)]

    def forget(_ref: weakref.ref) -> None:
        for i in ids:
            _IDENTITY.pop(i, None)

    ref = weakref.ref(ckpt, forget)
    for obj in (ckpt.model, ckpt.tokenizer):
        _IDENTITY[id(obj)] = (weakref.ref(obj), identity)
    _IDENTITY[id(ckpt)] = (ref, identity)
    card = ckpt.card
    _IDENTITY[id(card)] = (lambda: card, identity)


def _identity(value: Any) -> tuple | None:
    entry = _IDENTITY.get(id(value))
    return entry[1] if entry is not None and entry[0]() is value else None


def _feed(h: Any, value: Any) -> None:
    ident = _identity(value)
    if ident is not None:
        h.update(f"C{type(value).__qualname__}{ident!r};".encode())  # the model, its tokenizer, ...
    elif value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        h.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, enum.Enum):
        h.update(f"E{type(value).__qualname__}:{value.value!r};".encode())
    elif isinstance(value, np.ndarray):
        h.update(f"A{value.dtype}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous().reshape(-1)
        h.update(f"T{t.dtype}{tuple(value.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(f"L{type(value).__qualname__}{len(value)}[".encode())
        for v in value:
            _feed(h, v)
        h.update(b"]")
    elif isinstance(value, (set, frozenset)):
        h.update(f"S{len(value)}{{".encode())
        for d in sorted(_digest(v) for v in value):
            h.update(d)
        h.update(b"}")
    elif isinstance(value, dict):
        h.update(f"D{len(value)}{{".encode())
        for d in sorted(_digest(k) + _digest(v) for k, v in value.items()):
            h.update(d)
        h.update(b"}")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(f"O{type(value).__module__}.{type(value).__qualname__}(".encode())
        for f in fields(value):
            h.update(f.name.encode())
            _feed(h, getattr(value, f.name))
        h.update(b")")
    elif isinstance(value, Path):
        h.update(f"P{value};".encode())
    else:
        raise TypeError(f"cannot derive a cache key from a {type(value).__qualname__}")


def _digest(value: Any) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    _feed(h, value)
    return h.digest()


def _source(fn: types.FunctionType) -> bytes:
    """The function's source text (its constants included, unlike co_code); its code object's parts when
    the source cannot be read (a function built at run time)."""
    try:
        return inspect.getsource(fn).encode()
    except (OSError, TypeError):
        code = fn.__code__
        return code.co_code + repr((code.co_consts, code.co_names)).encode()


def call_key(fn: Callable, args: tuple, kwargs: dict) -> tuple[str, bytes]:
    """The cache key of fn(*args, **kwargs): the function's name and source, and its arguments' values.

    A lambda or a nested function is refused: it may read variables that its arguments do not show.
    """
    inner = inspect.unwrap(fn)  # a decorated function (torch.inference_mode, ...) is keyed by its own code
    if not isinstance(inner, types.FunctionType) or "<" in inner.__qualname__:
        raise TypeError(f"memo needs a module-level function, got {fn!r}")
    h = hashlib.blake2b(digest_size=20)
    h.update(_source(inner))
    _feed(h, args)
    _feed(h, kwargs)
    return f"{inner.__module__}.{inner.__qualname__}", h.digest()


def memo(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """fn(*args, **kwargs), computed once for every session; the key is fn and the arguments it
    receives (pass the checkpoint, model or tokenizer of cache.checkpoint). Never mutate the result."""
    key = call_key(fn, args, kwargs)

    def run() -> T:
        with torch.inference_mode():
            return fn(*args, **kwargs)

    return results().get(key, run)
