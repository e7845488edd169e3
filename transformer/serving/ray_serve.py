"""The batched analysis as a Ray Serve deployment, for a class that outgrows one server.

A lecture hall: several Streamlit replicas (thin clients) share model workers on other machines,
or on GPUs. ``@serve.batch`` gathers the requests of every replica that arrive within a few
milliseconds; each batch runs ``analyse_batch``, so the answers are the in-process ones.

    ray start --head --port 6379                       # the head node (other nodes: ray start --address HEAD:6379)
    python -m transformer.serving.ray_serve --address auto --replicas 2
    TRANSFORMER_RAY_ADDRESS=auto streamlit run app.py  # each Streamlit replica, on a node of the cluster

A request names its checkpoint by path (and the weights' mtime): every node must see the same
checkpoints folder (a shared disk, or the same copy at the same path).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import ray
import torch
from ray import serve
from ray.serve.handle import DeploymentHandle

from ..analysis import Analysis
from ..checkpoint import Checkpoint, load_checkpoint
from ..layout import checkpoint_stamp, checkpoints_root, inside
from ..options import DEFAULT, CallOptions
from .batcher import MAX_PIECES, MAX_SENTENCES, WINDOW_S
from .running_batch import analyse_batch
from .timeouts import result_timeout_s, timed_out

APP_NAME = "transformer-analysis"
MODELS = 4  # checkpoints a replica keeps loaded


class RemoteAnalysisError(RuntimeError):
    """A request the deployment could not answer; the message is the request's own error."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Request:
    path: str  # the checkpoint directory, as every node sees it; inside the deployment's checkpoints root
    stamp: tuple  # layout.checkpoint_stamp: a rewritten checkpoint, or its card changed (α), is loaded again
    text: str
    beam: int = 1
    options: CallOptions = DEFAULT


@dataclass(frozen=True)
class Reply:
    analysis: Analysis | None = None
    error_kind: str = ""
    error: str = ""


class OutsideRoot(ValueError):
    """A request for a folder outside the deployment's checkpoints root: never loaded."""


@serve.deployment(ray_actor_options={"num_cpus": 1}, max_ongoing_requests=4 * MAX_SENTENCES)
class Analyser:
    """One model worker: keeps a few checkpoints loaded and answers batches of requests."""

    def __init__(self, max_pieces: int = MAX_PIECES) -> None:
        self.max_pieces = max_pieces
        self._models: OrderedDict[tuple[str, tuple], Checkpoint] = OrderedDict()

    def _checkpoint(self, path: str, stamp: tuple) -> Checkpoint:
        """The checkpoint at path (loaded once per stamp); a path outside the checkpoints root is refused, as the
        app refuses it: a client's path is never trusted."""
        root = checkpoints_root()
        if not inside(root, Path(path)):
            raise OutsideRoot(f"{path} is not inside the checkpoints folder {root}; refusing to load it")
        key = (path, stamp)
        if key not in self._models:
            ckpt = load_checkpoint(path)
            ckpt.model.eval().requires_grad_(False)
            self._models[key] = ckpt
            while len(self._models) > MODELS:
                self._models.popitem(last=False)
        self._models.move_to_end(key)
        return self._models[key]

    def _run(self, requests: list[Request]) -> list[Reply]:
        """Group by checkpoint, beam and options; run each group in padded batches under the pieces cap."""
        replies: list[Reply | None] = [None] * len(requests)
        groups: dict[tuple, list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault((r.path, r.stamp, r.beam, r.options), []).append(i)
        for (path, stamp, beam, options), idx in groups.items():
            try:
                ckpt = self._checkpoint(path, stamp)
            except Exception as exc:  # noqa: BLE001  a bad checkpoint fails its own requests only
                for i in idx:
                    replies[i] = Reply(None, type(exc).__name__, str(exc))
                continue
            for chunk in self._chunks(ckpt, idx, requests, beam):
                texts = [requests[i].text for i in chunk]
                with torch.inference_mode():
                    results = analyse_batch(ckpt.model, ckpt.tokenizer, texts, beam, options, alpha=ckpt.alpha)
                for i, res in zip(chunk, results):
                    replies[i] = Reply(None, type(res).__name__, str(res)) if isinstance(res, Exception) else Reply(res)
        return replies  # type: ignore[return-value]

    def _chunks(self, ckpt: Checkpoint, idx: list[int], requests: list[Request], beam: int) -> list[list[int]]:
        chunks: list[list[int]] = [[]]
        longest = 0
        for i in idx:
            try:
                n = len(ckpt.tokenizer.source_ids(requests[i].text, ckpt.config.max_len))
            except Exception:  # noqa: BLE001  analyse_batch reports it for this request
                n = 1
            if chunks[-1] and (len(chunks[-1]) + 1) * beam * max(longest, n) > self.max_pieces:
                chunks.append([])
                longest = 0
            chunks[-1].append(i)
            longest = max(longest, n)
        return chunks

    @serve.batch(max_batch_size=MAX_SENTENCES, batch_wait_timeout_s=WINDOW_S)
    async def analyse(self, requests: list[Request]) -> list[Reply]:
        return await asyncio.to_thread(self._run, requests)  # the event loop keeps gathering the next batch

    async def __call__(self, request: Request) -> Reply:
        return await self.analyse(request)


def deploy(address: str | None = None, replicas: int = 1, name: str = APP_NAME, **init) -> DeploymentHandle:
    """Connect to (or start) Ray, and run the deployment as the application `name` (no HTTP route)."""
    if not ray.is_initialized():
        ray.init(address=address, namespace="serve", **init)
    return serve.run(Analyser.options(num_replicas=replicas).bind(), name=name, route_prefix=None)


class RayClient:
    """The app's backend when $TRANSFORMER_RAY_ADDRESS is set: each analysis is a request to the deployment."""

    elsewhere = True

    def __init__(self, address: str, name: str = APP_NAME) -> None:
        if not ray.is_initialized():
            ray.init(address=address, namespace="serve", log_to_driver=False)
        self.handle = serve.get_app_handle(name)

    def analyse(self, ckpt: Checkpoint, text: str, beam: int = 1, options: CallOptions = DEFAULT) -> Analysis:
        path = str(Path(ckpt.path).resolve())
        bound = result_timeout_s()
        response = self.handle.remote(Request(path, checkpoint_stamp(path), text, int(beam), options))
        try:
            reply: Reply = response.result(timeout_s=bound)
        except TimeoutError:  # Ray's GetTimeoutError is one
            response.cancel()
            raise timed_out("the Ray Serve deployment", text, bound) from None
        if reply.analysis is None:
            raise RemoteAnalysisError(reply.error_kind, reply.error)
        return reply.analysis

    def wait_idle(self, timeout_s: float) -> None:
        pass  # the model runs in the deployment's processes: drawing here does not slow it


def main() -> None:
    ap = argparse.ArgumentParser(description="Run the batched analysis as a Ray Serve application.")
    ap.add_argument("--address", default="auto", help="the Ray cluster (auto: the one started by `ray start`)")
    ap.add_argument("--replicas", type=int, default=1, help="model workers (one CPU each)")
    ap.add_argument("--name", default=APP_NAME)
    args = ap.parse_args()
    deploy(args.address, args.replicas, args.name)
    print(f"{args.name}: {args.replicas} replica(s) running; set TRANSFORMER_RAY_ADDRESS={args.address} for the app")


if __name__ == "__main__":
    main()
