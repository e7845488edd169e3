"""Serving analyses to many sessions: one padded model pass for the requests that arrive together.

- ``analyse_batch``: the batched computation (equal to ``analysis.analyse`` per sentence).
- ``RunningBatch``: the same, for sentences that join while others decode (continuous batching).
- ``Batcher``: the in-process batcher (a worker thread; the app's default).
- ``ray_serve``: the same batched analysis as a Ray Serve deployment, for a class that outgrows
  one server ($TRANSFORMER_RAY_ADDRESS; imported only then).
- ``backend_from_env``: what the app's cache calls on a miss.
- ``fallbacks()``: how often a padded pass failed and its sentences ran one at a time (logged too).
- ``AnalysisTimeout``: what a caller gets when no result came within $TRANSFORMER_RESULT_TIMEOUT_S.

Nothing here imports streamlit.
"""

from __future__ import annotations

from .backends import BACKEND_ENV, RAY_ADDRESS_ENV, Backend, BatcherBackend, Direct, backend_from_env
from .batcher import Batcher
from .running_batch import RunningBatch, analyse_batch, fallbacks
from .timeouts import RESULT_TIMEOUT_ENV, AnalysisTimeout, result_timeout_s

__all__ = [
    "BACKEND_ENV",
    "RAY_ADDRESS_ENV",
    "RESULT_TIMEOUT_ENV",
    "AnalysisTimeout",
    "Backend",
    "BatcherBackend",
    "Batcher",
    "Direct",
    "RunningBatch",
    "analyse_batch",
    "backend_from_env",
    "fallbacks",
    "result_timeout_s",
]
