"""Serving analyses to many sessions: one padded model pass for the requests that arrive together.

- ``analyse_batch``: the batched computation (equal to ``analysis.analyse`` per sentence).
- ``RunningBatch``: the same, for sentences that join while others decode (continuous batching).
- ``Batcher``: the in-process batcher (a worker thread; the app's default).
- ``ray_serve``: the same batched analysis as a Ray Serve deployment, for a class that outgrows
  one server ($TRANSFORMER_RAY_ADDRESS; imported only then).
- ``backend_from_env``: what the app's cache calls on a miss.

Nothing here imports streamlit.
"""

from __future__ import annotations

from .backends import BACKEND_ENV, RAY_ADDRESS_ENV, Backend, BatcherBackend, Direct, backend_from_env
from .batcher import Batcher
from .running_batch import RunningBatch, analyse_batch

__all__ = [
    "BACKEND_ENV",
    "RAY_ADDRESS_ENV",
    "Backend",
    "BatcherBackend",
    "Batcher",
    "Direct",
    "RunningBatch",
    "analyse_batch",
    "backend_from_env",
]
