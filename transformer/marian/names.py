"""Hugging Face Marian weight names <-> ours, and the d_model permutation between Marian's [sines | cosines]
position layout and the paper's interleaved one.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..config import TransformerConfig


def d_model_permutation(d_model: int) -> Tensor:
    """perm with ours[..., k] = marian[..., perm[k]]: Marian's sin i -> our 2i, its cos i -> our 2i + 1."""
    return torch.arange(d_model).view(2, d_model // 2).t().reshape(-1)


def _layer_names(prefix: str, ours: str, decoder: bool) -> dict[str, tuple[str, str]]:
    """Marian name -> (our name, how the d_model axis is permuted: "in", "out", "vec" or "").

    "in": a weight reading the residual stream (columns); "out": writing it (rows); "vec": a
    d_model vector (LayerNorm, an output bias); "": not on the d_model axis.
    """
    names: dict[str, tuple[str, str]] = {}

    def attention(theirs: str, mine: str) -> None:
        for p in "qkv":
            names[f"{prefix}.{theirs}.{p}_proj.weight"] = (f"{ours}.{mine}.w_{p}.weight", "in")
            names[f"{prefix}.{theirs}.{p}_proj.bias"] = (f"{ours}.{mine}.w_{p}.bias", "")
        names[f"{prefix}.{theirs}.out_proj.weight"] = (f"{ours}.{mine}.w_o.weight", "out")
        names[f"{prefix}.{theirs}.out_proj.bias"] = (f"{ours}.{mine}.w_o.bias", "vec")

    def norm(theirs: str, mine: str) -> None:
        names[f"{prefix}.{theirs}.weight"] = (f"{ours}.{mine}.weight", "vec")
        names[f"{prefix}.{theirs}.bias"] = (f"{ours}.{mine}.bias", "vec")

    attention("self_attn", "self_attn")
    norm("self_attn_layer_norm", "norm_1")
    if decoder:
        attention("encoder_attn", "cross_attn")
        norm("encoder_attn_layer_norm", "norm_2")
    names[f"{prefix}.fc1.weight"] = (f"{ours}.feed_forward.w_1.weight", "in")
    names[f"{prefix}.fc1.bias"] = (f"{ours}.feed_forward.w_1.bias", "")
    names[f"{prefix}.fc2.weight"] = (f"{ours}.feed_forward.w_2.weight", "out")
    names[f"{prefix}.fc2.bias"] = (f"{ours}.feed_forward.w_2.bias", "vec")
    norm("final_layer_norm", "norm_3" if decoder else "norm_2")
    return names


EMBEDDING_NAMES = (
    "model.shared.weight",
    "model.encoder.embed_tokens.weight",
    "model.decoder.embed_tokens.weight",
    "lm_head.weight",
)
SOURCE_EMBEDDING = "model.encoder.embed_tokens.weight"  # separate vocabularies: the source's rows
TARGET_EMBEDDINGS = ("model.decoder.embed_tokens.weight", "lm_head.weight")  # the target's rows, tied
POSITION_NAMES = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")


def weight_names(config: TransformerConfig) -> dict[str, tuple[str, str]]:
    """Every Marian layer weight -> (our name, its d_model permutation kind)."""
    names: dict[str, tuple[str, str]] = {}
    for i in range(config.n_encoder_layers):
        names.update(_layer_names(f"model.encoder.layers.{i}", f"encoder_layers.{i}", False))
    for i in range(config.n_decoder_layers):
        names.update(_layer_names(f"model.decoder.layers.{i}", f"decoder_layers.{i}", True))
    return names


def _permute(t: Tensor, how: str, perm: Tensor) -> Tensor:
    if how == "in":
        return t[:, perm]
    if how in ("out", "vec"):
        return t[perm]
    return t


def marian_positions(max_len: int, d_model: int) -> Tensor:
    """Marian's sinusoidal table: [sin for each frequency | cos for each frequency]."""
    from ..positional import sinusoidal_table

    return sinusoidal_table(max_len, d_model)[:, torch.argsort(d_model_permutation(d_model))]
