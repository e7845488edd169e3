"""The background lane: heavy memoised work (the ablation ranking, the coreference probe) runs here, off the
page threads and holding no work slot, once per key for every session, and reports how far it has come.

A page asks `start(fn, *args)`: the value if the shared results cache (cache.memo) holds it, else None after
queueing the job (once per key, whoever asks). It then shows `progress(...)`, a fragment that polls the job
every POLL_S seconds and reruns the page when the value is there. The worker threads never call st.*: they
only update the job's counters, which the page reads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
import torch

from . import cache
from .i18n import Translator

WORKERS = int(os.environ.get("TRANSFORMER_BACKGROUND_WORKERS", "1"))  # heavy jobs at once, for the server
POLL_S = 0.5  # how often a waiting page looks at its job
_MISSING = object()


@dataclass
class Job:
    """One computation in the lane: its progress (done of total) and, once finished, its future's result."""

    key: tuple
    future: Future = field(default_factory=Future)
    done: int = 0
    total: int = 0
    started: bool = False

    def report(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    @property
    def fraction(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 0.0


_pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="background")
_jobs: dict[tuple, Job] = {}
_lock = threading.Lock()


def _run(job: Job, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    job.started = True
    try:

        def compute() -> Any:
            with torch.inference_mode():
                return fn(*args, progress=job.report, **kwargs)

        job.future.set_result(cache.results().get(job.key, compute))
    except BaseException as exc:  # reaches the page that polls; the key is asked again on its next visit
        job.future.set_exception(exc)
    finally:
        with _lock:
            if _jobs.get(job.key) is job:
                del _jobs[job.key]


def job(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Job | None:
    """The job computing fn(*args, **kwargs) (queued now if none is), or None when its value is cached.

    fn takes a keyword `progress(done, total)`; the key is cache.memo's (the callback is not part of it)."""
    key = cache.call_key(fn, args, kwargs)
    with _lock:
        if cache.results().peek(key, _MISSING) is not _MISSING:
            return None
        running = _jobs.get(key)
        if running is not None:
            return running
        new = _jobs[key] = Job(key)
    _pool.submit(_run, new, fn, args, kwargs)
    return new


def start(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Job | None]:
    """(value, None) when fn(*args, **kwargs) is computed already (never waits); else (None, its job in the lane)."""
    key = cache.call_key(fn, args, kwargs)
    found = cache.results().peek(key, _MISSING)
    if found is not _MISSING:
        return found, None
    j = job(fn, *args, **kwargs)
    if j is None:  # finished between the two looks
        return cache.results().peek(key), None
    return None, j


def progress(j: Job, key: str, tr: Translator, label: str | None = None) -> None:
    """A progress bar for the job under container `key`, polled every POLL_S s; the page reruns when it ends.
    label (a catalogue text) says what is computed, before the lane's own words."""
    lead = f"{label} " if label else ""

    @st.fragment(run_every=POLL_S)
    def poll() -> None:
        with st.container(key=key):
            if j.future.done():
                exc = j.future.exception()
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
    from .lru import wait_s

    with _lock:
        running = list(_jobs.values())
    for j in running:
        try:
            j.future.result(timeout=wait_s() if timeout_s is None else timeout_s)
        except Exception:  # the page that polls shows it
            pass
    return bool(running)
