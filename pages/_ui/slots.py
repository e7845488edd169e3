"""Work slots: at most WORK_SLOTS page bodies (with their sidebars) run at once (the server's cores); the others wait
without holding the GIL, so runs finish one after another instead of all at the end, and the event
loop that sends their results keeps its share of the interpreter (measured with bench/bench_load.py).

A body that only waits for the model (the batcher computes in its own thread) gives its slot back
meanwhile: otherwise no more than WORK_SLOTS requests could ever meet in one batch. Bodies that have
started and not yet reached the model are counted (arriving): a new batch waits for their requests.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

WORK_SLOTS = int(os.environ.get("TRANSFORMER_WORK_SLOTS", str(os.cpu_count() or 2)))
_slots = threading.BoundedSemaphore(WORK_SLOTS)
_held = threading.local()
_arriving = [0]  # page runs started (holding or waiting for a slot) that have not yet waited for the model
_count = threading.Lock()


def arriving() -> int:
    """Page runs on their way to the model: the batcher waits for them before a new batch (transformer.serving)."""
    return _arriving[0]


def _arrived() -> None:
    if getattr(_held, "arriving", False):
        _held.arriving = False
        with _count:
            _arriving[0] -= 1


@contextmanager
def work_slot() -> Iterator[None]:
    """Run the body holding one of the server's work slots."""
    with _count:
        _arriving[0] += 1
    _held.arriving = True
    try:
        _slots.acquire()
        _held.slot = True
        yield
    finally:
        _arrived()  # a page that never asked for the model (or failed) is not on its way any more
        if getattr(_held, "slot", False):
            _held.slot = False
            _slots.release()


@contextmanager
def released() -> Iterator[None]:
    """Give this thread's slot back while it only waits; take one again before going on."""
    _arrived()
    if not getattr(_held, "slot", False):
        yield
        return
    _held.slot = False
    _slots.release()
    try:
        yield
    finally:
        _slots.acquire()
        _held.slot = True
