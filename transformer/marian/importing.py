"""import_marian: a checked Marian folder's weights converted to ours (float32, d_model axis permuted) and
written as a checkpoint.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import Tensor

from ..atomic import OverwriteError, check_replaceable, is_our_checkpoint
from ..checkpoint import CheckpointError, save_checkpoint
from ..config import TransformerConfig
from ..layout import check_name
from ..model import Transformer
from .folder import SAFETENSORS, MarianError, MarianFolder, _load_pickle, inspect_folder
from .names import (
    EMBEDDING_NAMES,
    POSITION_NAMES,
    SOURCE_EMBEDDING,
    TARGET_EMBEDDINGS,
    _permute,
    d_model_permutation,
    marian_positions,
    weight_names,
)


def _read_weights(folder: MarianFolder) -> dict[str, Tensor]:
    if folder.weights.name == SAFETENSORS:
        from safetensors.torch import load_file

        try:
            return load_file(str(folder.weights))
        except Exception as exc:
            raise MarianError(f"{SAFETENSORS} is corrupt: {exc}") from None
    return _load_pickle(folder.weights)


def convert_weights(state: dict[str, Tensor], config: TransformerConfig) -> dict[str, Tensor]:
    """Marian's weights as our state dict (float32, d_model axis permuted)."""
    perm = d_model_permutation(config.d_model)
    f32 = {k: v.float() for k, v in state.items()}
    for k, v in f32.items():
        if not torch.isfinite(v).all():
            raise MarianError(f"{k} contains NaN or infinite values")
    if config.separate_vocabularies:
        target = [f32[k] for k in TARGET_EMBEDDINGS if k in f32]
        if any(not torch.equal(target[0], e) for e in target[1:]):
            raise MarianError("lm_head.weight differs from the decoder's embedding (not tied); only tied ones import")
        ours = {"src_embed.weight": f32[SOURCE_EMBEDDING][:, perm], "tgt_embed.weight": target[0][:, perm]}
    else:
        embeddings = [f32[k] for k in EMBEDDING_NAMES if k in f32]
        if any(not torch.equal(embeddings[0], e) for e in embeddings[1:]):
            raise MarianError("the embedding matrices differ (not tied); only tied embeddings import")
        ours = {"src_embed.weight": embeddings[0][:, perm]}
    for theirs, (mine, how) in weight_names(config).items():
        ours[mine] = _permute(f32[theirs], how, perm)
    bias = f32.get("final_logits_bias", torch.zeros(1, config.target_vocab_size))
    ours["generator.bias"] = bias.reshape(-1)
    for key in POSITION_NAMES:
        if key in f32:
            table = marian_positions(config.max_len, config.d_model)
            if not torch.allclose(f32[key], table, atol=1e-3):
                raise MarianError(f"{key} is not Marian's sinusoidal table; learned positions are not supported")
    return ours


def import_marian(
    src: str | Path,
    out: str | Path,
    *,
    overwrite: bool = False,
    allow_pickle: bool = True,
    target_lang: str | None = None,
    inspected: MarianFolder | None = None,
) -> Path:
    """Import a Marian folder as a checkpoint at out (written atomically, nothing written on any error).

    inspected: what :func:`inspect_folder` returned for src, to skip checking it twice.
    """
    out = Path(out)
    try:
        check_name(out.name)
    except ValueError as exc:
        raise MarianError(f"--out {out}: {exc}") from None
    if out.exists() and not overwrite:
        raise MarianError(f"{out} already exists; pass --overwrite to replace it")
    if out.exists():  # refuse before the work (save_checkpoint checks again when it swaps)
        try:
            check_replaceable(out, is_our_checkpoint, "a checkpoint")
        except OverwriteError as exc:
            raise MarianError(str(exc)) from None
    folder = inspected or inspect_folder(src, allow_pickle=allow_pickle, target_lang=target_lang)
    state = convert_weights(_read_weights(folder), folder.config)
    model = Transformer(folder.config)
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = ("generator.weight",) if folder.config.separate_vocabularies else ("tgt_embed.weight", "generator.weight")
    if unexpected or [m for m in missing if m not in tied]:
        raise MarianError(f"internal: weights left over {unexpected[:5]} or missing {missing[:5]}")
    model.eval()
    try:
        return save_checkpoint(out, model, folder.tokenizer, folder.card, overwrite=overwrite)
    except CheckpointError as exc:
        raise MarianError(str(exc)) from None
