"""The one checkpoint format: a directory of safetensors + JSON + the tokenizer's files.

The tokenizer is ours (``tokenizer.model``) or, for an imported opus-mt model, Marian's
(``source.spm``, ``target.spm``, ``vocab.json``, plus ``target_vocab.json`` when source and
target have vocabularies of their own): see :mod:`transformer.tokenizer`.

The files are listed in :mod:`transformer.layout`. Training checkpoints may add
``optimizer.safetensors`` and ``trainer_state.json`` so a killed run can resume.
Nothing is ever unpickled: safetensors refuses any file whose header is not its
own, and the JSON is parsed as data.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import Tensor

from .atomic import OverwriteError, is_our_checkpoint, write_folder
from .beams import MAX_ALPHA, PAPER_ALPHA
from .config import ConfigError, TransformerConfig
from .layout import (
    CARD_FILE,
    CONFIG_FILE,
    MARIAN_SEPARATE_FILES,
    MARIAN_TOKENIZER_FILES,
    MODEL_FILE,
    REQUIRED_FILES,
    TOKENIZER_FILE,
    inside,
    tokenizer_files,
)
from .model import Transformer
from .positional import sinusoidal_table
from .tokenizer import MarianTokenizer, Tokenizer, TokenizerBase, TokenizerError

MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_TOKENIZER_BYTES = 32 * 1024 * 1024
MAX_SAFETENSORS_HEADER = 16 * 1024 * 1024
CONFIG_LIMITS = {"max_len": 8192, "n_encoder_layers": 64, "n_decoder_layers": 64}
DECODING = "decoding"  # card.json: {"alpha": the beam's length penalty chosen on a dev set, ...}


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, inconsistent or not ours."""


@dataclass
class Checkpoint:
    model: Transformer
    config: TransformerConfig
    tokenizer: TokenizerBase
    card: dict[str, Any]
    path: Path | None = None
    extra_json: dict[str, Any] = field(default_factory=dict)

    @property
    def alpha(self) -> float:
        """The length penalty α its beam search uses: the card's choice, else the paper's 0.6 (§6.1)."""
        return card_alpha(self.card)


def card_number(x: Any) -> float | None:
    """x as a float when a card holds a finite number there; None for anything else: a bool, a string, and the NaN,
    Infinity or 400-digit integer that json.loads accepts."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        v = float(x)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def card_alpha(card: dict[str, Any]) -> float:
    """card["decoding"]["alpha"] (scripts/sweep_length_penalty.py --write), checked; PAPER_ALPHA without one."""
    entry = card.get(DECODING)
    if entry is None:
        return PAPER_ALPHA
    alpha = entry.get("alpha") if isinstance(entry, dict) else None
    value = card_number(alpha)
    if value is None or not 0.0 <= value <= MAX_ALPHA:
        raise CheckpointError(f"card.json: decoding.alpha must be a number from 0 to {MAX_ALPHA:g}, not {alpha!r}")
    return value


def _unique_params(model: torch.nn.Module) -> dict[str, Tensor]:
    """State entries with each shared tensor (tied embeddings) kept once, under its first name."""
    seen: set[int] = set()
    out = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) not in seen:
            seen.add(id(tensor))
            out[name] = tensor
    return out


def _unique_state(model: torch.nn.Module) -> dict[str, Tensor]:
    """What model.safetensors holds: the unique tensors, detached, on the CPU."""
    return {name: t.detach().contiguous().cpu() for name, t in _unique_params(model).items()}


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def save_checkpoint(
    path: str | Path,
    model: Transformer,
    tokenizer: TokenizerBase,
    card: dict[str, Any] | None = None,
    *,
    overwrite: bool = False,
    extra_tensors: dict[str, dict[str, Tensor]] | None = None,
    extra_json: dict[str, Any] | None = None,
    keep_other_files: bool = False,
) -> Path:
    """Write a checkpoint directory atomically (a temporary sibling, then a rename: transformer.atomic).

    Args:
        overwrite: replace an existing checkpoint at path (else CheckpointError); a folder that is not a
            checkpoint (or holds files a checkpoint does not) is never replaced.
        extra_tensors / extra_json: more files to write, by file name.
        keep_other_files: carry over entries of an existing path that this call
            does not write (a training run's snapshots/ and metrics log); the path may then be a
            training run's folder that holds no checkpoint yet.
    """

    def fill(tmp: Path) -> None:
        save_file(_unique_state(model), str(tmp / MODEL_FILE), metadata={"format": "pt"})
        _write_json(tmp / CONFIG_FILE, model.config.to_dict())
        for name, data in tokenizer.files().items():
            (tmp / name).write_bytes(data)
        _write_json(tmp / CARD_FILE, card or {})
        for name, tensors in (extra_tensors or {}).items():
            save_file({k: v.detach().contiguous().cpu() for k, v in tensors.items()}, str(tmp / name))
        for name, data in (extra_json or {}).items():
            _write_json(tmp / name, data)

    try:
        return write_folder(
            path,
            fill,
            overwrite=overwrite,
            recognise=lambda p: is_our_checkpoint(p, run_folder=keep_other_files),
            what="a checkpoint",
            keep_other_files=keep_other_files,
        )
    except OverwriteError as exc:
        raise CheckpointError(str(exc)) from None


def update_card(path: str | Path, updates: dict[str, Any]) -> dict[str, Any]:
    """Merge updates into a checkpoint's card.json (written to a temporary file, then renamed)."""
    path = Path(path)
    card = read_json(path / CARD_FILE)
    card.update(updates)
    tmp = path / f".{CARD_FILE}.tmp"
    _write_json(tmp, card)
    os.replace(tmp, path / CARD_FILE)
    return card


def read_json(path: Path) -> Any:
    if path.stat().st_size > MAX_JSON_BYTES:
        raise CheckpointError(f"{path.name} is larger than {MAX_JSON_BYTES} bytes")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, and an integer of more digits than Python allows
        raise CheckpointError(f"{path.name} is not valid JSON: {exc}") from None


def read_safetensors(path: Path) -> dict[str, Tensor]:
    """Load a safetensors file after checking its header, never unpickling anything."""
    read_safetensors_header_guard(path)
    try:
        return load_file(str(path))
    except Exception as exc:  # safetensors raises SafetensorError / OSError
        raise CheckpointError(f"{path.name} is corrupt: {exc}") from None


def read_safetensors_header_guard(path: Path) -> None:
    """Cheap checks that the file starts like a safetensors file: an 8-byte length, then JSON."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path.name} is truncated")
        (header_len,) = struct.unpack("<Q", head)
        if header_len > MAX_SAFETENSORS_HEADER or header_len + 8 > size:
            raise CheckpointError(f"{path.name} is not a safetensors file (bad header length)")
        first = fh.read(1)
    if first != b"{":
        raise CheckpointError(f"{path.name} is not a safetensors file (header is not JSON)")


def _check_header(path: Path, expected: dict[str, tuple[tuple[int, ...], torch.dtype]]) -> None:
    """Names, shapes and dtypes from a safetensors header (nothing loaded) must match expected."""
    read_safetensors_header_guard(path)
    try:
        with safe_open(str(path), framework="pt") as fh:
            found = {k: (tuple(fh.get_slice(k).get_shape()), fh.get_slice(k).get_dtype()) for k in fh.keys()}
    except Exception as exc:  # SafetensorError and friends
        raise CheckpointError(f"{path.name} is corrupt: {exc}") from None
    if set(found) != set(expected):
        extra = sorted(set(found) - set(expected))[:5]
        lacking = sorted(set(expected) - set(found))[:5]
        raise CheckpointError(f"weights do not match config.json: unexpected {extra}, missing {lacking}")
    for name, (shape, dtype) in expected.items():
        if found[name][0] != shape:
            raise CheckpointError(
                f"weights do not match config.json: {name} has shape {found[name][0]}, expected {shape}"
            )
        # float32 weights may be stored in half precision (a float16 snapshot: TrainConfig.snapshot_dtype); they
        # are read back into the float32 model
        stored = _HALF if dtype == torch.float32 else {_SAFETENSORS_DTYPES.get(dtype)}
        if found[name][1] not in stored:
            raise CheckpointError(f"{name} has dtype {found[name][1]}, expected {dtype}")


_SAFETENSORS_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}
_HALF = {"F32", "F16", "BF16"}


def load_checkpoint(path: str | Path, *, map_location: str = "cpu") -> Checkpoint:
    """Load and validate a checkpoint directory; the model is returned in eval mode.

    Raises CheckpointError with a readable message for anything wrong.
    """
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(f"{path} is not a checkpoint directory")
    names = tokenizer_files(path) or (TOKENIZER_FILE,)
    missing = [f for f in REQUIRED_FILES + names if not (path / f).is_file()]
    if missing:
        raise CheckpointError(f"{path} is missing {', '.join(missing)}")
    outside = [f for f in REQUIRED_FILES + names if not inside(path, path / f)]
    if outside:
        raise CheckpointError(f"{', '.join(outside)} of {path.name} lead(s) outside the checkpoint folder; not read")
    try:
        config = TransformerConfig.from_dict(read_json(path / CONFIG_FILE))
    except (ConfigError, TypeError) as exc:
        raise CheckpointError(f"config.json is invalid: {exc}") from None
    for name, limit in CONFIG_LIMITS.items():  # what no weight shape bounds: the position table, the stack
        if getattr(config, name) > limit:
            raise CheckpointError(f"config.json: {name} = {getattr(config, name)} is more than this app handles")
    card = read_json(path / CARD_FILE)
    if not isinstance(card, dict):
        raise CheckpointError("card.json must be a JSON object")
    card_alpha(card)
    tokenizer = load_tokenizer(path, names, config)
    # Compare the file's header with the shapes the config implies before allocating anything:
    # a hostile config.json cannot make us build a huge model, nor a file make us read one.
    with torch.device("meta"):
        expected = _unique_params(Transformer(config))
    _check_header(path / MODEL_FILE, {name: (tuple(t.shape), t.dtype) for name, t in expected.items()})
    state = read_safetensors(path / MODEL_FILE)
    for name, tensor in state.items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise CheckpointError(f"{name} contains NaN or infinite values")
    model = _assemble(config, state, expected)
    model.to(map_location).eval()
    extra_json = {}
    for f in sorted(path.glob("*.json")):
        if f.name not in (CONFIG_FILE, CARD_FILE, *names) and f.is_file() and inside(path, f):
            extra_json[f.name] = read_json(f)
    return Checkpoint(model, config, tokenizer, card, path, extra_json)


def _assemble(config: TransformerConfig, state: dict[str, Tensor], expected: dict[str, Tensor]) -> Transformer:
    """The model with state's tensors as its parameters: built on the meta device (no random model is made
    and then overwritten: half the memory) and the checked tensors assigned, in the model's dtypes."""
    with torch.device("meta"):
        model = Transformer(config)
    state = {name: t.to(expected[name].dtype) for name, t in state.items()}  # a float16 snapshot -> float32
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    if config.tie_embeddings:  # stored once (the first name): the projection is the target embedding again
        model.generator.weight = model.tgt_embed.weight
    positional = model.positional
    if isinstance(getattr(positional, "table", None), Tensor) and positional.table.is_meta:
        # the sinusoidal table is computed, never stored (a non-persistent buffer)
        positional.table = sinusoidal_table(config.max_len, config.d_model)
    left = [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if unexpected or left:
        raise CheckpointError(f"internal: weights left over {unexpected[:5]} or never loaded {left[:5]}")
    return model


def load_tokenizer(path: Path, names: tuple[str, ...], config: TransformerConfig) -> TokenizerBase:
    """The tokenizer stored in a checkpoint directory (ours or Marian's, by its files), checked against config."""
    for name in names:
        if (path / name).stat().st_size > MAX_TOKENIZER_BYTES:
            raise CheckpointError(f"{name} is too large")
    files = {name: (path / name).read_bytes() for name in names}
    if config.separate_vocabularies and names != MARIAN_SEPARATE_FILES:
        raise CheckpointError(
            f"config.json gives the target a vocabulary of its own (tgt_vocab_size {config.tgt_vocab_size}) "
            f"but the checkpoint has no {MARIAN_SEPARATE_FILES[-1]}"
        )
    try:
        if names in (MARIAN_TOKENIZER_FILES, MARIAN_SEPARATE_FILES):  # a stray target_vocab.json is refused there
            tokenizer: TokenizerBase = MarianTokenizer.from_files(
                files, config.vocab_size, config.bos_id, config.tgt_vocab_size
            )
        else:
            tokenizer = Tokenizer.from_bytes(files[TOKENIZER_FILE])
    except TokenizerError as exc:
        raise CheckpointError(f"the tokenizer is invalid: {exc}") from None
    if (tokenizer.vocab_size, tokenizer.target_vocab_size) != (config.vocab_size, config.target_vocab_size):
        raise CheckpointError(
            f"tokenizer has {tokenizer.vocab_size} pieces but config.vocab_size is {config.vocab_size}"
            if tokenizer.vocab_size != config.vocab_size
            else f"tokenizer's target has {tokenizer.target_vocab_size} pieces but config.json says "
            f"{config.target_vocab_size}"
        )
    ids = (config.pad_id, config.eos_id)
    if (tokenizer.special.pad, tokenizer.special.eos) != ids:
        raise CheckpointError(
            f"tokenizer's pad and eos ids are {tokenizer.special.pad} and {tokenizer.special.eos}, "
            f"config.json says {ids[0]} and {ids[1]}"
        )
    return tokenizer
