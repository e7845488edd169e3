"""Work slots: at most WORK_SLOTS page bodies (with their sidebars) run at once (the server's cores); the others wait
without holding the GIL, so runs finish one after another instead of all at the end, and the event
loop that sends their results keeps its share of the interpreter (measured with bench/bench_load.py).

A body that only waits for the model (the batcher computes in its own thread) gives its slot back
meanwhile: otherwise no more than WORK_SLOTS requests could ever meet in one batch.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

WORK_SLOTS = int(os.environ.get("TRANSFORMER_WORK_SLOTS", str(os.cpu_count() or 2)))
_slots = threading.BoundedSemaphore(WORK_SLOTS)
_held = threading.local()


@contextmanager
def work_slot() -> Iterator[None]:
    """Run the body holding one of the server's work slots."""
    _slots.acquire()
    _held.slot = True
    try:
        yield
    finally:
        if getattr(_held, "slot", False):
            _held.slot = False
            _slots.release()


@contextmanager
def released() -> Iterator[None]:
    """Give this thread's slot back while it only waits; take one again before going on."""
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
