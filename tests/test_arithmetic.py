"""The arithmetic pages: scorers, the √d_k experiment, the step-by-step recomputation, head contributions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from apptest import app, check_value, figures, node_text, run, tab, table

from transformer import Transformer, TransformerConfig
from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import load_checkpoint
from transformer.inspection import attention_variants
from transformer.inspection.arithmetic import walkthrough
from transformer.inspection.heads import argmax_shares, head_statistics, rollout, summarize_layer
from transformer.inspection.scaling import random_scaling, softmax_stats
from transformer.layout import DEFAULT_CHECKPOINT

shipped = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")


def test_scorers_have_the_right_shapes_and_a_hand_computed_case():
    q, k = torch.randn(3, 4), torch.randn(5, 4)
    assert attention_variants.dot_scores(q, k).shape == (3, 5)
    general, additive = attention_variants.GeneralScorer(4), attention_variants.AdditiveScorer(4, 6)
    assert general(q, k).shape == (3, 5) and additive(q, k).shape == (3, 5)
    assert attention_variants.parameter_counts(4, 6) == {"dot": 0, "scaled_dot": 0, "general": 16, "additive": 54}
    assert sum(p.numel() for p in additive.parameters()) == 54 and general.w.numel() == 16
    # by hand: q = (1, 2), k = (3, 4)
    q1, k1 = torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0]])
    assert float(attention_variants.dot_scores(q1, k1, scaled=False)) == 11.0
    assert math.isclose(float(attention_variants.dot_scores(q1, k1)), 11.0 / math.sqrt(2), rel_tol=1e-6)
    g = attention_variants.GeneralScorer(2)
    with torch.no_grad():
        g.w.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
    assert float(g(q1, k1).detach()) == 1 * 3 + 2 * 2 * 4  # qᵀ W k = 19
    a = attention_variants.AdditiveScorer(2, 2)
    with torch.no_grad():
        a.w1.weight.copy_(torch.eye(2))
        a.w2.weight.copy_(torch.eye(2))
        a.v.weight.copy_(torch.tensor([[1.0, -1.0]]))
    assert math.isclose(float(a(q1, k1).detach()), math.tanh(4) - math.tanh(6), abs_tol=1e-6)


def test_the_scaling_statistics_on_a_fixed_seed():
    exp = random_scaling(n_keys=16, trials=400, seed=0, d_ks=(4, 64, 1024))
    assert exp == random_scaling(n_keys=16, trials=400, seed=0, d_ks=(4, 64, 1024))  # seeded
    for d, var, var_s in zip(exp.d_ks, exp.variance, exp.variance_scaled):
        assert 0.8 * d < var < 1.2 * d and 0.8 < var_s < 1.2  # var(q·k) = d_k; scaled: 1
    assert exp.entropy[-1] < 0.3 < 2.0 < exp.entropy_scaled[-1]  # unscaled saturates
    assert exp.max_weight[-1] > 0.9 > 0.3 > exp.max_weight_scaled[-1]
    assert exp.gradient[-1] < 0.5 * exp.gradient_scaled[-1]
    # the stats by hand: a uniform softmax over 4 keys
    entropy, largest, grad = softmax_stats(np.zeros((1, 4)))
    assert math.isclose(entropy, math.log(4)) and largest == 0.25
    p = np.full(4, 0.25)
    assert math.isclose(grad, np.linalg.norm(np.diag(p) - np.outer(p, p)))
    sat = attention_variants.saturation(d_ks=(4, 1024), trials=100)
    assert sat.max_weight["dot"][1] > 0.8 and sat.max_weight["additive"][1] < 0.3  # additive does not saturate


def test_windowed_attention_equals_a_band_mask_and_costs_linear_memory():
    q = torch.randn(40, 8)
    band = (torch.arange(40)[:, None] - torch.arange(40)[None]).abs() <= 3
    ref = attention_variants.dot_scores(q, q).masked_fill(~band, float("-inf")).softmax(-1) @ q
    torch.testing.assert_close(attention_variants.windowed_attention(q, q, q, 3), ref, atol=1e-5, rtol=1e-5)
    c = attention_variants.complexity(ns=(128, 512), d=16, window=4, repeat=1)
    assert c.mb_full[1] / c.mb_full[0] > 10  # n²: 16x when n grows 4x
    assert c.mb_restricted[1] / c.mb_restricted[0] < 6  # linear


@pytest.mark.parametrize("activation", ["relu", "swish"])
def test_the_walkthrough_recomputes_every_kind_of_head_of_either_feed_forward(activation):
    """Every stage recomputed in float64 equals the model's own, for ReLU (§3.3) and swish (opus-mt) alike;
    the start token comes from the config (Marian's is not ours)."""
    torch.manual_seed(0)
    cfg = TransformerConfig.preset("tiny", vocab_size=30, activation=activation, bos_id=5, eos_id=3)
    model = Transformer(cfg).eval()
    src, dec = [7, 8, 9, 10, 3], [5, 11, 12, 13]
    labels = ([str(i) for i in range(5)], [str(i) for i in range(5)])
    for head in (
        HeadId(AttentionKind.ENCODER, 1, 2),
        HeadId(AttentionKind.DECODER, 0, 1),
        HeadId(AttentionKind.CROSS, 1, 3),
    ):
        w = walkthrough(model, src, dec, head, 2, labels)
        assert (w.kind, w.layer, w.head, w.query) == (*head, 2)
        assert w.final_delta <= 1e-5, (activation, head)
        assert all(s.delta <= 1e-4 for s in w.stages.values() if s.delta is not None), (activation, head)
    empty = walkthrough(model, src, [], HeadId(AttentionKind.CROSS, 0, 0), 0, labels)  # the decoder reads bos_id alone
    assert empty.final_delta <= 1e-5


def test_head_statistics_on_hand_made_maps():
    eye = np.eye(4)[None, None]  # every row attends to itself
    prev = np.roll(np.eye(4), -1, axis=1)[None, None]  # row i attends to i - 1 (row 0 to the last key)
    stats = head_statistics(np.concatenate([eye, prev], axis=1), AttentionKind.ENCODER)
    np.testing.assert_allclose(stats["entropy"][0], [0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(stats["self"][0], [1.0, 0.0])
    np.testing.assert_allclose(stats["previous"][0], [0.0, 1.0])
    np.testing.assert_allclose(stats["distance"][0], [0.0, (3 + 1 + 1 + 1) / 4])
    uniform = np.full((1, 1, 4, 4), 0.25)
    assert math.isclose(head_statistics(uniform, "encoder")["entropy"][0, 0], 2.0)
    assert math.isclose(head_statistics(uniform, "cross")["eos"][0, 0], 0.25)
    assert np.isnan(head_statistics(uniform, "cross")["self"][0, 0])
    shares = argmax_shares(np.concatenate([eye, prev], axis=1), "encoder")
    assert shares["self"][0, 0] == 1.0 and shares["previous"][0, 1] == 1.0
    summary = summarize_layer(np.concatenate([eye, prev], axis=1), "encoder", 0)
    assert [(s.pattern, s.share) for s in summary] == [("self", 1.0), ("previous", 1.0)]


def test_rollout_rows_sum_to_one_and_follow_the_definition():
    rng = np.random.default_rng(0)
    maps = rng.dirichlet(np.ones(5), size=(3, 2, 5))  # (L, H, T, T)
    r = rollout(maps)
    np.testing.assert_allclose(r.sum(-1), 1.0)
    a0 = 0.5 * (maps[0].mean(0) + np.eye(5))
    a1 = 0.5 * (maps[1].mean(0) + np.eye(5))
    np.testing.assert_allclose(r[1], a1 @ a0)


@shipped
def test_step_by_step_page_matches_the_model():
    at = run(app("arithmetic"))
    assert check_value(at, "step_final") <= 1e-5
    for stage in ("q", "K", "scores", "scaled", "masked", "weights", "head", "attention", "norm"):
        assert check_value(at, f"step_{stage}") <= 1e-4, stage
    assert "stage_fig_weights" in figures(at)
    for kind in ("encoder", "decoder"):
        at.session_state["pick_kind"] = AttentionKind(kind)
        run(at)
        assert check_value(at, "step_final") <= 1e-5, kind
    tab(at, "steps_tab", "steps.tab.scaling")
    cfg = load_checkpoint(DEFAULT_CHECKPOINT).config  # one row per layer of each kind
    assert len(table(at, "scaling_model")) == cfg.n_encoder_layers + 2 * cfg.n_decoder_layers


def test_the_followed_token_is_shown_literally_not_as_markup():
    """A sentence that starts with "*" puts the piece '▁*' in the step-by-step text: escaped, not a bold marker."""
    at = app("arithmetic", text="*$5 costs ~ten~ euros.")
    at.session_state["pick_kind"] = AttentionKind("encoder")
    run(at)
    where = [m.value for m in at.markdown if "Following the row of" in m.value]
    assert where and "**'▁\\*'**" in where[0], where


@shipped
def test_multihead_page_concat_and_contributions_add_up():
    at = run(app("multihead"))
    assert check_value(at, "mh_reconstruction") <= 1e-5
    assert check_value(at, "mh_sum") <= 1e-5
    shares = table(at, "mh_table").iloc[:, 2].str.rstrip("%").astype(float)
    assert abs(shares.sum() - 100) < 0.5
    sentences = [m.value for m in at.get_by_key("head_sentences") if getattr(m, "type", "") == "markdown"]
    assert len(sentences) == 4


@shipped
def test_variants_page_wide_window_changes_nothing():
    at = run(app("variants", variants_tab="restricted"))
    assert check_value(at, "window_full") == 0.0
    rows = table(at, "restricted_table")
    S = len(load_checkpoint(DEFAULT_CHECKPOINT).tokenizer.encode(at.session_state["text"])) + 1  # with </s>
    assert list(rows.iloc[:, 0]) == [S, *range(S - 1, -1, -1)]  # r = S, S - 1, ..., 0
    assert rows.iloc[0, 2] == node_text(at.get_by_key("translation")).splitlines()[-1]  # r = S: the full translation
    tab(at, "variants_tab", "attention_variants.tab.table1")
    assert len(table(at, "table1")) == 4 and {"table1_time", "table1_memory"} <= set(figures(at))
