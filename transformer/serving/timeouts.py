"""The bound on every wait for a result of the batcher or of Ray: a request never hangs for ever.

$TRANSFORMER_RESULT_TIMEOUT_S (default 120): how long a caller waits for its analysis before it gets
an AnalysisTimeout (the worker may be stalled, or the queue far longer than a class should ever make it).
"""

from __future__ import annotations

import os

RESULT_TIMEOUT_ENV = "TRANSFORMER_RESULT_TIMEOUT_S"
RESULT_TIMEOUT_S = 120.0


class AnalysisTimeout(TimeoutError):
    """An analysis did not come back within its bound."""


def result_timeout_s() -> float:
    """The bound, in seconds, from $TRANSFORMER_RESULT_TIMEOUT_S (a positive number; default 120)."""
    raw = os.environ.get(RESULT_TIMEOUT_ENV, "").strip()
    if not raw:
        return RESULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${RESULT_TIMEOUT_ENV} must be a number of seconds, not {raw!r}") from None
    if not value > 0:
        raise ValueError(f"${RESULT_TIMEOUT_ENV} must be positive, not {raw!r}")
    return value


def timed_out(what: str, text: str, timeout_s: float) -> AnalysisTimeout:
    """The exception for a wait that ran out: what waited, for which sentence, and how to change the bound."""
    return AnalysisTimeout(
        f"{what} gave no analysis of {text[:60]!r} within {timeout_s:g} s "
        f"(the model's worker may be stalled; ${RESULT_TIMEOUT_ENV} sets the bound)"
    )
