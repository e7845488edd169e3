"""Norm-weighted attention (Kobayashi et al. 2020) and cross-attention alignment (Chen et al. 2020)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from transformer.attention import MultiHeadAttention
from transformer.inspection.alignment import (
    AlignMethod,
    GoldAlignment,
    aer,
    aer_per_layer,
    align,
    parse_links,
)
from transformer.inspection.norms import norm_weighted, top_disagreement


def test_norm_weighting_equals_direct_computation():
    torch.manual_seed(0)
    d_model, H = 12, 3
    d_k = d_model // H
    mha = MultiHeadAttention(d_model, H).eval()
    x = torch.randn(2, 5, d_model)
    y = torch.randn(2, 4, d_model)
    result = mha(x, y, y, need_trace=True)
    got = norm_weighted(result.trace, mha.w_o.weight)
    W_V, b_V, W_O = mha.w_v.weight, mha.w_v.bias, mha.w_o.weight
    for b in range(2):
        for h in range(H):
            cols = slice(h * d_k, (h + 1) * d_k)
            for i in range(5):
                for j in range(4):
                    value = (W_V @ y[b, j] + b_V)[cols]  # head h's value of key j
                    f = W_O[:, cols] @ value  # through head h's slice of W_O
                    alpha = result.trace.weights[b, h, i, j]
                    torch.testing.assert_close(got[b, h, i, j], (alpha * f).norm(), rtol=1e-5, atol=1e-6)
    # and the transformed vectors add up to the layer's output (less W_O's bias)
    w = W_O.reshape(d_model, H, d_k)
    summed = torch.einsum("bhij,bhjk,dhk->bid", result.trace.weights, result.trace.v, w) + mha.w_o.bias
    torch.testing.assert_close(summed, result.output, rtol=1e-5, atol=1e-5)


def test_disagreement_share():
    weights = np.array([[[0.6, 0.4], [0.5, 0.5 - 1e-3]]])  # (H=1, T_q=2, T_k=2)
    norms = np.array([[[0.1, 0.9], [0.9, 0.1]]])
    assert top_disagreement(weights, norms).tolist() == [0.5]
    with pytest.raises(ValueError):
        top_disagreement(weights, norms[..., :1])


def _map(rows: list[int], S: int) -> np.ndarray:
    m = np.full((len(rows), S), 0.01)
    m[np.arange(len(rows)), rows] = 1.0
    return m / m.sum(-1, keepdims=True)


def test_shift_att_and_naive_on_a_hand_made_alignment():
    # source "the black cat </s>" (pieces 0..2 words, 3 = </s>); target "le chat noir"
    # true alignment: le-the, chat-cat, noir-black. The decoder reads [<s>, le, chat, noir]:
    # at the step whose *input* is y_i it looks at y_i's source (Shift-Att reads rows 1..3);
    # rows 0..2 look one word ahead, so the naive reading is shifted by one.
    cross = _map([2, 0, 2, 1], S=4)  # row 0 (<s>) → cat, row 1 (le) → the, row 2 (chat) → cat, row 3 (noir) → black
    words = [[0], [1], [2]]
    gold = GoldAlignment(frozenset({(0, 0), (2, 1), (1, 2)}), frozenset())
    shift = align(cross, AlignMethod.SHIFT, words, words)
    naive = align(cross, AlignMethod.NAIVE, words, words)
    assert shift == {(0, 0), (2, 1), (1, 2)}
    assert naive == {(2, 0), (0, 1), (2, 2)}
    assert aer(shift, gold) == 0.0
    assert aer(naive, gold) == 1.0


def test_pieces_merge_into_words_and_eos_is_never_chosen():
    # source words: "un" [0], "chat-eau" [1, 2]; piece 3 is </s> with the largest weight on one row
    cross = np.array(
        [
            [0.1, 0.1, 0.1, 0.7],
            [0.8, 0.1, 0.05, 0.05],
            [0.0, 0.1, 0.8, 0.1],
            [0.0, 0.7, 0.1, 0.2],
        ]
    )
    got = align(cross, AlignMethod.SHIFT, [[0], [1, 2]], [[0], [1, 2]])
    assert got == {(0, 0), (1, 1)}
    got = align(cross, AlignMethod.NAIVE, [[0], [1, 2]], [[0], [1, 2]])
    # rows 0..2: row 0's best piece other than </s> is 0 (a tie: the first), row 1 → 0, row 2 → 2 (word 1)
    assert got == {(0, 0), (0, 1), (1, 1)}


def test_aer_on_a_hand_made_example():
    gold = GoldAlignment(sure=frozenset({(0, 0), (1, 1)}), possible=frozenset({(2, 1)}))
    assert gold.possible == {(0, 0), (1, 1), (2, 1)}
    # A = {0-0, 2-1, 2-2}: |A∩S| = 1, |A∩P| = 2, |A| = 3, |S| = 2 → 1 − 3/5
    assert aer({(0, 0), (2, 1), (2, 2)}, gold) == pytest.approx(0.4)
    assert aer({(0, 0), (1, 1)}, gold) == 0.0
    assert aer(set(), gold) == 1.0


def test_aer_per_layer_reports_progress():
    cross = _map([2, 0, 2, 1], S=4)
    words = [[0], [1], [2]]
    gold = GoldAlignment(frozenset({(0, 0), (2, 1), (1, 2)}), frozenset())
    seen = []
    result = aer_per_layer(lambda i: [cross, _map([0, 2, 1, 1], 4)], [(words, words, gold)] * 2, seen.append)
    assert seen == [0.5, 1.0]
    assert result[AlignMethod.SHIFT][0] == 0.0 and result[AlignMethod.NAIVE][0] == 1.0
    assert result[AlignMethod.NAIVE][1] == 0.0  # the second layer is aligned one step early


def test_parse_links():
    assert parse_links("0-0 2-1") == {(0, 0), (2, 1)}
    with pytest.raises(ValueError, match="bad link"):
        parse_links("0:1")


def test_a_link_with_unicode_digits_is_a_clear_error():
    """"²".isdigit() is true and int("²") raises: a link is ASCII digits or a ValueError that says how to write it."""
    from transformer.inspection.alignment import parse_links

    assert parse_links("0-0 1-2") == {(0, 0), (1, 2)}
    for bad in ("²-1", "0-①", "٣-1", "0:1"):
        with pytest.raises(ValueError, match="write source-target"):
            parse_links(bad)
