"""Scaled dot-product and multi-head attention, masks, and the full model's attention record."""

from __future__ import annotations

import math

import pytest
import torch

from transformer import (
    AttentionKind,
    CallOptions,
    HeadId,
    HeadMask,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    band_mask,
    padding_mask,
    scaled_dot_product_attention,
    subsequent_mask,
    target_mask,
)


def test_rows_sum_to_one_and_masked_entries_are_zero(tiny_model):
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]])
    tgt = torch.tensor([[2, 11, 12, 13], [2, 14, 0, 0]])
    att = tiny_model(src, tgt, return_attention=True).attention
    L, H = 2, 4
    assert len(att.encoder) == L and att.encoder[0].shape == (2, H, 5, 5)
    assert att.decoder[0].shape == (2, H, 4, 4) and att.cross[0].shape == (2, H, 4, 5)
    for maps in (att.encoder, att.decoder, att.cross):
        for w in maps:
            torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    # padded source keys get exactly zero weight, in encoder and cross attention
    for w in att.encoder + att.cross:
        assert torch.all(w[1, :, :, 3:] == 0)
    # decoder self-attention is exactly zero above the diagonal
    upper = torch.ones(4, 4, dtype=torch.bool).triu(1)
    for w in att.decoder:
        assert torch.all(w[:, :, upper] == 0)


def test_future_target_tokens_do_not_change_earlier_outputs(tiny_model):
    src = torch.tensor([[5, 6, 7, 3]])
    a = torch.tensor([[2, 11, 12, 13, 14]])
    b = a.clone()
    b[0, 3:] = torch.tensor([20, 21])
    la, lb = tiny_model(src, a).logits, tiny_model(src, b).logits
    torch.testing.assert_close(la[:, :3], lb[:, :3])
    assert not torch.allclose(la[:, 3:], lb[:, 3:])


def test_padding_leaves_real_positions_unchanged(tiny_model):
    src = torch.tensor([[5, 6, 7, 3]])
    tgt = torch.tensor([[2, 11, 12]])
    ref = tiny_model(src, tgt).logits
    src_p = torch.tensor([[5, 6, 7, 3, 0, 0, 0]])
    tgt_p = torch.tensor([[2, 11, 12, 0, 0]])
    out = tiny_model(src_p, tgt_p).logits
    torch.testing.assert_close(out[:, :3], ref, atol=1e-5, rtol=1e-5)


def test_multi_head_attention_equals_torch_reference():
    torch.manual_seed(0)
    d_model, h = 32, 4
    ours = MultiHeadAttention(d_model, h).eval()
    ref = torch.nn.MultiheadAttention(d_model, h, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)
    q, kv = torch.randn(3, 5, d_model), torch.randn(3, 7, d_model)
    keep = torch.ones(3, 7, dtype=torch.bool)
    keep[1, 5:] = False
    mine = ours(q, kv, kv, keep[:, None, None, :], need_weights=True)
    theirs, theirs_w = ref(q, kv, kv, key_padding_mask=~keep, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(mine.output, theirs, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(mine.weights, theirs_w, atol=1e-5, rtol=1e-5)


def test_fused_and_explicit_paths_agree():
    torch.manual_seed(1)
    mha = MultiHeadAttention(32, 4).eval()
    x = torch.randn(2, 6, 32)
    mask = subsequent_mask(6)
    fused = mha(x, x, x, mask).output
    explicit = mha(x, x, x, mask, need_trace=True)
    torch.testing.assert_close(fused, explicit.output, atol=1e-5, rtol=1e-5)


def test_trace_reproduces_the_layer_output(tiny_model):
    src = torch.tensor([[5, 6, 7, 8, 3]])
    tgt = torch.tensor([[2, 11, 12]])
    out = tiny_model(src, tgt, return_intermediates=True)
    inter = out.intermediates
    for trace, mha in [
        (inter.trace(AttentionKind.ENCODER, 0), tiny_model.encoder_layers[0].self_attn),
        (inter.trace(AttentionKind.CROSS, 1), tiny_model.decoder_layers[1].cross_attn),
        (inter.trace(AttentionKind.DECODER, 1), tiny_model.decoder_layers[1].self_attn),
    ]:
        d_k = trace.q.size(-1)
        torch.testing.assert_close(trace.scores, trace.q @ trace.k.transpose(-2, -1))
        torch.testing.assert_close(trace.scaled, trace.scores / math.sqrt(d_k))
        heads = trace.weights @ trace.v  # (B, H, T, d_k)
        torch.testing.assert_close(heads, trace.head_outputs, atol=1e-5, rtol=1e-5)
        B, H, T, _ = heads.shape
        recomputed = mha.w_o(heads.transpose(1, 2).reshape(B, T, H * d_k))
        torch.testing.assert_close(recomputed, trace.output, atol=1e-5, rtol=1e-5)
    # the record's weights are the traces' weights, and each layer's recorded path chains
    torch.testing.assert_close(out.attention.cross[1], inter.trace(AttentionKind.CROSS, 1).weights)
    layer = tiny_model.encoder_layers[0]
    first = inter.encoder[0]
    torch.testing.assert_close(first.input, inter.src_input)
    torch.testing.assert_close(first.after_self, layer.norm_1(first.input + first.self_attention.output))
    torch.testing.assert_close(inter.encoder[1].input, first.output)
    torch.testing.assert_close(inter.encoder[-1].output, out.memory)


def test_masked_scores_are_minus_infinity_where_masked():
    q = k = v = torch.randn(1, 2, 4, 8)
    _, w, trace = scaled_dot_product_attention(q, k, v, subsequent_mask(4), return_trace=True)
    upper = torch.ones(4, 4, dtype=torch.bool).triu(1)
    assert torch.all(torch.isneginf(trace.masked[..., upper]))
    assert torch.all(w[..., upper] == 0)


def test_mask_convention_shapes():
    tokens = torch.tensor([[5, 6, 0]])
    assert padding_mask(tokens, 0).shape == (1, 1, 1, 3)
    assert padding_mask(tokens, 0).tolist() == [[[[True, True, False]]]]
    assert subsequent_mask(3)[0, 0].tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    m = target_mask(tokens, 0)
    assert m.shape == (1, 1, 3, 3) and not m[0, 0, 2, 2] and m[0, 0, 1, 0]
    assert band_mask(4, 1)[0, 0].int().tolist() == [[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1]]


def test_head_mask_switches_heads_off(tiny_model, tiny_config):
    src = torch.tensor([[5, 6, 7, 8, 3]])
    tgt = torch.tensor([[2, 11, 12]])
    base = tiny_model(src, tgt).logits
    none_off = CallOptions(head_mask=HeadMask.without(tiny_config, []))
    torch.testing.assert_close(base, tiny_model(src, tgt, options=none_off).logits, rtol=0, atol=0)
    one_off = CallOptions(head_mask=HeadMask.without(tiny_config, [HeadId(AttentionKind.ENCODER, 0, 1)]))
    assert not torch.allclose(base, tiny_model(src, tgt, options=one_off).logits)
    # the head's slice of Concat(heads) is zero: W_O sees only the other heads
    out = tiny_model(src, tgt, options=one_off, return_intermediates=True).intermediates
    heads = out.trace(AttentionKind.ENCODER, 0).head_outputs
    mha = tiny_model.encoder_layers[0].self_attn
    kept = heads.clone()
    kept[:, 1] = 0
    concat = kept.transpose(1, 2).reshape(1, 5, tiny_config.d_model)
    torch.testing.assert_close(out.trace(AttentionKind.ENCODER, 0).output, mha.w_o(concat), atol=1e-6, rtol=1e-5)
    with pytest.raises(ValueError, match="no head"):
        HeadMask.without(tiny_config, [HeadId(AttentionKind.CROSS, 5, 0)])
    assert one_off.head_mask.off == frozenset({HeadId(AttentionKind.ENCODER, 0, 1)})
    assert one_off.heads(AttentionKind.ENCODER, 0, tiny_config.n_heads).tolist() == [1.0, 0.0, 1.0, 1.0]
    assert one_off.heads(AttentionKind.ENCODER, 1, tiny_config.n_heads) is None


def test_a_head_is_one_type_checked_against_the_model(tiny_config):
    head = HeadId.of("cross", 1, 3)
    assert (
        head == HeadId(AttentionKind.CROSS, 1, 3) and head.kind is AttentionKind.CROSS and head.label == "cross L1 H3"
    )
    assert head.in_model(tiny_config) and not HeadId(AttentionKind.CROSS, 2, 0).in_model(tiny_config)
    assert not HeadId(AttentionKind.ENCODER, 0, 4).in_model(tiny_config)
    every = HeadId.all(tiny_config)
    n_layers = tiny_config.n_encoder_layers + 2 * tiny_config.n_decoder_layers
    assert len(every) == len(set(every)) == n_layers * tiny_config.n_heads
    assert all(h.in_model(tiny_config) for h in every)
    for bad in (("sideways", 0, 0), ("cross", "x", 0)):
        with pytest.raises(ValueError):
            HeadId.of(*bad)


def test_masks_and_positions_are_options_of_the_call(tiny_model):
    src = torch.tensor([[5, 6, 7, 8, 3]])
    tgt = torch.tensor([[2, 11, 12, 13]])
    open_future = tiny_model(src, tgt, options=CallOptions(look_ahead_mask=False), return_attention=True)
    upper = torch.ones(4, 4, dtype=torch.bool).triu(1)
    assert all(bool((w[..., upper] > 0).all()) for w in open_future.attention.decoder)
    # a window of r keeps each encoder query within r positions
    banded = tiny_model(src, tgt, options=CallOptions(window=1), return_attention=True).attention.encoder[0]
    far = torch.ones(5, 5).triu(2).bool() | torch.ones(5, 5).tril(-2).bool()
    assert torch.all(banded[..., far] == 0)
    full = tiny_model(src, tgt, options=CallOptions(window=5)).logits
    torch.testing.assert_close(full, tiny_model(src, tgt).logits, rtol=0, atol=0)
    no_pos = tiny_model(src, tgt, options=CallOptions(positions=False), return_intermediates=True).intermediates
    torch.testing.assert_close(no_pos.src_input, no_pos.src_embedding)
    assert not any(m.training for m in tiny_model.modules())


def test_config_validation():
    with pytest.raises(ValueError, match="divisible"):
        TransformerConfig(vocab_size=10, d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="positional"):
        TransformerConfig(vocab_size=10, positional="rotary")
    base = TransformerConfig.preset("base", vocab_size=37000)
    assert (base.n_encoder_layers, base.d_model, base.n_heads, base.d_ff, base.d_k) == (6, 512, 8, 2048, 64)
    tiny = Transformer(TransformerConfig.preset("tiny", vocab_size=20))
    assert tiny.generator.weight.shape == (20, 32)


def test_embeddings_are_tied_and_scaled(tiny_model, tiny_config):
    assert tiny_model.generator.weight is tiny_model.src_embed.weight is tiny_model.tgt_embed.weight
    tokens = torch.tensor([[5, 6]])
    emb, _ = tiny_model.embed(tokens, tiny_model.src_embed)
    torch.testing.assert_close(emb, tiny_model.src_embed.weight[tokens] * math.sqrt(tiny_config.d_model))
