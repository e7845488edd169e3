"""The cross-attention alignment loss, computed for the whole batch at once, equals the row-by-row definition."""

from __future__ import annotations

import torch

from transformer.tokenizer import pad_batch
from transformer.training.alignment import Alignment, alignment_loss


def _row_by_row(cross, alignments):
    """The definition: -mean over layers, heads and supervised rows of log(weight on the aligned columns)."""
    terms = []
    for b, rows in enumerate(alignments):
        for a in rows:
            for w in cross:
                terms.append(w[b, :, a.row, torch.tensor(a.columns, dtype=torch.long)].sum(-1).clamp_min(1e-9).log())
    return -torch.cat(terms).mean()


def test_the_batched_loss_and_its_gradient_equal_the_row_by_row_definition():
    g = torch.Generator().manual_seed(0)
    logits = [torch.randn(3, 4, 6, 7, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    alignments = [
        [Alignment(row=2, columns=(1, 3)), Alignment(row=4, columns=(0,))],
        [],
        [Alignment(row=5, columns=())],
    ]
    ours = alignment_loss([x.softmax(-1) for x in logits], alignments)
    (grad_ours,) = torch.autograd.grad(ours, logits[0])
    ref = _row_by_row([x.softmax(-1) for x in logits], alignments)
    (grad_ref,) = torch.autograd.grad(ref, logits[0])
    assert torch.allclose(ours, ref) and torch.allclose(grad_ours, grad_ref)
    assert alignment_loss([x.softmax(-1) for x in logits], [[], [], []]) is None


def test_pad_batch_right_pads_in_one_tensor():
    assert pad_batch([[5, 6, 7], [8], []], pad_id=0).tolist() == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    assert pad_batch([[], []]).shape == (2, 0) and pad_batch([]).shape == (0, 0)
