"""Positional encodings (§3.5), measured: waves, similarity, the relative-position property, order-blindness."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
import torch

from ..decoding import greedy_decode, require_eval
from ..model import Transformer
from ..options import CallOptions
from ..tokenizer import Tokenizer
from . import on_model_device


def wavelength(pair: int, d_model: int) -> float:
    """Dimensions 2i and 2i+1 oscillate with wavelength 2π · 10000^(2i/d_model) positions."""
    return 2 * math.pi * 10000 ** (2 * pair / d_model)


def rotation(k: int, d_model: int) -> np.ndarray:
    """M_k with PE(pos + k) = M_k · PE(pos): one 2×2 rotation by k·ω_i per (sin, cos) pair of dimensions."""
    m = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        w = 10000 ** (-2 * i / d_model)
        c, s = math.cos(k * w), math.sin(k * w)
        # sin(a + b) = sin a cos b + cos a sin b;  cos(a + b) = cos a cos b - sin a sin b
        m[2 * i, 2 * i], m[2 * i, 2 * i + 1] = c, s
        m[2 * i + 1, 2 * i], m[2 * i + 1, 2 * i + 1] = -s, c
    return m


def relative_position_error(table: np.ndarray, k: int) -> float:
    """Largest |PE(pos + k) − M_k PE(pos)| over every position the table covers (one M_k for all of them)."""
    table = np.asarray(table, dtype=np.float64)
    shifted = table[:-k] @ rotation(k, table.shape[1]).T if k else table
    return float(np.abs(shifted - table[k:]).max())


def similarity(table: np.ndarray) -> np.ndarray:
    """PE · PEᵀ: (positions, positions)."""
    table = np.asarray(table, dtype=np.float64)
    return table @ table.T


@on_model_device
def position_table(model: Transformer, n: int) -> np.ndarray | None:
    """The first n rows of the model's positional encoding (sinusoidal or learned), None without one."""
    table = model.positional.table
    return None if table is None else table[:n].detach().float().cpu().numpy()


@on_model_device
@torch.inference_mode()
def embedding_norms(model: Transformer, ids: list[int]) -> tuple[np.ndarray, np.ndarray | None]:
    """Per position: ‖√d_model · E[token]‖ and ‖PE(pos)‖ (§3.4: the scaling keeps the words from drowning)."""
    emb, _ = model.embed(torch.tensor([ids]), model.src_embed)
    table = position_table(model, len(ids))
    return emb[0].norm(dim=-1).cpu().numpy(), None if table is None else np.linalg.norm(table, axis=-1)


def shuffle(n: int, seed: int) -> list[int]:
    """A permutation of the n - 1 pieces before </s> (which stays last), never the identity when n > 2."""
    order = list(range(n - 1))
    rng = random.Random(seed)
    for _ in range(100):
        rng.shuffle(order)
        if n <= 2 or order != sorted(order):
            break
    return order + [n - 1]


@dataclass
class OrderDemo:
    """The same pieces in another order: without positions the encoder cannot tell the difference."""

    permutation: list[int]  # shuffled[i] = original[permutation[i]]
    pieces: list[str]
    shuffled_pieces: list[str]
    delta_without: float  # max |A_shuffled − P A P^T| over every layer and head, positions removed
    delta_with: float  # ... positions kept
    translation_without: str
    shuffled_translation_without: str
    translation_with: str
    shuffled_translation_with: str
    maps_without: np.ndarray  # (L, H, S, S) original, positions removed
    shuffled_maps_without: np.ndarray


@on_model_device
@torch.inference_mode()
def order_blindness(model: Transformer, tokenizer: Tokenizer, text: str, seed: int) -> OrderDemo:
    require_eval(model)
    ids = tokenizer.source_ids(text, model.config.max_len)
    perm = shuffle(len(ids), seed)
    shuffled = [ids[p] for p in perm]
    index = torch.tensor(perm)
    results = {}
    for name, options in (("without", CallOptions(positions=False)), ("with", CallOptions())):
        maps, texts = [], []
        for seq in (ids, shuffled):
            src = torch.tensor([seq])
            att = model(src, src[:, :1], options=options, return_attention=True).attention.encoder
            maps.append(torch.stack([a[0] for a in att]))  # (L, H, S, S)
            out = greedy_decode(model, src, 2 * len(seq) + 8, return_attention=False, options=options)
            texts.append(tokenizer.decode(out.tokens))
        permuted = maps[0][..., index, :][..., :, index]  # P A Pᵀ
        results[name] = (float((maps[1] - permuted).abs().max()), texts, maps)
    return OrderDemo(
        perm,
        tokenizer.source_pieces(ids),
        tokenizer.source_pieces(shuffled),
        results["without"][0],
        results["with"][0],
        results["without"][1][0],
        results["without"][1][1],
        results["with"][1][0],
        results["with"][1][1],
        results["without"][2][0].cpu().numpy(),
        results["without"][2][1].cpu().numpy(),
    )
