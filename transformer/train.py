"""Training (§5): Adam with the warm-up schedule, label smoothing, token-sized batches.

Progress is reported through callbacks (see :class:`TrainCallback`), never printed:
the CLI attaches a tqdm bar and a JSON-lines log, which is what the app's training
page reads. Under ``torchrun`` the same code trains with DistributedDataParallel.

The parts are units a caller can reuse: :class:`RunLock` (one writer per folder),
:class:`TrainingData` (tokenised pairs and deterministic batches),
:func:`optimizer_state` / :func:`load_optimizer_state` (keyed by parameter name),
and :class:`Trainer`, which runs the loop and writes snapshots. A run never leaves
the caller's global RNG changed (it runs inside ``torch.random.fork_rng``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import random
import re
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
from .corpus import CorpusSpec, Example, generate, read_tsv
from .layout import METRICS_FILE, OPTIMIZER_FILE, RESUME_DIR, TRAINER_STATE, snapshot_dir
from .model import Transformer
from .options import CallOptions
from .tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer, pad_batch, word_groups
from .vocabulary import training_vocabulary


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
    # Off only to show why the mask exists: the decoder then sees the token it must predict.
    look_ahead_mask: bool = True
    # > 0: a loss that pulls every cross-attention head's row writing il/elle onto "it"/"they", and the
    # row writing the connective (parce que / puisque / car) onto the English one (word alignment,
    # Garg et al. 2019), so that only the encoder can resolve the reference.
    align_pronoun: float = 0.0
    align_connective: bool = True  # with align_pronoun: also the connective's row (off: the pronoun's row alone)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


COREF = TrainConfig(  # the shipped checkpoint (checkpoints/coref-en-fr)
    model_preset="small",
    model_overrides=dict(n_encoder_layers=3, n_decoder_layers=2),
    corpus=CorpusSpec(n_examples=60000, both_share=0.5, number_share=0.2),
    steps=2000,
    batch_tokens=3000,
    lr_factor=0.5,
    snapshot_steps=(0, 100, 300, 600, 1000, 1400),
)
LEAK_MASKED = TrainConfig(
    model_preset="small",
    model_overrides=dict(n_encoder_layers=2, n_decoder_layers=2, d_model=64, d_ff=256),
    corpus=CorpusSpec(n_examples=20000, both_share=0.0, number_share=0.3),
    vocab_size=600,
    steps=1100,
    batch_tokens=2000,
    warmup_steps=200,
    label_smoothing=0.0,  # so that the loss can show the copying: it has no floor to hide behind
    snapshot_steps=(),
)

PRESETS: dict[str, TrainConfig] = {
    # The shipped checkpoint (checkpoints/coref-en-fr).
    "coref": COREF,
    # checkpoints/coref-en-fr-encoder: a model whose encoder resolves "it". One decoder layer, and every
    # cross-attention head's rows that write il/elle and the connective pulled onto their English words,
    # leave the encoder as the only place where the antecedent can be found (see its README).
    "coref-encoder": dataclasses.replace(
        COREF, model_overrides=dict(n_encoder_layers=3, n_decoder_layers=1), seed=1, align_pronoun=1.0
    ),
    # Twins that show why the decoder's look-ahead mask exists (checkpoints/leak-*): the same run with
    # and without the mask. Without it the decoder sees the token it must predict and copies it.
    "leak-masked": LEAK_MASKED,
    "leak-no-mask": dataclasses.replace(LEAK_MASKED, look_ahead_mask=False),
    # Under a minute on two cores: small enough for a demo in class (tests shorten it further).
    "tiny": TrainConfig(
        model_preset="tiny",
        corpus=CorpusSpec(n_examples=6000, n_test=100),
        vocab_size=300,
        steps=2000,
        batch_tokens=1000,
        warmup_steps=100,
        lr_factor=2.0,
        snapshot_steps=(0, 10, 100, 300, 1000),
        checkpoint_every=50,
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
    accuracy: float = 0.0  # share of target tokens predicted right (teacher forcing, this batch)


class TrainCallback:
    """Override what you need; every hook is optional."""

    def on_start(self, trainer: Trainer) -> None: ...

    def on_step(self, event: TrainEvent) -> None: ...

    def on_checkpoint(self, step: int, path: Path, kind: str) -> None: ...

    def on_end(self, trainer: Trainer, result: dict[str, Any]) -> None: ...


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """One JSON object as one line, appended (the metrics log that the app reads while a run writes it)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


class JsonlLogger(TrainCallback):
    """Appends one JSON object per logged step to a metrics log the app plots."""

    def __init__(self, path: str | Path, every: int = 10) -> None:
        self.path = Path(path)
        self.every = every

    def on_start(self, trainer: Trainer) -> None:
        if trainer.step == 0:  # a fresh run (not a resumed one) starts a fresh log
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    def on_step(self, event: TrainEvent) -> None:
        if event.step % self.every == 0 or event.step == event.total_steps:
            append_jsonl(self.path, dataclasses.asdict(event))


class ProbeAtSnapshots(TrainCallback):
    """At every snapshot, the coreference probe's best score per row kind on a sample of the held-out
    split, appended to the metrics log as {"step": s, "probe": {"encoder/pronoun": ..., ...}}."""

    def __init__(self, path: str | Path, n_sentences: int = 200) -> None:
        self.path = Path(path)
        self.n = n_sentences
        self.trainer: Trainer | None = None
        self.examples: list[Example] = []

    def on_start(self, trainer: Trainer) -> None:
        from .corpus import generate_test

        self.trainer = trainer
        if not trainer.config.data_file:
            self.examples = generate_test(trainer.config.corpus)[: self.n]

    def on_checkpoint(self, step: int, path: Path, kind: str) -> None:
        if kind != "snapshot" or not self.examples or self.trainer is None:
            return
        from .evaluate import coreference_probe

        model = self.trainer.model
        was_training = model.training
        model.eval()
        try:
            probe = coreference_probe(model, self.trainer.tokenizer, self.examples)
        finally:
            model.train(was_training)
        best = {q.label(): round(probe.best(q)[2], 4) for q in probe.scores}
        append_jsonl(self.path, {"step": step, "probe": best})


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


class TrainingError(RuntimeError):
    """A run that cannot start: an existing checkpoint, a bad corpus, another run in the same folder."""


class RunLock:
    """One training run per output folder: an exclusive lock file (released on exit or crash)."""

    def __init__(self, out: Path, name: str = ".train.lock", busy: str | None = None) -> None:
        self.path = Path(out) / name
        self.busy = busy or f"another training run is writing to {self.path.parent}; wait for it or pick --out"
        self.fh = None

    def __enter__(self) -> RunLock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "a+")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.close()
            raise TrainingError(self.busy) from None
        return self

    def held_elsewhere(self) -> bool:
        """True when another process holds the lock (a quick try, released at once)."""
        try:
            with self:
                return False
        except TrainingError:
            return True

    def __exit__(self, *exc: object) -> None:
        import fcntl

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


# ---------------------------------------------------------------- data
@dataclass
class Alignment:
    """One supervised row of a pair: the target row (the decoder row that writes a word) and the source
    pieces of the English word it translates."""

    row: int
    columns: list[int]


FRENCH_CONNECTIVE = re.compile(r"(parce qu|puisqu|car )")


def pronoun_alignments(tokenizer: Tokenizer, ex: Example, connective: bool = True) -> list[Alignment]:
    """il/elle ↔ it/they and (with connective) parce que/puisque/car ↔ because/since/as, for one pronoun
    example ([] when it has none)."""
    from .evaluate import probe_rows

    rows = probe_rows(tokenizer, ex)
    if rows is None:
        return []
    out = [Alignment(rows.cross_row, [rows.pronoun_row])]
    m = FRENCH_CONNECTIVE.search(ex.tgt)
    if connective and m is not None and ex.pronoun > 0:
        words = word_groups(tokenizer.pieces(tokenizer.encode(ex.src)))
        pieces = tokenizer.encode_with_offsets(ex.tgt)
        row = next((i for i, (_, _, b, e) in enumerate(pieces) if b <= m.start() < e), None)
        if row is not None:
            out.append(Alignment(row, words[ex.pronoun - 1]))
    return out


def load_training_examples(config: TrainConfig) -> list[tuple[str, str]] | list[Example]:
    """The --data file's (source, target) pairs, else the generated corpus's training split (Examples)."""
    if config.data_file:
        return read_tsv(config.data_file)
    return generate(config.corpus)[0]


class TrainingData:
    """Tokenised training pairs and their batches: about batch_tokens target tokens each, of similar length,
    deterministic in (seed, epoch); each rank of a distributed run takes every world_size-th batch."""

    def __init__(
        self,
        examples: Sequence[tuple[str, str]] | Sequence[Example],
        tokenizer: Tokenizer,
        config: TrainConfig,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        self.config, self.rank, self.world_size = config, rank, world_size
        self.pairs: list[tuple[list[int], list[int]]] = []
        self.alignments: list[list[Alignment]] = []
        for ex in examples:
            src, tgt = (ex.src, ex.tgt) if isinstance(ex, Example) else ex
            x, y = tokenizer.encode(src), tokenizer.encode(tgt)
            if not (0 < len(x) < config.max_len and 0 < len(y) < config.max_len):
                continue
            self.pairs.append((x, y))
            supervised = config.align_pronoun and isinstance(ex, Example)
            self.alignments.append(pronoun_alignments(tokenizer, ex, config.align_connective) if supervised else [])
        if not self.pairs:
            raise TrainingError("no usable training pairs (all empty or longer than max_len)")

    def __len__(self) -> int:
        return len(self.pairs)

    def epoch(self, epoch: int) -> list[list[int]]:
        """This rank's batches of one epoch, as lists of pair indices."""
        rng = random.Random(self.config.seed * 1000003 + epoch)
        pairs = self.pairs
        order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][1]), len(pairs[i][0]), rng.random()))
        batches, current, longest = [], [], 0
        for i in order:
            n = max(len(pairs[i][0]), len(pairs[i][1]))
            if current and max(longest, n) * (len(current) + 1) > self.config.batch_tokens:
                batches.append(current)
                current, longest = [], 0
            current.append(i)
            longest = max(longest, n)
        if current:
            batches.append(current)
        rng.shuffle(batches)
        return batches[self.rank :: self.world_size]

    def collate(self, idx: list[int]) -> tuple[Tensor, Tensor, Tensor]:
        """src (B, S) = x + EOS; tgt_in (B, T) = BOS + y; tgt_out (B, T) = y + EOS; padded with PAD."""
        src = pad_batch([self.pairs[i][0] + [EOS_ID] for i in idx])
        tgt_in = pad_batch([[BOS_ID] + self.pairs[i][1] for i in idx])
        tgt_out = pad_batch([self.pairs[i][1] + [EOS_ID] for i in idx])
        return src, tgt_in, tgt_out


def alignment_loss(cross: list[Tensor], alignments: list[list[Alignment]]) -> Tensor | None:
    """Mean of -log(weight on the aligned source pieces) over every cross-attention layer and head.

    cross: [L] (B, H, T, S) weights; alignments: the supervised rows of each batch row.
    """
    terms = []
    for b, rows in enumerate(alignments):
        for a in rows:
            for w in cross:
                terms.append(w[b, :, a.row, a.columns].sum(-1).clamp_min(1e-9).log())  # (H,)
    return -torch.cat(terms).mean() if terms else None


# ---------------------------------------------------------------- optimizer state, keyed by parameter name
def optimizer_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Tensor]:
    """Adam's moments and step per parameter *name*, plus the RNG state: what a resumed run needs."""
    out = {"torch_rng_state": torch.get_rng_state()}
    for name, p in model.named_parameters():
        st = optimizer.state.get(p)
        if st:
            out[f"{name}.exp_avg"] = st["exp_avg"]
            out[f"{name}.exp_avg_sq"] = st["exp_avg_sq"]
            out[f"{name}.step"] = torch.as_tensor(st["step"], dtype=torch.float32).reshape(1)
    return out


def load_optimizer_state(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, tensors: dict[str, Tensor], device: torch.device
) -> None:
    """Restore what optimizer_state saved. Every saved name must be a parameter of the same shape:
    a saved state that does not fit the model raises TrainingError instead of training on misaligned moments."""
    params = dict(model.named_parameters())
    saved = {k.rsplit(".", 1)[0] for k in tensors if k.endswith((".exp_avg", ".exp_avg_sq", ".step"))}
    unknown = sorted(saved - set(params))
    if unknown:
        raise TrainingError(f"the saved optimizer state names parameters this model lacks: {unknown[:3]}")
    for name in sorted(saved):
        p = params[name]
        if tensors[f"{name}.exp_avg"].shape != p.shape:
            raise TrainingError(
                f"the saved optimizer state for {name} has shape {tuple(tensors[name + '.exp_avg'].shape)}"
            )
        optimizer.state[p] = {
            "step": tensors[f"{name}.step"].reshape(()).clone(),
            "exp_avg": tensors[f"{name}.exp_avg"].to(device),
            "exp_avg_sq": tensors[f"{name}.exp_avg_sq"].to(device),
        }
    if "torch_rng_state" in tensors:
        torch.set_rng_state(tensors["torch_rng_state"])


# ---------------------------------------------------------------- the loop
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
        self.options = CallOptions(look_ahead_mask=config.look_ahead_mask)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    # ------------------------------------------------------------ setup
    def _prepare(self) -> None:
        cfg = self.config
        resume = self.out / RESUME_DIR
        if (self.out / "config.json").exists() and not self.overwrite:
            raise TrainingError(f"{self.out} already holds a trained checkpoint; pass --overwrite to replace it")
        examples = load_training_examples(cfg)
        self.vocabulary = training_vocabulary(examples)
        saved_optimizer = None
        self._resume_state: dict[str, Any] = {}
        if resume.exists() and not self.overwrite:
            ckpt = load_checkpoint(resume)
            self.model, self.tokenizer = ckpt.model, ckpt.tokenizer
            self._resume_state = ckpt.extra_json.get(TRAINER_STATE, {})
            self.step = int(self._resume_state.get("step", 0))
            if (resume / OPTIMIZER_FILE).exists():
                saved_optimizer = read_safetensors(resume / OPTIMIZER_FILE)
        else:
            torch.manual_seed(cfg.seed)
            pairs = ((ex.src, ex.tgt) if isinstance(ex, Example) else ex for ex in examples)
            self.tokenizer = Tokenizer.train((s for pair in pairs for s in pair), vocab_size=cfg.vocab_size)
            model_cfg = TransformerConfig.preset(
                cfg.model_preset, vocab_size=self.tokenizer.vocab_size, **cfg.model_overrides
            )
            self.model = Transformer(model_cfg)
        self.model.to(self.device).train()
        self.data = TrainingData(examples, self.tokenizer, cfg, self.rank, self.world_size)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.0, betas=cfg.betas, eps=cfg.eps)
        if saved_optimizer is not None:
            load_optimizer_state(self.model, self.optimizer, saved_optimizer, self.device)
        d_model = self.model.config.d_model
        self.schedule = lambda step: noam_lr(step, d_model, cfg.warmup_steps, cfg.lr_factor)
        self.train_model: torch.nn.Module = self.model
        if self.distributed:
            from torch.nn.parallel import DistributedDataParallel

            self.train_model = DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )

    def card(self, wall_time: float, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "trained_by": "python -m transformer train",
            "train_config": self.config.to_dict(),
            "step": self.step,
            "wall_time_s": round(wall_time, 1),
            "world_size": self.world_size,
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "n_train_pairs": len(self.data),
            "parameters": self.model.num_parameters(),
            "vocabulary": self.vocabulary.to_card(),
            **(extra or {}),
        }

    def _save(self, path: Path, kind: str, wall: float) -> None:
        """Write a snapshot (kind "snapshot") or the resume checkpoint with optimizer and loop state ("resume")."""
        if not self.is_main:
            return
        resume = kind == "resume"
        save_checkpoint(
            path,
            self.model,
            self.tokenizer,
            self.card(wall),
            overwrite=True,
            extra_tensors={OPTIMIZER_FILE: optimizer_state(self.model, self.optimizer)} if resume else None,
            extra_json={TRAINER_STATE: self._loop_state(wall)} if resume else None,
        )
        for cb in self.callbacks:
            cb.on_checkpoint(self.step, path, kind)

    def _loop_state(self, wall: float) -> dict[str, Any]:
        """Where the data loop stands, so a resumed run continues with the very next batch."""
        return {"step": self.step, "wall_time_s": wall, "epoch": self._epoch, "batches_left": len(self._batches)}

    # ------------------------------------------------------------ loop
    def train(self) -> dict[str, Any]:
        """Run to config.steps (resuming if out/last exists); returns a summary."""
        self.out.mkdir(parents=True, exist_ok=True)
        with RunLock(self.out) if self.is_main else contextlib.nullcontext(), torch.random.fork_rng(devices=[]):
            return self._train()

    def _next_batch(self) -> list[int]:
        if not self._batches:
            self._batches = self.data.epoch(self._epoch)
            self._epoch += 1
        return self._batches.pop()

    def train_step(self, idx: list[int]) -> tuple[float, float, float, int]:
        """One optimisation step on the pairs idx: (loss, grad norm, accuracy, target tokens)."""
        cfg = self.config
        src, tgt_in, tgt_out = (t.to(self.device) for t in self.data.collate(idx))
        supervise = cfg.align_pronoun > 0
        out = self.train_model(src, tgt_in, options=self.options, return_attention=supervise)
        logits = out.logits  # (B, T, vocab)
        loss = F.cross_entropy(
            logits.reshape(-1, logits.size(-1)),
            tgt_out.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=cfg.label_smoothing,
        )
        if supervise:
            extra = alignment_loss(out.attention.cross, [self.data.alignments[i] for i in idx])
            if extra is not None:
                loss = loss + cfg.align_pronoun * extra
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm))
        self.optimizer.step()
        real = tgt_out != PAD_ID
        accuracy = float(((logits.argmax(-1) == tgt_out) & real).sum()) / max(int(real.sum()), 1)
        return loss.item(), grad_norm, accuracy, int(real.sum())

    def _train(self) -> dict[str, Any]:
        cfg = self.config
        self._prepare()
        for cb in self.callbacks:
            cb.on_start(self)
        start = time.perf_counter() - float(self._resume_state.get("wall_time_s", 0.0))
        if self.step == 0 and 0 in cfg.snapshot_steps:
            self._save(snapshot_dir(self.out, 0), "snapshot", 0.0)
        self._epoch, self._batches = 0, []
        if self._resume_state.get("epoch"):  # rebuild the interrupted epoch, minus the batches already used
            self._epoch = int(self._resume_state["epoch"])
            self._batches = self.data.epoch(self._epoch - 1)[: int(self._resume_state["batches_left"])]
        tokens_seen, rate_t0 = 0, time.perf_counter()
        while self.step < cfg.steps and not self.stop_event.is_set():
            idx = self._next_batch()
            self.step += 1
            lr = self.schedule(self.step)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            loss, grad_norm, accuracy, n_tokens = self.train_step(idx)
            tokens_seen += n_tokens
            now = time.perf_counter()
            if not math.isfinite(loss):
                raise TrainingError(f"loss became {loss} at step {self.step}; lower --lr-factor")
            event = TrainEvent(
                self.step, cfg.steps, loss, lr, tokens_seen / max(now - rate_t0, 1e-9), now - start, grad_norm, accuracy
            )
            for cb in self.callbacks:
                cb.on_step(event)
            if self.step in cfg.snapshot_steps:
                self._save(snapshot_dir(self.out, self.step), "snapshot", now - start)
            if self.step % cfg.checkpoint_every == 0 and self.step < cfg.steps:
                self._save(self.out / RESUME_DIR, "resume", now - start)
        wall = time.perf_counter() - start
        result = {"step": self.step, "wall_time_s": wall, "stopped": self.stop_event.is_set()}
        if self.distributed:
            result["replicas_equal"] = self._replicas_equal()
        if self.step >= cfg.steps and self.is_main:
            self.model.eval()
            ddp = {"replicas_equal": result["replicas_equal"]} if "replicas_equal" in result else {}
            save_checkpoint(
                self.out, self.model, self.tokenizer, self.card(wall, ddp), overwrite=True, keep_other_files=True
            )
            shutil.rmtree(self.out / RESUME_DIR, ignore_errors=True)
        elif self.is_main:
            self._save(self.out / RESUME_DIR, "resume", wall)
        for cb in self.callbacks:
            cb.on_end(self, result)
        return result

    def _replicas_equal(self) -> bool:
        """All-gather every rank's parameters and compare them exactly."""
        flat = torch.cat([p.detach().reshape(-1) for p in self.model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(self.world_size)]
        dist.all_gather(gathered, flat)
        return all(torch.equal(gathered[0], g) for g in gathered[1:])


__all__ = [
    "METRICS_FILE",
    "PRESETS",
    "JsonlLogger",
    "RunLock",
    "TqdmCallback",
    "TrainCallback",
    "TrainConfig",
    "TrainEvent",
    "Trainer",
    "TrainingData",
    "TrainingError",
    "load_optimizer_state",
    "noam_lr",
    "optimizer_state",
]
