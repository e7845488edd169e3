"""A batcher between the sessions and the model: requests that arrive within a few milliseconds
of each other start as one padded batch, requests that arrive while it decodes join it at its next
step (continuous batching, ``RunningBatch``), and each caller gets its own result as soon as its
sentence ends.

- One worker thread runs the model; callers wait on a Future. It never touches Streamlit.
- The same (model, text, beam, α, options) asked while queued or running is computed once.
- A batch holds one model, one search (beam size, length penalty α) and one set of options; it is
  capped in sentences and in padded pieces (rows × longest source), so memory stays bounded whatever
  arrives. A request of another kind waiting behind it stops the batch taking more, so it drains and
  that one goes next.
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
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import torch

from ..analysis import Analysis
from ..beams import PAPER_ALPHA
from ..model import Transformer
from ..options import DEFAULT, CallOptions
from ..tokenizer import Tokenizer
from .running_batch import RunningBatch, analyse_batch, batchable
from .timeouts import result_timeout_s, timed_out

log = logging.getLogger(__name__)

WINDOW_S = 0.005  # how long the first request of a batch waits for others
ARRIVING_S = 0.2  # and, at most, for the requests that callers still on their way will send
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
    alpha: float
    pieces: int
    key: tuple
    future: Future = field(default_factory=Future)

    @property
    def group(self) -> tuple:
        """What a batch must share: the model, the search (beam size, α) and the options (alone when padding
        matters)."""
        alone = None if batchable(self.options) else id(self)
        return (id(self.model), id(self.tokenizer), self.beam, self.alpha, self.options, alone)


class Batcher:
    """submit(model, tokenizer, text, beam, options, alpha=) -> Future[Analysis], computed in padded batches.

    Args:
        window_s: how long a batch waits, from its first request, for more.
        max_sentences, max_pieces: the caps of one batch.
        run: a whole-batch computation (like analyse_batch; tests pass a spy), run once per batch with no
            joining; by default batches decode continuously (RunningBatch), and requests join them.
        threads: the worker thread's intra-op threads for a batch of several requests (torch's setting is
            per thread: the pages keep theirs). A batch of one runs on one thread: its matrices are a
            single row wide, and when the same cores also run a browser (one user on a laptop), two
            spinning OpenMP threads wait on each other behind it: with Chromium on the same 2 cores, a
            single sentence's analysis took 0.06 s on one thread against 0.14 s on two (README).
        single_threads: the threads of a batch of one (1).
        arriving: how many callers are on their way to a request (the app: page runs that have started
            and not yet asked for their analysis). A new batch waits for them, at most arriving_s from its
            first request: decoding while 30 pages are still being drawn before their requests made each
            of its first steps 7-14 times slower (they share the interpreter), and every sentence waits
            for those steps. A lone caller (nobody on the way) does not wait.
    """

    def __init__(
        self,
        window_s: float = WINDOW_S,
        max_sentences: int = MAX_SENTENCES,
        max_pieces: int = MAX_PIECES,
        run: Callable[..., list[Analysis | Exception]] | None = None,
        threads: int = 1,
        single_threads: int = 1,
        arriving: Callable[[], int] | None = None,
        arriving_s: float = ARRIVING_S,
    ) -> None:
        if max_sentences < 1 or max_pieces < 1:
            raise ValueError("a batch holds at least one sentence")
        self.window_s, self.max_sentences, self.max_pieces = window_s, max_sentences, max_pieces
        self._run, self.threads, self.single_threads = run, max(1, threads), max(1, single_threads)
        self.arriving, self.arriving_s = arriving or (lambda: 0), arriving_s
        self._queue: list[_Job] = []
        self._inflight: dict[tuple, Future] = {}
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()  # set while nothing is queued or decoding
        self._idle.set()
        self.batches: list[int] = []  # requests served by each batch, joiners included (the last 1000)

    @classmethod
    def from_env(cls, arriving: Callable[[], int] | None = None) -> Batcher:
        """Caps from $TRANSFORMER_BATCH_WINDOW_MS, $TRANSFORMER_BATCH_ARRIVING_MS, $TRANSFORMER_BATCH_SENTENCES,
        $TRANSFORMER_BATCH_PIECES;
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
            arriving=arriving,
            arriving_s=float(env("TRANSFORMER_BATCH_ARRIVING_MS", ARRIVING_S * 1000)) / 1000,
        )

    def submit(
        self,
        model: Transformer,
        tokenizer: Tokenizer,
        text: str,
        beam: int = 1,
        options: CallOptions = DEFAULT,
        *,
        alpha: float = PAPER_ALPHA,
    ) -> Future:
        """The analysis of text, as a Future; the same request already queued or running is shared.

        alpha: the beam search's length penalty (the checkpoint's own, Checkpoint.alpha)."""
        if not isinstance(text, str):
            raise TypeError("text must be a string")
        beam, alpha = int(beam), float(alpha)
        key = (id(model), id(tokenizer), text, beam, alpha, options)
        pieces = beam * len(tokenizer.source_ids(text, model.config.max_len))  # rows × source pieces
        with self._cv:
            future = self._inflight.get(key)
            if future is not None:
                return future
            job = _Job(model, tokenizer, text, beam, options, alpha, pieces, key)
            self._inflight[key] = job.future
            self._queue.append(job)
            self._idle.clear()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="transformer-batcher", daemon=True)
                self._thread.start()
            self._cv.notify()
        return job.future

    def analyse(self, *args: Any, timeout_s: float | None = None, **kwargs: Any) -> Analysis:
        """submit(...).result(): the analysis, or the request's own exception; AnalysisTimeout when none came
        within timeout_s (default $TRANSFORMER_RESULT_TIMEOUT_S, 120 s): a stalled worker never hangs a caller."""
        bound = result_timeout_s() if timeout_s is None else timeout_s
        future = self.submit(*args, **kwargs)
        try:
            return future.result(timeout=bound)
        except FutureTimeout:
            text = args[2] if len(args) > 2 else kwargs.get("text", "")
            raise timed_out("the batcher", str(text), bound) from None

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait, at most timeout_s, until nothing is queued or decoding; whether it is idle.

        A session whose result is there calls it before drawing its page: drawing in the same process
        takes the interpreter lock from the model's thread at every tensor operation, and made the
        decoding steps of the sentences still running 5-30 times slower (bench/bench_load.py)."""
        return self._idle.wait(timeout_s)

    # --- the worker ----------------------------------------------------------------------------------

    def _take(self) -> list[_Job]:
        """Wait for a request, then up to window_s for others; return one batch (same group, capped)."""
        with self._cv:
            while not self._queue:
                self._cv.wait()
            first = time.monotonic()
            deadline = first + self.window_s
            while len(self._queue) < self.max_sentences and (left := deadline - time.monotonic()) > 0:
                self._cv.wait(left)
            deadline = first + self.arriving_s  # then for those on their way (polled: they are not ours)
            while len(self._queue) < self.max_sentences and self.arriving() > 0:
                if (left := deadline - time.monotonic()) <= 0:
                    break
                self._cv.wait(min(left, 0.002))
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
            if self._run is None and batchable(batch[0].options):
                self._continuous(batch)
            else:
                self._whole(batch, self._run or analyse_batch)
            del batch  # idle, the worker holds no request, model or result (they may be freed)
            with self._cv:
                if not self._queue:
                    self._idle.set()

    def _threads(self, sentences: int) -> int:
        """This worker thread's intra-op threads for a batch of that many sentences (torch's setting is per thread)."""
        threads = self.threads if sentences > 1 else self.single_threads
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        return threads

    def _continuous(self, batch: list[_Job]) -> None:
        """Decode batch, letting requests of its group join between steps, each answered when it ends."""
        first = batch[0]
        started = time.perf_counter()
        jobs: dict[int, _Job] = {}  # admitted and not yet answered, by RunningBatch's handle
        served = initial = len(batch)
        steps = 0
        try:
            run = RunningBatch(first.model, first.tokenizer, first.beam, first.options, alpha=first.alpha)
            while batch:
                with torch.inference_mode():
                    jobs.update(zip(run.add([j.text for j in batch]), batch))
                batch = []
                self._deliver(jobs, run.done())
                while run.active and not batch:
                    self._threads(run.active)
                    with torch.inference_mode():
                        run.step()
                    steps += 1
                    self._deliver(jobs, run.done())
                    batch = self._joiners(first.group, run)
                    served += len(batch)
        except BaseException as exc:  # noqa: BLE001  the worker outlives any failure
            admitted = {id(j) for j in jobs.values()}
            waiting = {**{-1 - i: j for i, j in enumerate(batch) if id(j) not in admitted}, **jobs}
            self._deliver(waiting, dict.fromkeys(waiting, exc))
        self.batches = [*self.batches[-999:], served]
        log.info(
            "batch of %d (beam %d, %d joined while it ran) in %d steps, %.3f s, %d waiting",
            served,
            first.beam,
            served - initial,
            steps,
            time.perf_counter() - started,
            len(self._queue),
        )

    def _joiners(self, group: tuple, run: RunningBatch) -> list[_Job]:
        """Queued requests that may join the running batch now: its group, within the caps, and only
        while no request of another group waits before them (that one goes next: the batch drains)."""
        with self._cv:
            taken: list[_Job] = []
            _, width = run.rows_and_width()
            for job in self._queue:
                if job.group != group or run.active + len(taken) >= self.max_sentences:
                    break
                width = max(width, job.pieces // job.beam)
                if (run.active + len(taken) + 1) * job.beam * width > self.max_pieces:
                    break
                taken.append(job)
            del self._queue[: len(taken)]
            return taken

    def _deliver(self, jobs: dict[int, _Job], results: dict[int, Any]) -> None:
        for handle, result in results.items():
            job = jobs.pop(handle)
            with self._cv:
                self._inflight.pop(job.key, None)
            if isinstance(result, BaseException):
                job.future.set_exception(result)
            else:
                job.future.set_result(result)

    def _whole(self, batch: list[_Job], compute: Callable[..., list[Any]]) -> None:
        """Run batch as one call of compute (no joining), then answer every request."""
        first = batch[0]
        threads = self._threads(len(batch))
        started = time.perf_counter()
        try:
            with torch.inference_mode():
                results: list[Any] = compute(
                    first.model, first.tokenizer, [j.text for j in batch], first.beam, first.options, alpha=first.alpha
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
        self._deliver(dict(enumerate(batch)), dict(enumerate(results)))
