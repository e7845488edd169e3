"""Checkpoint averaging, as the paper does (Vaswani et al. 2017, §6.1: "For the base models, we used a single model
obtained by averaging the last 5 checkpoints, which were written at 10-minute intervals").

``average_checkpoints(paths, out)`` writes a checkpoint whose every weight is the element-wise mean of the same
weight in ``paths``. Each input is loaded and validated first (``load_checkpoint``: nothing is unpickled, nothing
outside the folder is read), and all of them must share ``config.json`` and the tokenizer's files byte for byte:
only weights of one model, taken at different steps of its training, can be averaged. The mean is taken in float32
and stored in the dtype the last input stores (a float16 checkpoint stays float16). ``out`` gets the last input's
config, tokenizer and card; the card gains ``averaged_from``: each input's folder name and training step.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import Tensor

from ..atomic import OverwriteError, is_our_checkpoint, write_folder
from ..checkpoint import _SAFETENSORS_DTYPES, CheckpointError, _unique_state, _write_json, load_checkpoint
from ..layout import AVERAGED_FROM, CARD_FILE, CONFIG_FILE, MODEL_FILE, is_checkpoint_dir, tokenizer_files

__all__ = ["AVERAGED_FROM", "average_checkpoints", "average_state"]
_STORED = {name: dtype for dtype, name in _SAFETENSORS_DTYPES.items() if dtype.is_floating_point}


def _stored_dtype(path: Path) -> torch.dtype:
    """The floating dtype model.safetensors stores (float16 for a shipped checkpoint, float32 for a run's)."""
    with safe_open(str(path / MODEL_FILE), framework="pt") as fh:
        kinds = {fh.get_slice(k).get_dtype() for k in fh.keys()} & set(_STORED)
    if len(kinds) != 1:
        raise CheckpointError(f"{path}: {MODEL_FILE} mixes floating dtypes {sorted(kinds)}")
    return _STORED[kinds.pop()]


def _same_files(paths: Sequence[Path]) -> tuple[str, ...]:
    """The config and tokenizer file names, checked to be byte for byte the same in every input."""
    for path in paths:
        if not is_checkpoint_dir(path):
            raise CheckpointError(f"{path} is not a checkpoint folder")
    names = (CONFIG_FILE, *(tokenizer_files(paths[-1]) or ()))
    for path in paths[:-1]:
        for name in names:
            if not (path / name).is_file() or (path / name).read_bytes() != (paths[-1] / name).read_bytes():
                raise CheckpointError(
                    f"{path} and {paths[-1]} differ in {name}: only one model's weights at different steps "
                    "can be averaged"
                )
    return names


def average_state(paths: Sequence[str | Path]) -> tuple[dict[str, Tensor], list[dict[str, Any]]]:
    """The mean of the inputs' weights (float32), and what ``averaged_from`` records of each input.

    Raises CheckpointError for fewer than two inputs, an input that does not load, or inputs of different models.
    """
    state, record, _ = _average([Path(p) for p in paths])
    return state, record


def _average(paths: list[Path]) -> tuple[dict[str, Tensor], list[dict[str, Any]], tuple[str, ...]]:
    """average_state's mean and record, and the config and tokenizer file names all inputs share."""
    if len(paths) < 2:
        raise CheckpointError("averaging needs at least two checkpoints")
    names = _same_files(paths)
    total: dict[str, Tensor] = {}
    record = []
    for path in paths:
        ckpt = load_checkpoint(path)
        for name, tensor in _unique_state(ckpt.model).items():
            total[name] = total.get(name, 0) + tensor.float()
        step = ckpt.card.get("step")
        record.append({"name": path.resolve().name, "step": step if isinstance(step, int) else None})
    return {name: t / len(paths) for name, t in total.items()}, record, names


def average_checkpoints(
    paths: Sequence[str | Path], out: str | Path, *, overwrite: bool = False, keep_other_files: bool = False
) -> Path:
    """Write the checkpoint whose weights are the mean of the inputs' (see the module's docstring).

    Args:
        overwrite: replace a checkpoint at out (out may be one of the inputs: all are read before anything is
            written, and the folder is replaced atomically).
        keep_other_files: carry over what out holds besides a checkpoint's files (a shipped checkpoint's README.md,
            snapshots/ and metrics.jsonl).
    """
    paths = [Path(p) for p in paths]
    state, record, names = _average(paths)
    last = paths[-1]
    dtype = _stored_dtype(last)
    state = {k: v.to(dtype) for k, v in state.items()}
    copied = {name: (last / name).read_bytes() for name in names}
    card = json.loads((last / CARD_FILE).read_text(encoding="utf-8"))
    card[AVERAGED_FROM] = record

    def fill(tmp: Path) -> None:
        save_file(state, str(tmp / MODEL_FILE), metadata={"format": "pt"})
        for name, data in copied.items():
            (tmp / name).write_bytes(data)
        _write_json(tmp / CARD_FILE, card)

    try:
        return write_folder(
            out,
            fill,
            overwrite=overwrite,
            recognise=lambda p: is_our_checkpoint(p),
            what="a checkpoint",
            keep_other_files=keep_other_files,
        )
    except OverwriteError as exc:
        raise CheckpointError(str(exc)) from None
