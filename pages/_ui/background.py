"""The background lane: heavy memoised work (the ablation ranking, the coreference probe) runs here, off the
page threads and holding no work slot, once per key for every session, and reports how far it has come.

A page asks `start(fn, *args)`: the value if the shared results cache (cache.memo) holds it, else None after
queueing the job (once per key, whoever asks). It then shows `progress(...)`, a fragment that polls the job
every POLL_S seconds and reruns the page when the value is there. The worker threads never call st.*: they
only update the job's counters, which the page reads.

The lane is bounded: at most MAX_JOBS jobs wait, and a job no page has polled for ABANDON_S (its sessions
left) stops at its next progress report.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
import torch

from . import cache
from .i18n import Translator
from .lru import wait_s

WORKERS = int(os.environ.get("TRANSFORMER_BACKGROUND_WORKERS", "1"))  # heavy jobs at once, for the server
MAX_JOBS = 16  # jobs queued or running at once; one more is refused with a message (the lane is bounded)
FINISHED_KEEP = 8  # finished jobs whose values the lane keeps for the pages that polled them (see start)
ABANDON_S = 30.0  # a job no page has looked at for this long stops at its next progress report
POLL_S = 0.5  # how often a waiting page looks at its job
_MISSING = object()


class Abandoned(RuntimeError):
    """No page has polled the job for ABANDON_S (its sessions left), or the server is stopping."""


class LaneFull(RuntimeError):
    """MAX_JOBS jobs are queued or running: a new one is refused rather than queued without bound."""


@dataclass
class Job:
    """One computation in the lane: its progress (done of total) and, once finished, its future's result."""

    key: tuple
    future: Future = field(default_factory=Future)
    done: int = 0
    total: int = 0
    started: bool = False
    seen_at: float = field(default_factory=time.monotonic)
    value: Any = None  # the result, once finished (kept by the lane for the pages that polled it)

    def seen(self) -> None:
        """A page is waiting for it (start, the progress fragment): it is not abandoned."""
        self.seen_at = time.monotonic()

    def abandoned(self) -> bool:
        return _stopping.is_set() or time.monotonic() - self.seen_at > ABANDON_S

    def report(self, done: int, total: int) -> None:
        if self.abandoned():  # the computation stops here, between two of its steps
            raise Abandoned("no page is waiting for this computation any more")
        self.done, self.total = done, total

    @property
    def fraction(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 0.0


_pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="background")
_jobs: dict[tuple, Job] = {}  # queued or running
_finished: OrderedDict[tuple, Job] = OrderedDict()  # the last FINISHED_KEEP that succeeded
_lock = threading.Lock()
_stopping = threading.Event()


def _run(job: Job, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    job.started = True
    try:
        if job.abandoned():
            raise Abandoned("no page was waiting for this computation any more")

        def compute() -> Any:
            with torch.inference_mode():
                return fn(*args, progress=job.report, **kwargs)

        value = cache.results().get(job.key, compute)
    except BaseException as exc:  # reaches the page that polls; the key is asked again on its next visit
        _retire(job, None)
        job.future.set_exception(exc)
    else:
        _retire(job, value)  # kept before the page can see the job done: its rerun finds the value
        job.future.set_result(value)


def _retire(job: Job, value: Any) -> None:
    """The job leaves the queue; a successful one's value is kept among the last FINISHED_KEEP."""
    with _lock:
        if _jobs.get(job.key) is job:
            del _jobs[job.key]
        if value is not None:
            job.value = value
            _finished[job.key] = job
            while len(_finished) > FINISHED_KEEP:
                _finished.popitem(last=False)


def _refused(key: tuple, exc: Exception) -> Job:
    j = Job(key)
    j.future.set_exception(exc)
    return j


def start(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Job]:
    """(value, None) when fn(*args, **kwargs) is computed already (never waits); else (None, its job), queued now
    once per key whoever asks. fn takes a keyword `progress(done, total)`; the key is cache.memo's.

    A value the shared cache evicted before the page that waited for it reran is still the finished job's (no
    recomputation in a loop); a full lane gives a job that failed with LaneFull, which progress() shows."""
    key = cache.call_key(fn, args, kwargs)
    with _lock:
        found = cache.results().peek(key, _MISSING)
        if found is not _MISSING:
            return found, None
        finished = _finished.get(key)
        if finished is not None:
            return finished.value, None
        j = _jobs.get(key)
        if j is None:
            if len(_jobs) >= MAX_JOBS:
                return None, _refused(key, LaneFull(f"{MAX_JOBS} computations are already waiting"))
            j = _jobs[key] = Job(key)
            _pool.submit(_run, j, fn, args, kwargs)
    j.seen()
    return None, j


def progress(j: Job, key: str, tr: Translator, label: str | None = None) -> None:
    """A progress bar for the job under container `key`, polled every POLL_S s; the page reruns when it ends.
    label (a catalogue text) says what is computed, before the lane's own words."""
    lead = f"{label} " if label else ""

    @st.fragment(run_every=POLL_S)
    def poll() -> None:
        with st.container(key=key):
            j.seen()
            if j.future.done():
                exc = j.future.exception()
                if isinstance(exc, LaneFull):
                    st.warning(tr("background.full"))
                    return
                if exc is not None:
                    st.error(tr("background.failed", error=exc))
                    return
                st.rerun(scope="app")
            if not j.started:
                st.progress(0.0, text=lead + tr("background.queued"))
            else:
                st.progress(j.fraction, text=lead + tr("background.running", done=j.done, total=j.total or "…"))

    poll()


def drain(timeout_s: float | None = None) -> bool:
    """Wait (at most timeout_s each, $TRANSFORMER_CACHE_WAIT_S by default) for the jobs in the lane now;
    whether there were any. For tests and scripts: a page never waits, it polls."""
    with _lock:
        running = list(_jobs.values())
    for j in running:
        deadline = time.monotonic() + (wait_s() if timeout_s is None else timeout_s)
        while not j.future.done() and time.monotonic() < deadline:
            j.seen()  # a waiting caller counts as a page looking at the job, as the progress fragment does
            try:
                j.future.result(timeout=min(POLL_S, ABANDON_S / 2, max(deadline - time.monotonic(), 0.0)))
            except Exception:  # not done yet, or failed: the page that polls shows a failure
                pass
    return bool(running)


def forget() -> None:
    """Let go of the finished jobs' values (tests that want a computation done again clear the results cache too)."""
    with _lock:
        _finished.clear()


@atexit.register
def shutdown() -> None:
    """Stop the lane with the server: queued jobs are cancelled, a running one stops at its next report."""
    _stopping.set()
    _pool.shutdown(wait=False, cancel_futures=True)
