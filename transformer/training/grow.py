"""Growing a trained model without changing what it computes (function-preserving growth, Net2Net: Chen et al.
2016, "Net2Net: Accelerating Learning via Knowledge Transfer", §3).

Widening the position-wise feed-forward network FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (§3.3 of the paper) from
d_ff to d_ff' units: the first d_ff units keep their weights, the new units get the model's own initialisation for
W_1 and b_1 and zeros in W_2, so they add nothing to any output until training moves their W_2 (their hidden values
are not zero, so W_2's gradient is not). The grown model translates exactly as the old one did, attention included,
and training continues from there with the extra capacity.
"""

from __future__ import annotations

import dataclasses

import torch

from ..model import Transformer
from .lock import TrainingError


@torch.no_grad()
def widen_feed_forward(model: Transformer, d_ff: int, seed: int = 0) -> Transformer:
    """A new model, ``model`` with every feed-forward layer widened to ``d_ff`` units; ``model`` is not changed.

    Args:
        model: a trained model (its config's d_ff < d_ff).
        d_ff: the new inner size of every encoder and decoder feed-forward layer.
        seed: seeds the new units' W_1 and b_1 (the model's own initialisation: Xavier-uniform, zero bias).

    Returns a model in the old one's mode and on its device whose outputs equal the old one's (up to float
    rounding in the wider matrix products).
    """
    old_d_ff = model.config.d_ff
    if d_ff <= old_d_ff:
        raise TrainingError(f"grow_d_ff: {d_ff} is not wider than the model's d_ff ({old_d_ff})")
    device = next(model.parameters()).device
    torch.manual_seed(seed)
    wide = Transformer(dataclasses.replace(model.config, d_ff=d_ff)).to(device)
    old = model.state_dict()
    state = wide.state_dict()
    for name, new in state.items():
        value = old[name]
        if value.shape == new.shape:
            new.copy_(value)
        elif name.endswith(("w_1.weight", "w_1.bias")):  # (d_ff, d_model), (d_ff,): the old units, then new init
            new[:old_d_ff].copy_(value)
        elif name.endswith("w_2.weight"):  # (d_model, d_ff): the new units' columns are zero
            new[:, :old_d_ff].copy_(value)
            new[:, old_d_ff:].zero_()
        else:
            raise TrainingError(f"grow_d_ff: {name} changes shape {tuple(value.shape)} -> {tuple(new.shape)}")
    wide.load_state_dict(state)
    return wide.train(model.training)
