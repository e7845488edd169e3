"""The loop (§5): Adam with the warm-up schedule, label smoothing, token-sized batches, snapshots.

:class:`Trainer` trains into a folder and reports through callbacks (never prints). Under
``torchrun`` the same code trains with DistributedDataParallel (NCCL on GPUs, gloo on CPUs). A
run uses the GPU when there is one and never leaves the caller's global RNG changed (it runs
inside ``torch.random.fork_rng``).
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from ..atomic import OverwriteError, check_replaceable, is_our_checkpoint, remove_run_part
from ..checkpoint import load_checkpoint, read_safetensors, save_checkpoint
from ..config import TransformerConfig
from ..layout import AVERAGE_DIR, AVERAGED_DIR, OPTIMIZER_FILE, RESUME_DIR, TRAINER_STATE, snapshot_dir
from ..model import Transformer
from ..options import CallOptions
from ..tokenizer import Tokenizer, TokenizerBase, train_separate
from ..vocabulary import Vocabulary, training_vocabulary
from .alignment import alignment_loss
from .average import average_checkpoints
from .callbacks import CheckpointKind, TrainCallback, TrainEvent
from .data import BatchStream, TrainingData, load_training_examples, source_target
from .grow import widen_feed_forward
from .lock import RunLock, TrainingError
from .optimizer import load_optimizer_state, optimizer_state
from .presets import TrainConfig
from .revocab import transfer_vocabulary


def bfloat16_is_fast(device: torch.device) -> bool:
    """Whether bfloat16 autocast speeds a step up on ``device``: a GPU that supports it, or a CPU with
    AVX512-BF16 or AMX. Elsewhere the CPU emulates bfloat16 and a step costs far more than a float32 one
    (measured on a 2-core AVX2 EPYC: 20.1-21.0 s against 1.36-1.41 s for real-kde-align's step)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type != "cpu":
        return False
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in checks)


def init_path(name: str) -> Path:
    """config.init_from as a folder: as given (relative to the working directory), else inside the repository."""
    from ..layout import REPO_ROOT

    path = Path(name)
    if path.is_absolute() or path.exists():
        return path
    if (REPO_ROOT / path).exists():
        return REPO_ROOT / path
    raise TrainingError(f"init_from: no checkpoint folder {name!r} (here or in {REPO_ROOT})")


def noam_lr(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) (§5.3)."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


@dataclass(frozen=True)
class StepResult:
    """What one optimisation step measured."""

    loss: float  # the loss optimised (label-smoothed cross-entropy, plus the alignment term if any)
    grad_norm: float  # before clipping
    accuracy: float  # share of target tokens predicted right (teacher forcing)
    n_tokens: int  # target tokens in the batch (padding excluded)


class Trainer:
    """Trains a Transformer into ``out`` and reports through callbacks.

    Args:
        config: the run's settings.
        out: the checkpoint directory to write (final model), with ``last/``,
            ``snapshots/`` and ``metrics.jsonl`` inside.
        callbacks: progress listeners.
        overwrite: replace an existing final checkpoint in ``out``.
        stop_event: set it from another thread to stop after the current step.

    The model, tokenizer, data and optimizer exist (are not None) from the start of :meth:`train`,
    which builds or resumes them under the folder's lock.
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
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.distributed = dist.is_available() and world_size > 1
        self.rank = int(os.environ.get("RANK", "0")) if self.distributed else 0
        self.world_size = world_size if self.distributed else 1
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
        self.options = CallOptions(look_ahead_mask=config.look_ahead_mask)
        # the preset's mixed precision, where this machine runs bfloat16 fast (float32 elsewhere; the card says which)
        self.bfloat16 = config.mixed_precision and bfloat16_is_fast(self.device)
        # built by train() (_prepare), under the folder's lock
        self.model: Transformer | None = None
        self.train_model: torch.nn.Module | None = None  # the model, or its DistributedDataParallel wrapper
        self.tokenizer: TokenizerBase | None = None
        self.vocabulary: Vocabulary | None = None
        self.data: TrainingData | None = None
        self.batches: BatchStream | None = None
        self.optimizer: torch.optim.Optimizer | None = None
        self.resume_state: dict[str, Any] = {}
        # every start and stop of this run, resumed ones included: [{"started", "from_step", "stopped", "to_step",
        # "wall_s", "device", "threads"}], kept in last/'s loop state and written into every card
        self.runs: list[dict[str, Any]] = []
        self.init_card: dict[str, Any] | None = None  # the checkpoint the run started from (config.init_from)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def lr(self, step: int) -> float:
        return noam_lr(step, self.model.config.d_model, self.config.warmup_steps, self.config.lr_factor)

    # ------------------------------------------------------------ setup
    def _prepare(self) -> None:
        cfg = self.config
        resume = self.out / RESUME_DIR
        self._check_out()  # again, under the lock
        if cfg.grow_d_ff and not cfg.init_from:  # refused before the corpus is read
            raise TrainingError("grow_d_ff widens a trained model: it needs init_from")
        if cfg.revocab and not cfg.init_from:
            raise TrainingError("revocab moves a trained model onto a new vocabulary: it needs init_from")
        examples = load_training_examples(cfg)
        # the words the run saw, each pair counted once (a corpus weighted up by real_repeat appears several
        # times in examples: the same objects), so that the app's rare-word note counts sentences, not repeats
        self.vocabulary = training_vocabulary(list({id(ex): ex for ex in examples}.values()))
        saved_optimizer = None
        resuming = resume.exists() and not self.overwrite
        if self.is_main and not resuming:  # a fresh run: no other run's kept weights join its average
            remove_run_part(self.out / AVERAGE_DIR)
        if resuming:
            ckpt = load_checkpoint(resume)
            self.model, self.tokenizer = ckpt.model, ckpt.tokenizer
            self.init_card = ckpt.card.get("init_from")
            self.resume_state = ckpt.extra_json.get(TRAINER_STATE, {})
            self.step = int(self.resume_state.get("step", 0))
            if (resume / OPTIMIZER_FILE).exists():
                saved_optimizer = read_safetensors(resume / OPTIMIZER_FILE)
        elif cfg.init_from:
            torch.manual_seed(cfg.seed)
            start = load_checkpoint(init_path(cfg.init_from))  # a fresh model: nothing shared with a cache
            self.model, self.tokenizer = start.model, start.tokenizer
            self.init_card = {
                "path": cfg.init_from,
                "name": Path(cfg.init_from).name,
                "step": start.card.get("step"),
                "parameters": self.model.num_parameters(),
            }
            if cfg.grow_d_ff:
                self.init_card["grown"] = {"d_ff": [self.model.config.d_ff, cfg.grow_d_ff]}
                self.model = widen_feed_forward(self.model, cfg.grow_d_ff, seed=cfg.seed)
            if cfg.revocab:
                self.tokenizer = self._learn_tokenizer(examples)
                self.model, self.init_card["revocab"] = transfer_vocabulary(
                    self.model, start.tokenizer, self.tokenizer, seed=cfg.seed
                )
        else:
            torch.manual_seed(cfg.seed)
            self.tokenizer = self._learn_tokenizer(examples)
            sizes = dict(vocab_size=self.tokenizer.vocab_size)
            if cfg.tgt_vocab_size:
                sizes["tgt_vocab_size"] = self.tokenizer.target_vocab_size
            model_cfg = TransformerConfig.preset(cfg.model_preset, **sizes, **cfg.model_overrides)
            self.model = Transformer(model_cfg)
        self.model.to(self.device).train()
        self.data = TrainingData(examples, self.tokenizer, cfg, self.rank, self.world_size)
        self.batches = BatchStream(self.data)
        self.batches.restore(self.resume_state)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.0, betas=cfg.betas, eps=cfg.eps)
        if saved_optimizer is not None:
            load_optimizer_state(self.model, self.optimizer, saved_optimizer, self.device)
        self.train_model = self.model
        if self.distributed:
            from torch.nn.parallel import DistributedDataParallel

            self.train_model = DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )

    def _learn_tokenizer(self, examples) -> TokenizerBase:
        """The run's own sentencepiece model(s), learnt on its training pairs: one vocabulary for both sides, or
        one for each (tgt_vocab_size), each pair read once however often real_repeat weights its corpus."""
        cfg = self.config
        if cfg.tgt_vocab_size:  # a sentencepiece model and a vocabulary for each side
            pairs = [source_target(ex) for ex in {id(ex): ex for ex in examples}.values()]
            return train_separate(
                (s for s, _ in pairs),
                (t for _, t in pairs),
                cfg.vocab_size,
                cfg.tgt_vocab_size,
                cfg.tgt_character_coverage,
            )
        pairs = (source_target(ex) for ex in examples)
        return Tokenizer.train((s for pair in pairs for s in pair), vocab_size=cfg.vocab_size)

    def card(self, wall_time: float, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "trained_by": "python -m transformer train",
            "train_config": self.config.to_dict(),
            "step": self.step,
            "wall_time_s": round(wall_time, 1),
            "world_size": self.world_size,
            "device": self.device.type,
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "precision": "bfloat16 autocast" if self.bfloat16 else "float32",
            "n_train_pairs": len(self.data),
            "parameters": self.model.num_parameters(),
            "vocabulary": self.vocabulary.to_card(),
            "runs": self._runs_so_far(wall_time),
            **({"init_from": self.init_card} if self.init_card else {}),
            **(extra or {}),
        }

    def _save(self, kind: CheckpointKind, wall: float, extra: dict[str, Any] | None = None) -> None:
        """Write a checkpoint of one kind (the resume one with the optimizer and the loop state) and tell
        the callbacks. Only the main rank writes."""
        if not self.is_main:
            return
        if kind is CheckpointKind.FINAL:
            self.model.eval()
            save_checkpoint(
                self.out, self.model, self.tokenizer, self.card(wall, extra), overwrite=True, keep_other_files=True
            )
            remove_run_part(self.out / RESUME_DIR)
            path = self.out
        else:
            resume = kind is CheckpointKind.RESUME
            path = self.out / RESUME_DIR if resume else snapshot_dir(self.out, self.step)
            save_checkpoint(
                path,
                self.model if resume else self._snapshot_model(),
                self.tokenizer,
                self.card(wall),
                overwrite=True,
                extra_tensors={OPTIMIZER_FILE: optimizer_state(self.model, self.optimizer)} if resume else None,
                extra_json={TRAINER_STATE: self._loop_state(wall)} if resume else None,
            )
        for cb in self.callbacks:
            cb.on_checkpoint(self.step, path, kind)

    def _keep_for_average(self, wall: float) -> None:
        """Keep the weights of this step in average/ (config.average_every), the latest average_last - 1 only."""
        if not self.is_main:
            return
        keep = self.out / AVERAGE_DIR
        save_checkpoint(keep / f"step-{self.step:06d}", self.model, self.tokenizer, self.card(wall), overwrite=True)
        for old in sorted(keep.glob("step-*"))[: -max(self.config.average_last - 1, 1)]:
            remove_run_part(old)

    def _write_average(self) -> None:
        """averaged/: the mean of the kept weights and the final ones (transformer.training.average)."""
        if not self.is_main:
            return
        final = f"step-{self.step:06d}"  # a run whose time ran out on a kept step: those weights once
        kept = [k for k in sorted((self.out / AVERAGE_DIR).glob("step-*")) if k.name != final]
        if kept:
            average_checkpoints([*kept, self.out], self.out / AVERAGED_DIR, overwrite=True)

    def _snapshot_model(self) -> Transformer:
        """The model as a snapshot stores it: itself, or a half-precision copy (config.snapshot_dtype)."""
        dtype = self.config.snapshot_dtype
        if dtype == "float32":
            return self.model
        if dtype not in ("float16", "bfloat16"):
            raise TrainingError(f"snapshot_dtype must be float32, float16 or bfloat16, not {dtype!r}")
        return copy.deepcopy(self.model).to(getattr(torch, dtype))

    def _loop_state(self, wall: float) -> dict[str, Any]:
        """Where the data loop stands, so a resumed run continues with the very next batch."""
        return {"step": self.step, "wall_time_s": wall, "runs": self._runs_so_far(wall), **self.batches.state()}

    def _runs_so_far(self, wall: float) -> list[dict[str, Any]]:
        """The run's starts and stops, this one's stop being now (step and wall time so far)."""
        if not self.runs:
            return []
        *before, this = self.runs
        began = float(this.get("_wall_at_start", 0.0))
        now = {k: v for k, v in this.items() if not k.startswith("_")}
        now.update(stopped=_now(), to_step=self.step, wall_s=round(wall - began, 1))
        return [*before, now]

    def _start_run(self) -> None:
        """Record this start: after the earlier starts a resumed run's last/ kept."""
        self.runs = [r for r in self.resume_state.get("runs", []) if isinstance(r, dict)]
        self.runs.append(
            {
                "started": _now(),
                "from_step": self.step,
                "device": self.device.type,
                "threads": torch.get_num_threads(),
                "_wall_at_start": float(self.resume_state.get("wall_time_s", 0.0)),
            }
        )

    # ------------------------------------------------------------ loop
    def _check_out(self) -> None:
        """Refuse an out folder that the final save would refuse to replace (before anything is written to it)."""
        if (self.out / "config.json").exists() and not self.overwrite:
            raise TrainingError(f"{self.out} already holds a trained checkpoint; pass --overwrite to replace it")
        if self.out.exists() or self.out.is_symlink():
            try:
                check_replaceable(self.out, lambda p: is_our_checkpoint(p, run_folder=True), "a checkpoint")
            except OverwriteError as exc:
                raise TrainingError(str(exc)) from None

    def train(self) -> dict[str, Any]:
        """Run to config.steps (resuming if out/last exists); returns a summary."""
        if self.is_main:
            self._check_out()  # before the lock file is made: a refused folder is left as it was
        self.out.mkdir(parents=True, exist_ok=True)
        with RunLock(self.out) if self.is_main else contextlib.nullcontext(), torch.random.fork_rng(devices=[]):
            return self._train()

    def train_step(self, idx: list[int]) -> StepResult:
        """One optimisation step on the pairs idx."""
        cfg = self.config
        pad_id = self.model.config.pad_id
        src, tgt_in, tgt_out = self.data.collate(idx, self.device, pad_id)
        supervise = cfg.align_pronoun > 0
        low = torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bfloat16)
        with low, self._attention_kernel():
            out = self.train_model(src, tgt_in, options=self.options, return_attention=supervise)
            logits = out.logits.float()  # (B, T, vocab)
            loss = F.cross_entropy(
                logits.reshape(-1, logits.size(-1)),
                tgt_out.reshape(-1),
                ignore_index=pad_id,
                label_smoothing=cfg.label_smoothing,
            )
            if supervise:
                extra = alignment_loss(out.attention.cross, [self.data.alignments[i] for i in idx])
                if extra is not None:
                    loss = loss + cfg.align_pronoun * extra.float()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm))
        self.optimizer.step()
        real = tgt_out != pad_id
        n_tokens = int(real.sum())
        accuracy = float(((logits.argmax(-1) == tgt_out) & real).sum()) / max(n_tokens, 1)
        return StepResult(loss.item(), grad_norm, accuracy, n_tokens)

    def _attention_kernel(self) -> contextlib.AbstractContextManager:
        """The CPU's fused attention kernel in bfloat16 runs its backward several times slower than the plain
        matmuls (measured: ~0.3 s of a 0.8 s real-coref step); mixed precision on a CPU takes the math path."""
        if self.bfloat16 and self.device.type == "cpu":
            from torch.nn.attention import SDPBackend, sdpa_kernel

            return sdpa_kernel(SDPBackend.MATH)
        return contextlib.nullcontext()

    def _train(self) -> dict[str, Any]:
        cfg = self.config
        self._prepare()
        self._start_run()
        for cb in self.callbacks:
            cb.on_start(self)
        start = time.perf_counter() - float(self.resume_state.get("wall_time_s", 0.0))
        if self.step == 0 and 0 in cfg.snapshot_steps:
            self._save(CheckpointKind.SNAPSHOT, 0.0)
        tokens_seen, rate_t0 = 0, time.perf_counter()
        timed_out = False
        while self.step < cfg.steps and not self.stop_event.is_set():
            idx = self.batches.next()
            self.step += 1
            lr = self.lr(self.step)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            result = self.train_step(idx)
            tokens_seen += result.n_tokens
            now = time.perf_counter()
            if not math.isfinite(result.loss):
                raise TrainingError(f"loss became {result.loss} at step {self.step}; lower --lr-factor")
            event = TrainEvent(
                self.step,
                cfg.steps,
                result.loss,
                lr,
                tokens_seen / max(now - rate_t0, 1e-9),
                now - start,
                result.grad_norm,
                result.accuracy,
            )
            for cb in self.callbacks:
                cb.on_step(event)
            if self.step in cfg.snapshot_steps:
                self._save(CheckpointKind.SNAPSHOT, now - start)
            if cfg.average_every > 0 and self.step % cfg.average_every == 0 and self.step < cfg.steps:
                self._keep_for_average(now - start)
            if cfg.time_limit_s > 0 and self._out_of_time(now - start):
                timed_out = True
                break
            if self.step % cfg.checkpoint_every == 0 and self.step < cfg.steps:
                self._save(CheckpointKind.RESUME, now - start)
        wall = time.perf_counter() - start
        summary: dict[str, Any] = {"step": self.step, "wall_time_s": wall, "stopped": self.stop_event.is_set()}
        if self.distributed:
            summary["replicas_equal"] = self._replicas_equal()
        if self.step >= cfg.steps or timed_out:
            extra = {"replicas_equal": summary["replicas_equal"]} if "replicas_equal" in summary else {}
            if timed_out:
                summary["time_limited"] = extra["time_limited"] = True
            self._save(CheckpointKind.FINAL, wall, extra)
            self._write_average()
        else:
            self._save(CheckpointKind.RESUME, wall)
        for cb in self.callbacks:
            cb.on_end(self, summary)
        return summary

    def _out_of_time(self, elapsed: float) -> bool:
        """Whether the run's time limit is reached; under DDP every rank stops at the same step (rank 0's clock)."""
        over = elapsed >= self.config.time_limit_s
        if not self.distributed:
            return over
        flag = torch.tensor([float(over)], device=self.device)
        dist.broadcast(flag, src=0)
        return bool(flag.item())

    def _replicas_equal(self) -> bool:
        """All-gather every rank's parameters and compare them exactly."""
        flat = torch.cat([p.detach().reshape(-1) for p in self.model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(self.world_size)]
        dist.all_gather(gathered, flat)
        return all(torch.equal(gathered[0], g) for g in gathered[1:])


def _now() -> str:
    """UTC, to the second (a card's record of when a run started or stopped)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
