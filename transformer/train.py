"""Training (§5): Adam with the warm-up schedule, label smoothing, token-sized batches.

Progress is reported through callbacks (see :class:`TrainCallback`), never printed:
the CLI attaches a tqdm bar, the app attaches its own; a JSON-lines metrics log is
another callback. Under ``torchrun`` the same code trains with DistributedDataParallel.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import random
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor

from .checkpoint import load_checkpoint, read_safetensors, save_checkpoint
from .config import TransformerConfig
from .corpus import CorpusSpec, generate, read_tsv
from .model import Transformer
from .tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer

RESUME_DIR = "last"  # out/last: the rolling checkpoint a killed run resumes from
SNAPSHOT_DIR = "snapshots"  # out/snapshots/step-000100: models at chosen steps
METRICS_FILE = "metrics.jsonl"
TRAINER_STATE = "trainer_state.json"
OPTIMIZER_FILE = "optimizer.safetensors"


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run needs; ``PRESETS`` name the common ones."""

    model_preset: str = "small"
    model_overrides: dict[str, Any] = field(default_factory=dict)
    corpus: CorpusSpec = CorpusSpec()
    data_file: str | None = None  # bring your own source<TAB>target corpus instead
    vocab_size: int = 1000
    steps: int = 3000
    batch_tokens: int = 4000  # target tokens per batch (padding included)
    lr_factor: float = 1.0
    warmup_steps: int = 400
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-9
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    seed: int = 0
    snapshot_steps: tuple[int, ...] = (0, 100, 300, 1000)
    checkpoint_every: int = 250
    max_len: int = 64  # longest training sentence, in pieces

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PRESETS: dict[str, TrainConfig] = {
    # The shipped checkpoint (checkpoints/coref-en-fr).
    "coref": TrainConfig(
        model_preset="small",
        model_overrides=dict(n_encoder_layers=3, n_decoder_layers=2),
        corpus=CorpusSpec(n_examples=60000, both_share=0.5, number_share=0.2),
        steps=2000,
        batch_tokens=3000,
        lr_factor=0.5,
        snapshot_steps=(0, 100, 300, 600, 1000, 1400),
    ),
    # Seconds, for tests and demos.
    "tiny": TrainConfig(
        model_preset="tiny",
        corpus=CorpusSpec(n_examples=600, n_test=100),
        vocab_size=300,
        steps=30,
        batch_tokens=600,
        warmup_steps=10,
        lr_factor=2.0,
        snapshot_steps=(0, 10),
        checkpoint_every=10,
    ),
}


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


class TrainCallback:
    """Override what you need; every hook is optional."""

    def on_start(self, trainer: Trainer) -> None: ...

    def on_step(self, event: TrainEvent) -> None: ...

    def on_checkpoint(self, step: int, path: Path, kind: str) -> None: ...

    def on_end(self, trainer: Trainer, result: dict[str, Any]) -> None: ...


class JsonlLogger(TrainCallback):
    """Appends one JSON object per step to a metrics log the app can plot."""

    def __init__(self, path: str | Path, every: int = 10) -> None:
        self.path = Path(path)
        self.every = every

    def on_step(self, event: TrainEvent) -> None:
        if event.step % self.every == 0 or event.step == event.total_steps:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(dataclasses.asdict(event)) + "\n")


class TqdmCallback(TrainCallback):
    """A progress bar with loss and rate (used by the CLI)."""

    def __init__(self) -> None:
        self.bar = None

    def on_start(self, trainer: Trainer) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=trainer.config.steps, initial=trainer.step, unit="step", dynamic_ncols=True)

    def on_step(self, event: TrainEvent) -> None:
        self.bar.set_postfix(loss=f"{event.loss:.3f}", tok_s=f"{event.tokens_per_s:,.0f}", lr=f"{event.lr:.2e}")
        self.bar.update(1)

    def on_end(self, trainer: Trainer, result: dict[str, Any]) -> None:
        self.bar.close()


def noam_lr(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) (§5.3)."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def make_batches(
    pairs: Sequence[tuple[list[int], list[int]]], batch_tokens: int, rng: random.Random
) -> list[list[int]]:
    """Group example indices into batches of similar length, about batch_tokens target tokens each."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][1]), len(pairs[i][0]), rng.random()))
    batches, current, longest = [], [], 0
    for i in order:
        n = max(len(pairs[i][0]), len(pairs[i][1]))
        if current and max(longest, n) * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def collate(pairs: Sequence[tuple[list[int], list[int]]], idx: list[int]) -> tuple[Tensor, Tensor, Tensor]:
    """src (B, S) = x + EOS; tgt_in (B, T) = BOS + y; tgt_out (B, T) = y + EOS; padded with PAD."""
    S = max(len(pairs[i][0]) for i in idx) + 1
    T = max(len(pairs[i][1]) for i in idx) + 1
    src = torch.full((len(idx), S), PAD_ID, dtype=torch.long)
    tgt_in = torch.full((len(idx), T), PAD_ID, dtype=torch.long)
    tgt_out = torch.full((len(idx), T), PAD_ID, dtype=torch.long)
    for row, i in enumerate(idx):
        x, y = pairs[i]
        src[row, : len(x) + 1] = torch.tensor(x + [EOS_ID])
        tgt_in[row, : len(y) + 1] = torch.tensor([BOS_ID] + y)
        tgt_out[row, : len(y) + 1] = torch.tensor(y + [EOS_ID])
    return src, tgt_in, tgt_out


class TrainingError(RuntimeError):
    """A run that cannot start: an existing checkpoint, a bad corpus, another run in the same folder."""


class _RunLock:
    """One training run per output folder: an exclusive lock file (released on exit or crash)."""

    def __init__(self, out: Path) -> None:
        self.path = out / ".train.lock"
        self.fh = None

    def __enter__(self) -> _RunLock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "a+")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.close()
            raise TrainingError(
                f"another training run is writing to {self.path.parent}; wait for it or pick --out"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        import fcntl

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


def load_training_pairs(config: TrainConfig) -> list[tuple[str, str]]:
    """(source, target) pairs: the --data file, else the generated corpus's training split."""
    if config.data_file:
        return read_tsv(config.data_file)
    return [(ex.src, ex.tgt) for ex in generate(config.corpus)[0]]


class Trainer:
    """Trains a Transformer into ``out`` and reports through callbacks.

    Args:
        config: the run's settings.
        out: the checkpoint directory to write (final model), with ``last/``,
            ``snapshots/`` and ``metrics.jsonl`` inside.
        callbacks: progress listeners.
        overwrite: replace an existing final checkpoint in ``out``.
        stop_event: set it from another thread to stop after the current step.
    """

    def __init__(
        self,
        config: TrainConfig,
        out: str | Path,
        callbacks: Sequence[TrainCallback] = (),
        *,
        overwrite: bool = False,
        stop_event: threading.Event | None = None,
    ) -> None:
        self.config = config
        self.out = Path(out)
        self.callbacks = list(callbacks)
        self.overwrite = overwrite
        self.stop_event = stop_event or threading.Event()
        self.step = 0
        self.distributed = dist.is_available() and int(os.environ.get("WORLD_SIZE", "1")) > 1
        self.rank = int(os.environ.get("RANK", "0")) if self.distributed else 0
        self.world_size = int(os.environ.get("WORLD_SIZE", "1")) if self.distributed else 1
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    # ------------------------------------------------------------ setup
    def _prepare(self) -> None:
        cfg = self.config
        final_exists = (self.out / "config.json").exists()
        resume = self.out / RESUME_DIR
        if final_exists and not self.overwrite:
            raise TrainingError(f"{self.out} already holds a trained checkpoint; pass --overwrite to replace it")
        pairs = load_training_pairs(cfg)
        if resume.exists() and not self.overwrite:
            ckpt = load_checkpoint(resume)
            self.model, self.tokenizer = ckpt.model, ckpt.tokenizer
            state = ckpt.extra_json.get(TRAINER_STATE, {})
            self.step = int(state.get("step", 0))
            self._resume_state = state
            self._optimizer_state = (
                read_safetensors(resume / OPTIMIZER_FILE) if (resume / OPTIMIZER_FILE).exists() else None
            )
            self._saved_wall = float(state.get("wall_time_s", 0.0))
        else:
            torch.manual_seed(cfg.seed)
            self.tokenizer = Tokenizer.train((s for pair in pairs for s in pair), vocab_size=cfg.vocab_size)
            model_cfg = TransformerConfig.preset(
                cfg.model_preset, vocab_size=self.tokenizer.vocab_size, **cfg.model_overrides
            )
            self.model = Transformer(model_cfg)
            self._optimizer_state = None
            self._resume_state = {}
            self._saved_wall = 0.0
        self.model.to(self.device).train()
        self.pairs = []
        for src, tgt in pairs:
            x, y = self.tokenizer.encode(src), self.tokenizer.encode(tgt)
            if 0 < len(x) < cfg.max_len and 0 < len(y) < cfg.max_len:
                self.pairs.append((x, y))
        if not self.pairs:
            raise TrainingError("no usable training pairs (all empty or longer than max_len)")
        d_model = self.model.config.d_model
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.0, betas=cfg.betas, eps=cfg.eps)
        if self._optimizer_state is not None:
            self._load_optimizer(self._optimizer_state)
        self.schedule = lambda step: noam_lr(step, d_model, cfg.warmup_steps, cfg.lr_factor)
        self.train_model: torch.nn.Module = self.model
        if self.distributed:
            from torch.nn.parallel import DistributedDataParallel

            self.train_model = DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )

    def _optimizer_tensors(self) -> dict[str, Tensor]:
        out = {"torch_rng_state": torch.get_rng_state()}
        for i, p in enumerate(self.model.parameters()):
            st = self.optimizer.state.get(p)
            if st:
                out[f"{i}.exp_avg"] = st["exp_avg"]
                out[f"{i}.exp_avg_sq"] = st["exp_avg_sq"]
                out[f"{i}.step"] = torch.as_tensor(st["step"], dtype=torch.float32).reshape(1)
        return out

    def _load_optimizer(self, tensors: dict[str, Tensor]) -> None:
        if "torch_rng_state" in tensors:
            torch.set_rng_state(tensors["torch_rng_state"])
        for i, p in enumerate(self.model.parameters()):
            if f"{i}.exp_avg" in tensors:
                self.optimizer.state[p] = {
                    "step": tensors[f"{i}.step"].reshape(()).clone(),
                    "exp_avg": tensors[f"{i}.exp_avg"].to(self.device),
                    "exp_avg_sq": tensors[f"{i}.exp_avg_sq"].to(self.device),
                }

    def card(self, wall_time: float, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "trained_by": "python -m transformer train",
            "train_config": self.config.to_dict(),
            "step": self.step,
            "wall_time_s": round(wall_time, 1),
            "world_size": self.world_size,
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "n_train_pairs": len(self.pairs),
            "parameters": self.model.num_parameters(),
            **(extra or {}),
        }

    def _loop_state(self, wall: float) -> dict[str, Any]:
        """Where the data loop stands, so a resumed run continues with the very next batch."""
        return {"step": self.step, "wall_time_s": wall, "epoch": self._epoch, "batches_left": len(self._batches)}

    def _save(self, path: Path, kind: str, wall: float, with_optimizer: bool) -> None:
        if not self.is_main:
            return
        save_checkpoint(
            path,
            self.model,
            self.tokenizer,
            self.card(wall),
            overwrite=True,
            extra_tensors={OPTIMIZER_FILE: self._optimizer_tensors()} if with_optimizer else None,
            extra_json={TRAINER_STATE: self._loop_state(wall)} if with_optimizer else None,
        )
        for cb in self.callbacks:
            cb.on_checkpoint(self.step, path, kind)

    # ------------------------------------------------------------ loop
    def train(self) -> dict[str, Any]:
        """Run to config.steps (resuming if out/last exists); returns a summary."""
        self.out.mkdir(parents=True, exist_ok=True)
        with _RunLock(self.out) if self.is_main else contextlib.nullcontext():
            return self._train()

    def _train(self) -> dict[str, Any]:
        cfg = self.config
        self._prepare()
        for cb in self.callbacks:
            cb.on_start(self)
        start = time.perf_counter() - self._saved_wall
        snap_dir = self.out / SNAPSHOT_DIR
        if self.step == 0 and 0 in cfg.snapshot_steps:
            self._save(snap_dir / "step-000000", "snapshot", 0.0, False)
        self._epoch, self._batches = 0, []
        if self._resume_state.get("epoch"):  # rebuild the interrupted epoch, minus the batches already used
            self._epoch = int(self._resume_state["epoch"]) - 1
            self._batches = self._epoch_batches()[: int(self._resume_state["batches_left"])]
        tokens_seen, rate_t0 = 0, time.perf_counter()
        while self.step < cfg.steps and not self.stop_event.is_set():
            if not self._batches:
                self._batches = self._epoch_batches()
            idx = self._batches.pop()
            src, tgt_in, tgt_out = (t.to(self.device) for t in collate(self.pairs, idx))
            self.step += 1
            lr = self.schedule(self.step)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            logits = self.train_model(src, tgt_in).logits  # (B, T, vocab)
            loss = F.cross_entropy(
                logits.reshape(-1, logits.size(-1)),
                tgt_out.reshape(-1),
                ignore_index=PAD_ID,
                label_smoothing=cfg.label_smoothing,
            )
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm))
            self.optimizer.step()
            n_tokens = int((tgt_out != PAD_ID).sum())
            tokens_seen += n_tokens
            now = time.perf_counter()
            event = TrainEvent(
                step=self.step,
                total_steps=cfg.steps,
                loss=loss.item(),
                lr=lr,
                tokens_per_s=tokens_seen / max(now - rate_t0, 1e-9),
                elapsed_s=now - start,
                grad_norm=grad_norm,
            )
            if not math.isfinite(event.loss):
                raise TrainingError(f"loss became {event.loss} at step {self.step}; lower --lr-factor")
            for cb in self.callbacks:
                cb.on_step(event)
            if self.step in cfg.snapshot_steps:
                self._save(snap_dir / f"step-{self.step:06d}", "snapshot", now - start, False)
            if self.step % cfg.checkpoint_every == 0 and self.step < cfg.steps:
                self._save(self.out / RESUME_DIR, "resume", now - start, True)
        wall = time.perf_counter() - start
        result = {"step": self.step, "wall_time_s": wall, "stopped": self.stop_event.is_set()}
        if self.distributed:
            result["replicas_equal"] = self._replicas_equal()
        if self.step >= cfg.steps and self.is_main:
            self.model.eval()
            save_checkpoint(
                self.out,
                self.model,
                self.tokenizer,
                self.card(wall, _ddp(result)),
                overwrite=True,
                keep_other_files=True,
            )
            shutil.rmtree(self.out / RESUME_DIR, ignore_errors=True)
        elif self.is_main:
            self._save(self.out / RESUME_DIR, "resume", wall, True)
        for cb in self.callbacks:
            cb.on_end(self, result)
        return result

    def _epoch_batches(self) -> list[list[int]]:
        """This rank's batches of the next epoch (deterministic in seed and epoch)."""
        rng = random.Random(self.config.seed * 1000003 + self._epoch)
        self._epoch += 1
        return make_batches(self.pairs, self.config.batch_tokens, rng)[self.rank :: self.world_size]

    def _replicas_equal(self) -> bool:
        """All-gather every rank's parameters and compare them exactly."""
        flat = torch.cat([p.detach().reshape(-1) for p in self.model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(self.world_size)]
        dist.all_gather(gathered, flat)
        return all(torch.equal(gathered[0], g) for g in gathered[1:])


def _ddp(result: dict[str, Any]) -> dict[str, Any]:
    return {"replicas_equal": result["replicas_equal"]} if "replicas_equal" in result else {}
