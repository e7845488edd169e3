"""A thread-safe LRU cache bounded by entry count, by bytes and by age, computing each key once.

The app keeps one per server (st.cache_resource): every session shares its entries,
and when 30 sessions ask for the same sentence at once, one computes it and the
others wait for that result instead of computing it again.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

import numpy as np
import torch

V = TypeVar("V")


def size_of(value: Any) -> int:
    """Bytes held by a cached value (the one estimator of every cache): arrays and tensors by their
    buffers, strings by length, containers, dataclasses and plotly figures by their parts plus a small overhead
    each."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, torch.Tensor):
        return value.element_size() * value.nelement()
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, dict):
        return sum(size_of(k) + size_of(v) for k, v in value.items()) + 64
    if isinstance(value, (list, tuple, set, frozenset)):
        return sum(size_of(v) for v in value) + 8 * len(value) + 56
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(size_of(getattr(value, f.name)) for f in dataclasses.fields(value)) + 64
    if callable(getattr(value, "to_plotly_json", None)):  # a plotly figure: its data and layout
        return size_of(value.to_plotly_json()) + 64
    return 32


class _OwnerLeft(Exception):
    """The thread computing a value stopped before it had one."""


class CacheWaitTimeout(TimeoutError):
    """Another session's computation of the same key did not finish within the bound
    ($TRANSFORMER_CACHE_WAIT_S seconds, 300 by default); the pages show a message instead."""

    def __init__(self, key: Hashable, waited_s: float) -> None:
        super().__init__(f"waited {waited_s:g} s for another computation of {key!r}; it has not finished")
        self.key, self.waited_s = key, waited_s


def wait_s() -> float:
    """How long a request waits for another session's computation of the same key: $TRANSFORMER_CACHE_WAIT_S (300)."""
    return float(os.environ.get("TRANSFORMER_CACHE_WAIT_S", "300"))


_MISSING = object()


class BoundedCache(Generic[V]):
    """get(key, compute) -> value; evicts least recently used entries beyond max_entries or max_bytes,
    and entries older than ttl_s seconds."""

    def __init__(
        self, max_entries: int, max_bytes: int, size_of: Callable[[V], int] = size_of, ttl_s: float | None = None
    ) -> None:
        self.max_entries, self.max_bytes, self.ttl_s = max_entries, max_bytes, ttl_s
        self.size_of = size_of
        self._entries: OrderedDict[Hashable, tuple[V, int, float]] = OrderedDict()
        self._pending: dict[Hashable, Future] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def _evict(self) -> None:
        if self.ttl_s is not None:  # every expired entry: a hit moves an old one away from the LRU end
            now = time.monotonic()
            for key in [k for k, (_, _, t) in self._entries.items() if now - t > self.ttl_s]:
                self._bytes -= self._entries.pop(key)[1]
        while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            _, (_, size, _) = self._entries.popitem(last=False)
            self._bytes -= size

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and (self.ttl_s is None or time.monotonic() - entry[2] <= self.ttl_s):
                self._entries.move_to_end(key)
                self.hits += 1
                return entry[0]
            future = self._pending.get(key)
            owner = future is None
            if owner:
                future = self._pending[key] = Future()
                self.misses += 1
        if not owner:
            bound = wait_s()
            try:
                return future.result(timeout=bound)
            except _OwnerLeft:  # the computing thread was stopped (its session left): compute here instead
                return self.get(key, compute)
            except TimeoutError as exc:  # concurrent.futures.TimeoutError is TimeoutError since 3.11
                if isinstance(exc, CacheWaitTimeout):
                    raise
                raise CacheWaitTimeout(key, bound) from None
        try:  # every stage (the computation, its size, the insertion) releases the key if it fails
            value = compute()
            size = self.size_of(value)
            with self._lock:
                self._pending.pop(key, None)
                if size <= self.max_bytes:
                    old = self._entries.pop(key, None)
                    if old is not None:
                        self._bytes -= old[1]
                    self._entries[key] = (value, size, time.monotonic())
                    self._bytes += size
                    self._evict()
        except BaseException as exc:
            with self._lock:
                self._pending.pop(key, None)
            # an error of the computation reaches every waiter; a stop of the owner's thread (a rerun,
            # a session closing: not an Exception) only makes the waiters try again themselves
            if not future.done():
                future.set_exception(exc if isinstance(exc, Exception) else _OwnerLeft())
            raise
        future.set_result(value)
        return value

    def peek(self, key: Hashable, default: Any = None) -> V | Any:
        """The cached value of key, or default: never computes, never waits for a computation in flight."""
        with self._lock:
            entry = self._entries.get(key, _MISSING)
            if entry is _MISSING or (self.ttl_s is not None and time.monotonic() - entry[2] > self.ttl_s):
                return default
            self._entries.move_to_end(key)
            return entry[0]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
