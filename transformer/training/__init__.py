"""Training: ``python -m transformer train`` and the app's training page run :class:`Trainer`.

- :mod:`.presets`: :class:`TrainConfig` and ``PRESETS`` (a new preset goes here).
- :mod:`.lock`: :class:`RunLock`, one writer per folder, testable without taking it (no torch).
- :mod:`.metrics`: the metrics log's writer and its one reader, :func:`read_metrics` (no torch).
- :mod:`.callbacks`: :class:`TrainEvent`, :class:`CheckpointKind`, the logger, the probe, the progress bar.
- :mod:`.data`: :class:`TrainingData` (tokenised pairs, deterministic batches), :class:`BatchStream`.
- :mod:`.alignment`: the cross-attention alignment loss of ``align_pronoun``.
- :mod:`.optimizer`: Adam's state keyed by parameter name.
- :mod:`.loop`: :class:`Trainer`, :class:`StepResult`, :func:`noam_lr`.

The names below load their module on first use, so ``transformer.training.lock`` and
``.metrics`` (what the app's job table needs) can be imported without the loop.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "TrainConfig": "presets",
    "PRESETS": "presets",
    "RunLock": "lock",
    "TrainingError": "lock",
    "is_locked": "lock",
    "MetricsLog": "metrics",
    "append_jsonl": "metrics",
    "read_metrics": "metrics",
    "CheckpointKind": "callbacks",
    "JsonlLogger": "callbacks",
    "ProbeAtSnapshots": "callbacks",
    "TqdmCallback": "callbacks",
    "TrainCallback": "callbacks",
    "TrainEvent": "callbacks",
    "BatchStream": "data",
    "TrainingData": "data",
    "load_training_examples": "data",
    "Alignment": "alignment",
    "alignment_loss": "alignment",
    "pronoun_alignments": "alignment",
    "load_optimizer_state": "optimizer",
    "optimizer_state": "optimizer",
    "StepResult": "loop",
    "Trainer": "loop",
    "noam_lr": "loop",
}
__all__ = [
    "Alignment",
    "BatchStream",
    "CheckpointKind",
    "JsonlLogger",
    "MetricsLog",
    "PRESETS",
    "ProbeAtSnapshots",
    "RunLock",
    "StepResult",
    "TqdmCallback",
    "TrainCallback",
    "TrainConfig",
    "TrainEvent",
    "Trainer",
    "TrainingData",
    "TrainingError",
    "alignment_loss",
    "append_jsonl",
    "is_locked",
    "load_optimizer_state",
    "load_training_examples",
    "noam_lr",
    "optimizer_state",
    "pronoun_alignments",
    "read_metrics",
]

if TYPE_CHECKING:
    from .alignment import Alignment, alignment_loss, pronoun_alignments
    from .callbacks import CheckpointKind, JsonlLogger, ProbeAtSnapshots, TqdmCallback, TrainCallback, TrainEvent
    from .data import BatchStream, TrainingData, load_training_examples
    from .lock import RunLock, TrainingError, is_locked
    from .loop import StepResult, Trainer, noam_lr
    from .metrics import MetricsLog, append_jsonl, read_metrics
    from .optimizer import load_optimizer_state, optimizer_state
    from .presets import PRESETS, TrainConfig


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
