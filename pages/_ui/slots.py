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
# the longest a page waits for a slot before it says the server is busy (a class of 30 waits well under a second)
SLOT_WAIT_S = float(os.environ.get("TRANSFORMER_SLOT_WAIT_S", "60"))
_slots = threading.BoundedSemaphore(WORK_SLOTS)
_held = threading.local()
_arriving = [0]  # page runs started (holding or waiting for a slot) that have not yet waited for the model
_count = threading.Lock()


class ServerBusy(RuntimeError):
    """No work slot came free within SLOT_WAIT_S: the page says so instead of waiting for ever."""


def _acquire() -> None:
    if not _slots.acquire(timeout=SLOT_WAIT_S):
        raise ServerBusy(f"no work slot came free in {SLOT_WAIT_S:g} s")


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
        _acquire()
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
        _acquire()
        _held.slot = True
