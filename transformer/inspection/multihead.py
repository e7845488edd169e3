"""Multi-head attention taken apart (§3.2.2): each head's output, Concat, W_O, and each head's share.

MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_O + b_O. Because W_O acts on the concatenation,
it splits into one block per head: the output is Σ_i head_i W_O^(i) + b_O, so each head's
contribution to the layer's output for a token is a vector whose norm can be compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..attention import AttentionKind
from ..model import Transformer
from . import on_model_device


@dataclass
class HeadContributions:
    kind: AttentionKind
    layer: int
    query: int
    heads: np.ndarray  # (H, d_k) each head's output for the token
    concat: np.ndarray  # (d_model,)
    w_o: np.ndarray  # (d_model, d_model), rows = output features, columns = concat features
    bias: np.ndarray  # (d_model,)
    contributions: np.ndarray  # (H, d_model): head_i · W_O^(i)ᵀ
    output: np.ndarray  # (d_model,) the model's own attention output for the token

    @property
    def norms(self) -> np.ndarray:
        return np.linalg.norm(self.contributions, axis=-1)

    @property
    def shares(self) -> np.ndarray:
        """Each head's ‖contribution‖ over the sum of them."""
        return self.norms / max(float(self.norms.sum()), 1e-12)

    def reconstruction_error(self) -> float:
        """max |Concat(heads) W_Oᵀ + b − the model's output|."""
        return float(np.abs(self.concat @ self.w_o.T + self.bias - self.output).max())

    def sum_error(self) -> float:
        """max |Σ_i contribution_i + b − the model's output|: the parts add up to the whole."""
        return float(np.abs(self.contributions.sum(0) + self.bias - self.output).max())


@on_model_device
@torch.inference_mode()
def head_contributions(
    model: Transformer, src_ids: list[int], decoder_input: list[int], kind: AttentionKind, layer: int, query: int
) -> HeadContributions:
    kind = AttentionKind(kind)
    out = model(torch.tensor([src_ids]), torch.tensor([decoder_input]), return_intermediates=True)
    trace = out.intermediates.trace(kind, layer)
    module = (model.encoder_layers if kind.in_encoder else model.decoder_layers)[layer]
    mha = module.cross_attn if kind is AttentionKind.CROSS else module.self_attn
    heads = trace.head_outputs[0, :, query].double().cpu().numpy()  # (H, d_k)
    H, d_k = heads.shape
    w_o = mha.w_o.weight.detach().double().cpu().numpy()
    blocks = w_o.reshape(-1, H, d_k)  # (d_model, H, d_k): W_O^(i) = columns i·d_k .. (i+1)·d_k
    contributions = np.einsum("hk,dhk->hd", heads, blocks)
    return HeadContributions(
        kind,
        layer,
        query,
        heads,
        heads.reshape(-1),
        w_o,
        mha.w_o.bias.detach().double().cpu().numpy(),
        contributions,
        trace.output[0, query].double().cpu().numpy(),
    )
