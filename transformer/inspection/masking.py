"""What the two masks do, measured on a real model (§3.2.3): padding and look-ahead, on and off.

Every function runs the shared model in eval mode with CallOptions; nothing is set on the model.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..attention import AttentionKind
from ..checkpoint import CheckpointError, card_number, read_json
from ..decoding import greedy_decode, require_eval
from ..layout import CARD_FILE, METRICS_FILE
from ..model import Transformer
from ..options import CallOptions
from ..tokenizer import Tokenizer, pad_batch
from ..training.metrics import read_metrics
from . import on_model_device


class Stage(StrEnum):
    """A step of one attention call as the mask lessons show it."""

    SCALED = "scaled"  # QKᵀ/√d_k
    MASKED = "masked"  # scaled, with -inf where the mask hides a key
    WEIGHTS = "weights"  # softmax(masked)
    OPEN = "open"  # the softmax with the mask switched off (look-ahead only)


MASK_STAGES = (Stage.SCALED, Stage.MASKED, Stage.WEIGHTS)


@dataclass
class PaddingDemo:
    """Two sentences batched, the shorter one padded; the encoder's self-attention of every layer and head.

    Arrays are (B, L, H, S, S): scaled = QKᵀ/√d_k, masked = scaled with -inf at pad keys, weights = softmax.
    """

    pieces: list[list[str]]  # per sentence, padded with "<pad>" to S
    lengths: list[int]  # real pieces (EOS included)
    mask: np.ndarray  # (B, 1, 1, S) bool, True = may attend
    scaled: np.ndarray
    masked: np.ndarray
    weights: np.ndarray

    def stage(self, stage: Stage) -> np.ndarray:
        """(B, L, H, S, S) values of one stage."""
        return {Stage.SCALED: self.scaled, Stage.MASKED: self.masked, Stage.WEIGHTS: self.weights}[stage]

    @property
    def padded(self) -> int:
        """The row of the batch that is padded (the shorter sentence)."""
        return int(np.argmin(self.lengths))

    def pad_weight(self) -> float:
        """The largest weight any query puts on a pad key: exactly 0 with the mask."""
        b = self.padded
        return float(self.weights[b, ..., self.lengths[b] :].max(initial=0.0))


@on_model_device
@torch.inference_mode()
def padding_demo(model: Transformer, tokenizer: Tokenizer, texts: list[str]) -> PaddingDemo:
    require_eval(model)
    ids = [tokenizer.source_ids(t, model.config.max_len) for t in texts]
    src = pad_batch(ids, model.config.pad_id)
    out = model(src, torch.full((len(ids), 1), model.config.bos_id), return_intermediates=True)
    traces = [layer.self_attention for layer in out.intermediates.encoder]
    stack = lambda pick: torch.stack([pick(t) for t in traces], 1).cpu().numpy()  # noqa: E731 (B, L, H, S, S)
    S = src.size(1)
    pieces = [tokenizer.source_pieces(x) + ["<pad>"] * (S - len(x)) for x in ids]
    mask = model.source_mask(src).cpu().numpy()
    scaled, masked, weights = stack(lambda t: t.scaled), stack(lambda t: t.masked), stack(lambda t: t.weights)
    return PaddingDemo(pieces, [len(x) for x in ids], mask, scaled, masked, weights)


@dataclass
class LookAheadDemo:
    """Teacher forcing on the model's own translation, with the look-ahead mask and without it.

    Arrays are (L, H, T, T) for decoder self-attention; predictions are the argmax piece of each row.
    """

    inputs: list[str]  # decoder input pieces, <s> first
    targets: list[str]  # what each row should predict (the translation, </s> last)
    scaled: np.ndarray
    masked: np.ndarray
    weights: np.ndarray
    weights_open: np.ndarray  # without the mask
    loss: float  # mean cross-entropy of the targets, with the mask
    loss_open: float  # ... without it
    predicted: list[str]
    predicted_open: list[str]

    def stage(self, stage: Stage) -> np.ndarray:
        """(L, H, T, T) values of one stage."""
        return {
            Stage.SCALED: self.scaled,
            Stage.MASKED: self.masked,
            Stage.WEIGHTS: self.weights,
            Stage.OPEN: self.weights_open,
        }[stage]

    def upper(self, weights: np.ndarray) -> np.ndarray:
        """The weights strictly above the diagonal (queries looking at later positions)."""
        T = weights.shape[-1]
        return weights[..., np.triu(np.ones((T, T), dtype=bool), 1)]


@on_model_device
@torch.inference_mode()
def look_ahead_demo(model: Transformer, tokenizer: Tokenizer, text: str) -> LookAheadDemo:
    require_eval(model)
    src = torch.tensor([tokenizer.source_ids(text, model.config.max_len)])
    produced = greedy_decode(model, src, 2 * src.size(1) + 8, return_attention=False).tokens
    bos, eos = model.config.bos_id, model.config.eos_id
    if not produced or produced[-1] != eos:
        produced = produced + [eos]
    tgt_in = torch.tensor([[bos] + produced[:-1]])
    tgt_out = torch.tensor(produced)

    def run(options: CallOptions):
        out = model(src, tgt_in, options=options, return_intermediates=True)
        loss = float(F.cross_entropy(out.logits[0], tgt_out))
        return out, loss, tokenizer.target_pieces(out.logits[0].argmax(-1).tolist())

    masked_out, loss, predicted = run(CallOptions())
    open_out, loss_open, predicted_open = run(CallOptions(look_ahead_mask=False))
    traces = [masked_out.intermediates.trace(AttentionKind.DECODER, i) for i in range(model.config.n_decoder_layers)]
    stack = lambda ts, pick: torch.stack([pick(t)[0] for t in ts]).cpu().numpy()  # noqa: E731 (L, H, T, T)
    open_traces = [open_out.intermediates.trace(AttentionKind.DECODER, i) for i in range(model.config.n_decoder_layers)]
    return LookAheadDemo(
        tokenizer.target_pieces(tgt_in[0].tolist()),
        tokenizer.target_pieces(produced),
        stack(traces, lambda t: t.scaled),
        stack(traces, lambda t: t.masked),
        stack(traces, lambda t: t.weights),
        stack(open_traces, lambda t: t.weights),
        loss,
        loss_open,
        predicted,
        predicted_open,
    )


TARGET_PADS = 3  # pads after the target in the padded batch


@dataclass
class PaddingEffect:
    """A sentence alone against the same sentence padded in a batch, with the padding mask and without it.

    The outputs are compared in float64 (a copy of the model), so that rounding cannot hide or fake a
    difference: with the mask the padded run equals the run alone to ~1e-15.
    """

    n_pads: int
    delta: float  # largest |Δ| of the encoder output and the logits at real positions, with the mask
    delta_open: float  # ... without it
    translation: str  # greedy, padded, with the mask
    translation_open: str  # greedy, padded, the pads visible to attention


@on_model_device
@torch.inference_mode()
def padding_effect(model: Transformer, tokenizer: Tokenizer, text: str, other: str) -> PaddingEffect:
    """Pads text to the longer of the two (at least one pad) and compares with text alone."""
    require_eval(model)
    ids = tokenizer.source_ids(text, model.config.max_len)
    other_ids = tokenizer.source_ids(other, model.config.max_len)
    S = min(max(len(ids) + 1, len(other_ids)), model.config.max_len)
    bos, eos, pad = model.config.bos_id, model.config.eos_id, model.config.pad_id
    if S <= len(ids):
        ids = ids[: S - 2] + [eos]
    tgt = [bos] + greedy_decode(model, torch.tensor([ids]), 2 * len(ids) + 8, return_attention=False).tokens[:-1]
    tgt = tgt[: model.config.max_len - TARGET_PADS]  # a translation that ran to the limit leaves room for the pads
    alone_src, alone_tgt = torch.tensor([ids]), torch.tensor([tgt])
    padded_src = torch.tensor([ids + [pad] * (S - len(ids))])
    padded_tgt = torch.tensor([tgt + [pad] * TARGET_PADS])
    exact = copy.deepcopy(model).double()  # the shared model itself is never changed
    alone = exact(alone_src, alone_tgt)
    deltas = {}
    translations = {}
    for name, options in (("masked", CallOptions()), ("open", CallOptions(padding_mask=False))):
        out = exact(padded_src, padded_tgt, options=options)
        d_memory = (out.memory[0, : len(ids)] - alone.memory[0]).abs().max()
        d_logits = (out.logits[0, : len(tgt)] - alone.logits[0]).abs().max()
        deltas[name] = float(max(d_memory, d_logits))
        tokens = greedy_decode(model, padded_src, 2 * S + 8, return_attention=False, options=options).tokens
        translations[name] = tokenizer.decode(tokens)
    return PaddingEffect(S - len(ids), deltas["masked"], deltas["open"], translations["masked"], translations["open"])


@dataclass(frozen=True)
class LeakRun:
    """One of the look-ahead twins (checkpoints/leak-masked, leak-no-mask) as its files tell it."""

    steps: list[int]
    losses: list[float]
    look_ahead_mask: bool
    exact_match: float | None
    wall_time_s: float | None

    @property
    def final_loss(self) -> float | None:
        return self.losses[-1] if self.losses else None


def read_leak_run(path: Path) -> LeakRun:
    """The twin at path: its card (size-capped, every field type-checked) and its logged losses (a record without
    a numeric loss is skipped). Raises CheckpointError for a card that cannot be read."""
    card = read_json(path / CARD_FILE)
    if not isinstance(card, dict):
        raise CheckpointError(f"{CARD_FILE} is not a JSON object")
    records = [m for m in read_metrics(path / METRICS_FILE).steps if card_number(m.get("loss")) is not None]
    train_config = card.get("train_config") if isinstance(card.get("train_config"), dict) else {}
    evaluation = card.get("evaluation") if isinstance(card.get("evaluation"), dict) else {}
    return LeakRun(
        steps=[int(m["step"]) if isinstance(m["step"], int) else i for i, m in enumerate(records)],
        losses=[float(m["loss"]) for m in records],
        look_ahead_mask=train_config.get("look_ahead_mask", True) is not False,
        exact_match=card_number(evaluation.get("exact_match")),
        wall_time_s=card_number(card.get("wall_time_s")),
    )
