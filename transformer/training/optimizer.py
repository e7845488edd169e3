"""Adam's state keyed by parameter *name* (not position), so a resumed run's moments land on the right
parameters, and a saved state that does not fit the model fails loudly."""

from __future__ import annotations

import torch
from torch import Tensor

from .lock import TrainingError


def optimizer_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Tensor]:
    """Adam's moments and step per parameter *name*, plus the RNG state: what a resumed run needs."""
    out = {"torch_rng_state": torch.get_rng_state()}
    for name, p in model.named_parameters():
        st = optimizer.state.get(p)
        if st:
            out[f"{name}.exp_avg"] = st["exp_avg"]
            out[f"{name}.exp_avg_sq"] = st["exp_avg_sq"]
            out[f"{name}.step"] = torch.as_tensor(st["step"], dtype=torch.float32).reshape(1).cpu()
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
            "step": tensors[f"{name}.step"].reshape(()).clone(),  # Adam keeps its step count on the CPU
            "exp_avg": tensors[f"{name}.exp_avg"].to(device),
            "exp_avg_sq": tensors[f"{name}.exp_avg_sq"].to(device),
        }
    if "torch_rng_state" in tensors:
        torch.set_rng_state(tensors["torch_rng_state"])
