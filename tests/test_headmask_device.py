"""A head mask is built on the device and dtype of the scores it multiplies (issue 35, fault 8): a
head-masked analysis of a CUDA (or half-precision) model does not mix devices."""

from __future__ import annotations

import pytest
import torch
from test_device import on_a_foreign_default_device

from transformer import AttentionKind, CallOptions, HeadId, HeadMask, Transformer, TransformerConfig

OFF = [HeadId(AttentionKind.ENCODER, 0, 1), HeadId(AttentionKind.CROSS, 1, 0), HeadId(AttentionKind.DECODER, 0, 3)]


def _model(device="cpu"):
    torch.manual_seed(0)
    return Transformer(TransformerConfig.preset("tiny", vocab_size=40, dropout=0.0)).eval().to(device)


def test_a_layer_mask_takes_the_device_and_dtype_it_is_given():
    mask = HeadMask(frozenset(OFF))
    keep = mask.layer(AttentionKind.CROSS, 1, 4, device="meta", dtype=torch.float16)
    assert keep.device.type == "meta" and keep.dtype == torch.float16
    got = mask.layer(AttentionKind.CROSS, 1, 4)
    assert got.tolist() == [0.0, 1.0, 1.0, 1.0] and got.dtype == torch.float32
    assert mask.layer(AttentionKind.CROSS, 0, 4, device="meta") is None


def _masked(model):
    src = torch.tensor([[5, 6, 7, 8, 3]], device=next(model.parameters()).device)
    tgt = torch.tensor([[2, 9, 10]], device=src.device)
    options = CallOptions(head_mask=HeadMask.without(model.config, OFF))
    with torch.inference_mode():
        return model(src, tgt, options=options).logits


def test_a_head_masked_pass_builds_on_the_inputs_device():
    model = _model()
    expected = _masked(model)
    got, ops = on_a_foreign_default_device(lambda: _masked(model))
    assert ops == []
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert not torch.equal(expected, _masked_none(model))  # the mask does switch heads off


def _masked_none(model):
    src = torch.tensor([[5, 6, 7, 8, 3]])
    tgt = torch.tensor([[2, 9, 10]])
    with torch.inference_mode():
        return model(src, tgt).logits


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_head_masked_pass_on_a_cuda_model():
    expected = _masked(_model())
    got = _masked(_model("cuda"))
    assert got.device.type == "cuda"
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-4, atol=1e-4)
