"""Where the app's analysis cache sends a miss: in-process (batched or not) or a Ray Serve deployment.

TRANSFORMER_RAY_ADDRESS=auto   (or ray://host:10001)  -> the Ray Serve deployment (ray_serve.py)
TRANSFORMER_BATCH=0                                   -> each session computes alone (no batcher)
otherwise                                             -> the in-process batcher (the default)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

import torch

from ..analysis import Analysis, analyse
from ..checkpoint import Checkpoint
from ..options import DEFAULT, CallOptions
from .batcher import Batcher

RAY_ADDRESS_ENV = "TRANSFORMER_RAY_ADDRESS"
BACKEND_ENV = "TRANSFORMER_BATCH"


class Backend(Protocol):
    elsewhere: bool  # whether the computation runs outside the caller's thread (the caller only waits)

    def analyse(self, ckpt: Checkpoint, text: str, beam: int = 1, options: CallOptions = DEFAULT) -> Analysis:
        """The analysis of text; a beam search uses the checkpoint's own length penalty (ckpt.alpha)."""
        ...

    def wait_idle(self, timeout_s: float) -> None:
        """Wait, at most timeout_s, while this process's model thread still decodes others' sentences."""
        ...


class Direct:
    """Every caller runs its own unbatched analysis in its own thread (the reference of the benches)."""

    elsewhere = False

    def analyse(self, ckpt: Checkpoint, text: str, beam: int = 1, options: CallOptions = DEFAULT) -> Analysis:
        with torch.inference_mode():
            return analyse(ckpt.model, ckpt.tokenizer, text, beam, options, alpha=ckpt.alpha)

    def wait_idle(self, timeout_s: float) -> None:
        pass  # every caller computes in its own thread


class BatcherBackend:
    """Callers that ask at the same moment share one padded pass (see Batcher)."""

    elsewhere = True

    def __init__(self, batcher: Batcher | None = None, arriving: Callable[[], int] | None = None) -> None:
        self.batcher = batcher or Batcher.from_env(arriving)

    def analyse(self, ckpt: Checkpoint, text: str, beam: int = 1, options: CallOptions = DEFAULT) -> Analysis:
        return self.batcher.analyse(ckpt.model, ckpt.tokenizer, text, beam, options, alpha=ckpt.alpha)

    def wait_idle(self, timeout_s: float) -> None:
        self.batcher.wait_idle(timeout_s)


def backend_from_env(arriving: Callable[[], int] | None = None) -> Backend:
    """The backend the environment names (see the module's docstring); arriving: see Batcher."""
    address = os.environ.get(RAY_ADDRESS_ENV, "").strip()
    if address:
        from .ray_serve import RayClient  # ray is imported only when asked for

        return RayClient(address)
    if os.environ.get(BACKEND_ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return Direct()
    return BatcherBackend(arriving=arriving)
