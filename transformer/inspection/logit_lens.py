"""What each decoder layer would predict (the "logit lens", nostalgebraist 2020): the output projection applied
to every decoder layer's output, teacher-forced on the model's own greedy translation.

The model is post-LN (§3.1; an imported opus-mt model too: the import refuses pre-norm ones), so each layer's
output has already been through its last LayerNorm, as the final layer's output has when the generator reads
it: no extra norm is applied, and the last layer's lens is exactly the model's prediction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

from ..decoding import greedy_decode_batch, next_log_probs, require_eval
from ..model import Transformer
from ..tokenizer import TokenizerBase
from . import on_model_device

PRONOUNS = ("il", "elle", "ils", "elles")
RIVAL = {"il": "elle", "elle": "il", "ils": "elles", "elles": "ils"}
TOP_K = 5


def _word(piece: str) -> str:
    """A piece's word, as the pronoun test reads it: "▁il" → il, "qu'il" → il."""
    return re.split(r"['’]", piece.replace("▁", ""))[-1].lower()


@dataclass(frozen=True)
class LogitLens:
    """Per decoder layer and step: the top pieces and probabilities, and the probability of what was written.

    steps: the pieces the model wrote (its greedy translation, </s> last); inputs: the decoder's inputs.
    top_pieces[l][t][k], top_probs (L, T, k); written_prob (L, T): layer l's probability of step t's piece.
    """

    inputs: list[str]
    steps: list[str]
    top_pieces: list[list[list[str]]]
    top_probs: np.ndarray
    written_prob: np.ndarray
    rival_prob: np.ndarray  # (L, T): il↔elle's rival piece's probability at pronoun steps, NaN elsewhere
    rival: list[str | None]  # per step, the rival piece (None where the step writes no pronoun)

    @property
    def n_layers(self) -> int:
        return self.written_prob.shape[0]

    def decided_layer(self, step: int) -> int | None:
        """The first layer from which every layer's top piece is the piece written at step (None: only the
        output... never happens: the last layer's top piece is what greedy decoding wrote)."""
        top = [self.top_pieces[layer][step][0] for layer in range(self.n_layers)]
        written = self.steps[step]
        for layer in range(self.n_layers):
            if all(p == written for p in top[layer:]):
                return layer
        return None

    def pronoun_steps(self) -> list[int]:
        """The steps that write il, elle, ils or elles (alone or as qu'il ...)."""
        return [t for t, p in enumerate(self.steps) if _word(p) in PRONOUNS]


@on_model_device
@torch.inference_mode()
def logit_lens(model: Transformer, tokenizer: TokenizerBase, text: str, k: int = TOP_K) -> LogitLens:
    """The lens of every decoder layer over the greedy translation of text."""
    require_eval(model)
    cfg = model.config
    src_ids = tokenizer.source_ids(text, cfg.max_len)
    limit = min(cfg.max_len - 1, 2 * len(src_ids) + 10)  # as the evaluation's greedy decoding
    out = greedy_decode_batch(model, [src_ids], limit)[0][: cfg.max_len - 1]
    written = out + [cfg.eos_id]
    tgt_in = torch.tensor([[cfg.bos_id] + out])
    res = model(torch.tensor([src_ids]), tgt_in, return_intermediates=True)
    layers = [rec.output[0] for rec in res.intermediates.decoder]  # (T, d_model) each
    probs = torch.stack([next_log_probs(model, model.generator(x)).exp() for x in layers])  # (L, T, V)
    top_p, top_i = probs.topk(min(k, probs.size(-1)), dim=-1)
    pieces = tokenizer.target_pieces
    top_pieces = [[pieces(row.tolist()) for row in layer] for layer in top_i]
    T = len(written)
    idx = torch.tensor(written)
    written_prob = probs[:, torch.arange(T), idx].float().cpu().numpy()
    steps = pieces(written)
    rival_prob = np.full(written_prob.shape, np.nan)
    rival: list[str | None] = [None] * T
    for t, p in enumerate(steps):
        w = _word(p)
        if w in RIVAL:
            candidate = p[: len(p) - len(w)] + RIVAL[w]
            j = tokenizer.piece_to_id(candidate)
            if 0 <= j < probs.size(-1) and pieces([j])[0] == candidate:
                rival[t] = candidate
                rival_prob[:, t] = probs[:, t, j].float().cpu().numpy()
    return LogitLens(
        pieces(tgt_in[0].tolist()), steps, top_pieces, top_p.float().cpu().numpy(), written_prob, rival_prob, rival
    )
