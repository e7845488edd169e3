"""Cache keys from what a computation reads: call_key(fn, args, kwargs) and the identities of loaded checkpoints.

A loaded checkpoint (and its model and tokenizer) stands for its directory and its files' times and sizes, and
a cached analysis for the key it was computed from (identify); every other argument is hashed by value, as
st.cache_data does: arrays and tensors by content, dataclasses (CallOptions, HeadMask, ...) field by field, enums
by value. A type it cannot hash is an error rather than a silently shared entry.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import inspect
import types
import weakref
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from transformer.checkpoint import Checkpoint

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


def identify(value: Any, identity: tuple) -> None:
    """A shared value that is never changed (an analysis in the server's cache) counts as the key it was
    computed from: a key built from it costs nothing, where hashing an analysis by content (its maps, and its
    pieces and candidates string by string) cost every figure key ~5 ms under a class's load (py-spy). The entry
    goes with the value."""
    i = id(value)
    _IDENTITY[i] = (weakref.ref(value, lambda _ref: _IDENTITY.pop(i, None)), identity)


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
    the source cannot be read (a function built at run time).

    Read once per function and code object, and kept on the function itself (so it goes with it: a module that
    Streamlit reloads brings new functions, read again). inspect.getsource stats the file and tokenises it, 0.6 ms
    a call; every memo and analysis key asked for it, several times a page run, which made a class of 30 about
    1.2 times slower than before keys read the source (bench/bench_versions.py, issue 60)."""
    code = fn.__code__
    kept = getattr(fn, "_key_source", None)
    if kept is not None and kept[0] is code:
        return kept[1]
    try:
        text = inspect.getsource(fn).encode()
    except (OSError, TypeError):
        text = code.co_code + repr((code.co_consts, code.co_names)).encode()
    fn._key_source = (code, text)
    return text


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
