"""A batcher between the sessions and the model: requests that arrive within a few milliseconds
of each other run as one padded batch (``analyse_batch``), and each caller gets its own result.

- One worker thread runs the model; callers wait on a Future. It never touches Streamlit.
- The same (model, text, beam, options) asked while queued or running is computed once.
- A batch holds one model, one beam size and one set of options; it is capped in sentences and in
  padded pieces (rows × longest source), so memory stays bounded whatever arrives.
- A caller that stops waiting (a session that leaves) holds up nobody: its result is dropped.
- A request that fails gets its own exception; the others in its batch are unaffected.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import torch

from ..analysis import Analysis
from ..model import Transformer
from ..options import DEFAULT, CallOptions
from ..tokenizer import Tokenizer
from .batched import analyse_batch, batchable

log = logging.getLogger(__name__)

WINDOW_S = 0.005  # how long the first request of a batch waits for others
MAX_SENTENCES = 32
MAX_PIECES = 8192  # sentences × beam × longest source, in pieces
# the worker's default intra-op threads: every core up to this (measured on 2 cores only; a batch's small
# matrices are not expected to gain from many more)
BATCH_THREADS = 4


@dataclass
class _Job:
    model: Transformer
    tokenizer: Tokenizer
    text: str
    beam: int
    options: CallOptions
    pieces: int
    key: tuple
    future: Future = field(default_factory=Future)

    @property
    def group(self) -> tuple:
        """What a batch must share: the model, the beam size and the options (alone when padding matters)."""
        alone = None if batchable(self.options) else id(self)
        return (id(self.model), id(self.tokenizer), self.beam, self.options, alone)


class Batcher:
    """submit(model, tokenizer, text, beam, options) -> Future[Analysis], computed in padded batches.

    Args:
        window_s: how long a batch waits, from its first request, for more.
        max_sentences, max_pieces: the caps of one batch.
        run: the batched computation (analyse_batch; tests pass a spy).
        threads: the worker thread's intra-op threads for a batch of several requests (torch's setting is
            per thread: the pages keep theirs). A batch of one runs on one thread: its matrices are a
            single row wide, and when the same cores also run a browser (one user on a laptop), two
            spinning OpenMP threads wait on each other behind it: with Chromium on the same 2 cores, a
            single sentence's analysis took 0.06 s on one thread against 0.14 s on two (README).
        single_threads: the threads of a batch of one (1).
    """

    def __init__(
        self,
        window_s: float = WINDOW_S,
        max_sentences: int = MAX_SENTENCES,
        max_pieces: int = MAX_PIECES,
        run: Callable[..., list[Analysis | Exception]] = analyse_batch,
        threads: int = 1,
        single_threads: int = 1,
    ) -> None:
        if max_sentences < 1 or max_pieces < 1:
            raise ValueError("a batch holds at least one sentence")
        self.window_s, self.max_sentences, self.max_pieces = window_s, max_sentences, max_pieces
        self._run, self.threads, self.single_threads = run, max(1, threads), max(1, single_threads)
        self._queue: list[_Job] = []
        self._inflight: dict[tuple, Future] = {}
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self.batches: list[int] = []  # size of each batch run (the last 1000), for tests and benches

    @classmethod
    def from_env(cls) -> Batcher:
        """Caps from $TRANSFORMER_BATCH_WINDOW_MS, $TRANSFORMER_BATCH_SENTENCES, $TRANSFORMER_BATCH_PIECES;
        $TRANSFORMER_BATCH_THREADS: the worker's intra-op threads (default: every core, at most BATCH_THREADS;
        the sessions of a batch only wait while it runs: at base size on 2 cores, 2 threads gave medians of
        1.6-2.0 s against 2.5-3.0 s with 1, bench/bench_load.py); $TRANSFORMER_BATCH_SINGLE_THREADS: those of a
        batch of one (default 1, see the class's docstring);
        $TRANSFORMER_LOG_BATCHES=1 logs each batch on stderr."""
        env = os.environ.get
        if env("TRANSFORMER_LOG_BATCHES") and not log.handlers:  # one line per batch on stderr (benches)
            log.addHandler(logging.StreamHandler())
            log.setLevel(logging.INFO)
        return cls(
            float(env("TRANSFORMER_BATCH_WINDOW_MS", WINDOW_S * 1000)) / 1000,
            int(env("TRANSFORMER_BATCH_SENTENCES", MAX_SENTENCES)),
            int(env("TRANSFORMER_BATCH_PIECES", MAX_PIECES)),
            threads=int(env("TRANSFORMER_BATCH_THREADS", str(min(os.cpu_count() or 1, BATCH_THREADS)))),
            single_threads=int(env("TRANSFORMER_BATCH_SINGLE_THREADS", "1")),
        )

    def submit(
        self,
        model: Transformer,
        tokenizer: Tokenizer,
        text: str,
        beam: int = 1,
        options: CallOptions = DEFAULT,
    ) -> Future:
        """The analysis of text, as a Future; the same request already queued or running is shared."""
        if not isinstance(text, str):
            raise TypeError("text must be a string")
        beam = int(beam)
        key = (id(model), id(tokenizer), text, beam, options)
        pieces = beam * len(tokenizer.source_ids(text, model.config.max_len))  # rows × source pieces
        with self._cv:
            future = self._inflight.get(key)
            if future is not None:
                return future
            job = _Job(model, tokenizer, text, beam, options, pieces, key)
            self._inflight[key] = job.future
            self._queue.append(job)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="transformer-batcher", daemon=True)
                self._thread.start()
            self._cv.notify()
        return job.future

    def analyse(
        self, model: Transformer, tokenizer: Tokenizer, text: str, beam: int = 1, options: CallOptions = DEFAULT
    ) -> Analysis:
        """submit(...).result(): the analysis, or the request's own exception."""
        return self.submit(model, tokenizer, text, beam, options).result()

    # --- the worker ----------------------------------------------------------------------------------

    def _take(self) -> list[_Job]:
        """Wait for a request, then up to window_s for others; return one batch (same group, capped)."""
        with self._cv:
            while not self._queue:
                self._cv.wait()
            deadline = time.monotonic() + self.window_s
            while len(self._queue) < self.max_sentences and (left := deadline - time.monotonic()) > 0:
                self._cv.wait(left)
            group = self._queue[0].group
            batch, rest = [], []
            for job in self._queue:
                if job.group == group and len(batch) < self.max_sentences and self._fits(batch, job):
                    batch.append(job)
                else:
                    rest.append(job)
            self._queue = rest
            return batch

    def _fits(self, batch: list[_Job], job: _Job) -> bool:
        if not batch:
            return True  # one request always runs, however long (the model cuts it to max_len)
        longest = max(j.pieces // j.beam for j in [*batch, job])
        return (len(batch) + 1) * job.beam * longest <= self.max_pieces

    def _loop(self) -> None:
        while True:
            batch = self._take()
            first = batch[0]
            threads = self.threads if len(batch) > 1 else self.single_threads
            torch.set_num_threads(threads)  # this worker thread's own setting
            started = time.perf_counter()
            try:
                with torch.inference_mode():
                    results: list[Any] = self._run(
                        first.model, first.tokenizer, [j.text for j in batch], first.beam, first.options
                    )
                if len(results) != len(batch):
                    raise RuntimeError(f"the batch returned {len(results)} results for {len(batch)} requests")
            except BaseException as exc:  # noqa: BLE001  the worker outlives any failure
                results = [exc] * len(batch)
            self.batches = [*self.batches[-999:], len(batch)]
            log.info(
                "batch of %d (beam %d, %d threads) in %.3f s, %d waiting",
                len(batch),
                first.beam,
                threads,
                time.perf_counter() - started,
                len(self._queue),
            )
            with self._cv:
                for job in batch:
                    self._inflight.pop(job.key, None)
            for job, result in zip(batch, results):
                if isinstance(result, BaseException):
                    job.future.set_exception(result)
                else:
                    job.future.set_result(result)
