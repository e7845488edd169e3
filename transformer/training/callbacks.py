"""What a run tells its listeners: :class:`TrainEvent` after each step, checkpoints by :class:`CheckpointKind`.

The CLI attaches :class:`JsonlLogger` (the metrics log the app plots), :class:`ProbeAtSnapshots`
(the coreference probe at each snapshot; the app's runs always have it) and :class:`TqdmCallback`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from ..corpus import Example, generate_test
from ..evaluate import coreference_probe
from .metrics import append_jsonl
from .presets import TrainConfig


class RunState(Protocol):
    """What a callback may read of the run it listens to (the Trainer is one)."""

    config: TrainConfig
    step: int
    model: Any  # the Transformer being trained
    tokenizer: Any


class CheckpointKind(StrEnum):
    """What a written checkpoint is for."""

    SNAPSHOT = "snapshot"  # snapshots/step-NNNNNN: kept to watch heads form
    RESUME = "resume"  # last/: the rolling checkpoint (with optimizer and loop state) a stopped run resumes from
    FINAL = "final"  # the run's folder itself: the trained model


@dataclass
class TrainEvent:
    """What a callback hears after each optimisation step."""

    step: int
    total_steps: int
    loss: float
    lr: float
    tokens_per_s: float
    elapsed_s: float
    grad_norm: float
    accuracy: float = 0.0  # share of target tokens predicted right (teacher forcing, this batch)


class TrainCallback:
    """Override what you need; every hook is optional."""

    def on_start(self, trainer: RunState) -> None: ...

    def on_step(self, event: TrainEvent) -> None: ...

    def on_checkpoint(self, step: int, path: Path, kind: CheckpointKind) -> None: ...

    def on_end(self, trainer: RunState, result: dict[str, Any]) -> None: ...


class JsonlLogger(TrainCallback):
    """Appends one JSON object per logged step to a metrics log the app plots."""

    def __init__(self, path: str | Path, every: int = 10) -> None:
        self.path = Path(path)
        self.every = every

    def on_start(self, trainer: RunState) -> None:
        if trainer.step == 0:  # a fresh run (not a resumed one) starts a fresh log
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    def on_step(self, event: TrainEvent) -> None:
        if event.step % self.every == 0 or event.step == event.total_steps:
            append_jsonl(self.path, dataclasses.asdict(event))


class ProbeAtSnapshots(TrainCallback):
    """At every snapshot, the coreference probe's best score per row kind on a sample of the held-out
    split, appended to the metrics log as {"step": s, "probe": {"encoder/pronoun": ..., ...}}.
    The probe runs on the model's own device (a GPU run probes on the GPU)."""

    def __init__(self, path: str | Path, n_sentences: int = 200) -> None:
        self.path = Path(path)
        self.n = n_sentences
        self.trainer: RunState | None = None
        self.examples: list[Example] = []

    def on_start(self, trainer: RunState) -> None:
        self.trainer = trainer
        if not trainer.config.data_file:
            self.examples = generate_test(trainer.config.corpus)[: self.n]

    def on_checkpoint(self, step: int, path: Path, kind: CheckpointKind) -> None:
        if kind is not CheckpointKind.SNAPSHOT or not self.examples or self.trainer is None:
            return
        model, tokenizer = self.trainer.model, self.trainer.tokenizer
        if model is None or tokenizer is None:
            return
        was_training = model.training
        model.eval()
        try:
            probe = coreference_probe(model, tokenizer, self.examples)
        finally:
            model.train(was_training)
        best = {q.label(): round(probe.best(q)[2], 4) for q in probe.scores}
        append_jsonl(self.path, {"step": step, "probe": best})


class TqdmCallback(TrainCallback):
    """A progress bar with loss and rate (used by the CLI)."""

    def __init__(self) -> None:
        self.bar: Any = None

    def on_start(self, trainer: RunState) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=trainer.config.steps, initial=trainer.step, unit="step", dynamic_ncols=True)

    def on_step(self, event: TrainEvent) -> None:
        self.bar.set_postfix(loss=f"{event.loss:.3f}", tok_s=f"{event.tokens_per_s:,.0f}", lr=f"{event.lr:.2e}")
        self.bar.update(1)

    def on_end(self, trainer: RunState, result: dict[str, Any]) -> None:
        self.bar.close()
