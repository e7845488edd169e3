"""The head lab's research measures: head roles (Voita), head importance and pruning (Michel), the logit lens,
and their tabs (on the shipped model and on a tiny random Marian import)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from apptest import EN, app, figures, node_text, run, settle, table

from transformer import AttentionKind, CallOptions, HeadId, HeadMask
from transformer.checkpoint import load_checkpoint
from transformer.config import TransformerConfig
from transformer.inspection import importance as imp
from transformer.inspection import roles as R
from transformer.inspection.logit_lens import _word, logit_lens
from transformer.inspection.syntax import Parser
from transformer.layout import DEFAULT_CHECKPOINT
from transformer.model import Transformer
from transformer.options import HeadGate

shipped = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")
ENC, DEC, CROSS = AttentionKind.ENCODER, AttentionKind.DECODER, AttentionKind.CROSS


def shifted(T: int, offset: int) -> np.ndarray:
    """A head that puts 0.9 on the key at i + offset (where there is one) and spreads the rest."""
    m = np.full((T, T), 0.1 / (T - 1))
    for i in range(T):
        j = i + offset if 0 <= i + offset < T else i
        m[i] = 0.1 / (T - 1)
        m[i, j] = 0.9
    return m


def test_a_perfect_positional_head_is_found_and_a_uniform_one_is_not():
    T = 7
    maps = np.stack([shifted(T, -1), shifted(T, 1), np.full((T, T), 1 / T)])[None]  # (1, 3, T, T)
    hits, rows = R.positional_counts(maps, -1)
    assert rows == T - 1 and hits[0, 0] == T - 1
    assert hits[0, 2] <= 1  # a uniform row's argmax is its first key: the previous one only for row 1
    counts = R.RoleCounts()
    for _ in range(3):
        counts.add_sentence({ENC: maps, DEC: maps, CROSS: maps}, rarest=None)
    roles = counts.result({ENC: (1, 3), DEC: (1, 3), CROSS: (1, 3)})
    assert roles.roles(HeadId(ENC, 0, 0)) == [R.Role.PREVIOUS]
    assert roles.roles(HeadId(ENC, 0, 1)) == [R.Role.NEXT]
    assert roles.roles(HeadId(ENC, 0, 2)) == []
    assert roles.shares[ENC]["previous"][0, 0] == 1.0 and roles.shares[ENC]["next"][0, 1] == 1.0
    assert roles.roles(HeadId(DEC, 0, 0)) == [R.Role.PREVIOUS] and "next" not in roles.shares[DEC]
    assert roles.badges(ENC).tolist() == [["←", "→", ""]]
    assert roles.count(R.Role.PREVIOUS) == {ENC: 1, DEC: 1, CROSS: 0}
    # the probe's heads get their badge from the caller
    coref = {HeadId(ENC, 0, 2): 0.93}
    assert roles.roles(HeadId(ENC, 0, 2), coref) == [R.Role.COREFERENCE]
    rows = dict(R.role_rows(roles, coref))
    assert rows[HeadId(ENC, 0, 2)]["badges"] == "C" and rows[HeadId(ENC, 0, 2)]["coreference"] == 0.93
    assert rows[HeadId(DEC, 0, 1)]["next"] is None and rows[HeadId(CROSS, 0, 0)]["previous"] is None
    # just under the threshold: not positional
    almost = np.stack([shifted(10, -1)])[None].copy()
    almost[0, 0, 5] = np.eye(10)[8]  # one of 9 rows looks elsewhere: 8/9 < 0.9
    c = R.RoleCounts()
    c.add_sentence({ENC: almost, DEC: almost, CROSS: almost}, None)
    assert c.result({ENC: (1, 1), DEC: (1, 1), CROSS: (1, 1)}).roles(HeadId(ENC, 0, 0)) == []


def test_a_rare_word_head_is_found_against_chance():
    freq = np.array([np.inf, 50.0, 3.0, 400.0, 7.0, np.inf])  # ids 0 and 5 special
    keys = [3, 1, 2, 4, 5]  # the rarest piece (id 2, seen 3 times) is at position 2; </s> (id 5) is never it
    assert R.rarest_key(freq, keys) == 2
    assert R.rarest_key(freq, [0, 5]) is None
    Tq, Tk = 6, len(keys)
    rare = np.full((Tq, Tk), 0.05)
    rare[:, 2] = 0.8
    uniform = np.full((Tq, Tk), 1 / Tk)
    last = np.zeros((Tq, Tk))
    last[:, -1] = 1.0  # all on </s>
    maps = np.stack([rare, uniform, last])[None]
    hits, rows, chance = R.rare_counts(maps, 2)
    assert hits.tolist() == [[Tq, 0, 0]] and rows == Tq and chance == pytest.approx(Tq / Tk)
    counts = R.RoleCounts()
    self_maps = np.stack([np.eye(Tk)] * 3)[None]
    counts.add_sentence({ENC: self_maps, DEC: self_maps, CROSS: maps}, rarest=2)
    roles = counts.result({ENC: (1, 3), DEC: (1, 3), CROSS: (1, 3)})
    assert roles.chance[CROSS] == pytest.approx(1 / Tk)
    assert roles.roles(HeadId(CROSS, 0, 0)) == [R.Role.RARE]
    assert roles.roles(HeadId(CROSS, 0, 1)) == [] and roles.roles(HeadId(CROSS, 0, 2)) == []
    assert R.strongest(roles)["rare"] == (HeadId(CROSS, 0, 0), 1.0)


def test_piece_frequency_counts_the_training_sources_or_falls_back_to_piece_scores(trained_checkpoint):
    ckpt = load_checkpoint(trained_checkpoint)
    f = R.piece_frequency(ckpt.tokenizer, ckpt.card)
    assert f.origin == "corpus"
    sp = ckpt.tokenizer.special
    assert np.isinf(f.values[[sp.pad, sp.eos, sp.bos, sp.unk]]).all()
    sources = R.training_sources(ckpt.card)
    the = ckpt.tokenizer.encode("the")[0]
    assert f.values[the] == sum(ckpt.tokenizer.encode(s).count(the) for s in sources) > 0
    scores = R.score_frequency(ckpt.tokenizer, [sp.pad])
    assert scores.origin == "scores" and scores.values[the] == ckpt.tokenizer.sp.get_score(the)
    assert R.piece_frequency(ckpt.tokenizer, {"kind": "imported-marian"}).origin == "scores"


def tiny_model(seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    cfg = TransformerConfig(
        vocab_size=40, n_encoder_layers=2, n_decoder_layers=2, d_model=16, n_heads=4, d_ff=32, dropout=0.0, max_len=32
    )
    return Transformer(cfg).double().eval()


def batch(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 40, (3, 7), generator=g)
    tgt = torch.randint(4, 40, (3, 6), generator=g)
    tgt_in = torch.cat([torch.full((3, 1), 2), tgt[:, :-1]], 1)
    return src, tgt_in, tgt


def test_the_head_gate_gradient_equals_a_finite_difference_estimate():
    model = tiny_model()
    src, tgt_in, tgt_out = batch()
    grads = imp.head_gradient(model, src, tgt_in, tgt_out)
    assert set(grads) == set(AttentionKind) and grads[ENC].shape == (2, 4)
    assert all(p.grad is None for p in model.parameters())  # the shared model is left as it was
    eps = 1e-6
    for head in (HeadId(ENC, 0, 1), HeadId(DEC, 1, 3), HeadId(CROSS, 0, 2), HeadId(CROSS, 1, 0)):

        def loss(delta: float, head: HeadId = head) -> float:
            gate = HeadGate.ones(model.config, requires_grad=False)
            gate.gates[head.kind] = gate.gates[head.kind].double()
            gate.gates[head.kind][head.layer, head.head] += delta
            with torch.no_grad():
                return float(imp.gated_loss(model, src, tgt_in, tgt_out, gate))

        estimate = (loss(eps) - loss(-eps)) / (2 * eps)
        assert grads[head.kind][head.layer, head.head] == pytest.approx(estimate, rel=1e-5, abs=1e-9)
    # ξ = 1 is the trained model; ξ_h = 0 is that head switched off
    gate = HeadGate.ones(model.config, requires_grad=False)
    with torch.no_grad():
        plain = model(src, tgt_in).logits
        torch.testing.assert_close(model(src, tgt_in, options=CallOptions(head_gate=gate)).logits, plain)
        gate.gates[CROSS][1, 2] = 0.0
        off = CallOptions(head_mask=HeadMask.without(model.config, [HeadId(CROSS, 1, 2)]))
        torch.testing.assert_close(
            model(src, tgt_in, options=CallOptions(head_gate=gate)).logits, model(src, tgt_in, options=off).logits
        )


def test_pruning_points_and_the_curve_bookkeeping(trained_checkpoint):
    assert imp.pruning_points(12, 7) == [0, 2, 4, 6, 8, 10, 12]
    assert imp.pruning_points(5, 3) == [0, 2, 5]
    assert 5 // 2 in imp.pruning_points(5, 3)
    ckpt = load_checkpoint(trained_checkpoint)
    cfg = ckpt.config
    rng = np.random.default_rng(0)
    importance = imp.Importance({k: rng.random((cfg.n_layers(k), cfg.n_heads)) for k in AttentionKind}, 10, 2)
    pairs = (("The dog was tired.", "Le chien était fatigué."), ("The cat was hungry.", "Le chat avait faim."))
    seen = []
    curve = imp.pruning_curve(ckpt.model, ckpt.tokenizer, pairs, importance, CROSS, n_points=4, progress=seen.append)
    n = len(HeadId.all(cfg, CROSS))
    assert list(curve.order) == sorted(HeadId.all(cfg, CROSS), key=importance.of)  # least important first
    assert curve.pruned[0] == 0 and curve.pruned[-1] == n and list(curve.pruned) == sorted(set(curve.pruned))
    assert curve.kept == tuple(n - p for p in curve.pruned)
    for i in range(1, len(curve.pruned)):  # each point prunes the previous point's heads and more
        assert set(curve.off(i - 1)) < set(curve.off(i))
    assert seen[-1] == 1.0 and seen == sorted(seen)
    assert len(curve.chrf) == len(curve.pruned) and all(a is None for a in curve.accuracy)
    assert curve.chrf[0] == pytest.approx(imp.translate_chrf(ckpt.model, ckpt.tokenizer, pairs, CallOptions()))
    cost, acc = curve.half_cost()
    assert cost == curve.chrf[0] - curve.chrf[curve.pruned.index(n // 2)] and acc is None
    every = imp.pruning_curve(ckpt.model, ckpt.tokenizer, pairs, importance, None, n_points=3)
    assert every.kind is None and len(every.order) == len(HeadId.all(cfg))
    # the importance over held-out pairs: one non-negative score per head
    measured = imp.head_importance(ckpt.model, ckpt.tokenizer, pairs, batch_size=1)
    assert measured.n_sentences == 2 and measured.n_batches == 2
    assert all(v.shape == (cfg.n_layers(k), cfg.n_heads) and (v >= 0).all() for k, v in measured.scores.items())


def test_the_logit_lens_last_layer_is_the_models_prediction(trained_checkpoint):
    ckpt = load_checkpoint(trained_checkpoint)
    lens = logit_lens(ckpt.model, ckpt.tokenizer, "The dog didn't cross the road because it was tired.")
    L = ckpt.config.n_decoder_layers
    assert lens.written_prob.shape == (L, len(lens.steps)) and lens.steps[-1] == "</s>"
    for t, piece in enumerate(lens.steps):  # greedy decoding wrote the last layer's top piece
        assert lens.top_pieces[-1][t][0] == piece
        assert lens.decided_layer(t) is not None and lens.decided_layer(t) <= L - 1
    assert np.allclose(lens.top_probs[..., 0] >= lens.top_probs[..., -1], True)
    assert _word("▁il") == "il" and _word("qu'elle") == "elle" and _word("▁ville") == "ville"


def marks(at) -> str:
    return node_text(at.get_by_key("hlab_roles_found"))


@pytest.mark.slow
@shipped
def test_the_research_tabs_render_on_the_default_model():
    at = settle(run(app("headlab", lab_tab="hlab.roles")))
    assert "hlab_roles_grid" in figures(at)
    rows = table(at, "hlab_roles_table")
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    assert len(rows) == len(HeadId.all(ckpt.config))
    assert EN("hlab.col_badges") in rows.columns and "C" in set(rows[EN("hlab.col_badges")])  # the probe's head
    found = EN("hlab.roles_found", previous=0, next=0, rare=0, syntactic=0, coreference=0, n=200)
    assert marks(at).startswith(found[:5])
    if Parser.available():  # the syntactic roles: measured on the sentences Link Grammar parses, each drawable
        assert "Link Grammar" in marks(at)
        at.session_state["hlab_role"] = "nsubj_gov"
        run(at)
        assert EN("hlab.role.nsubj_gov") in json.dumps(figures(at)["hlab_roles_grid"], ensure_ascii=False)
    at.session_state["lab_tab"] = "hlab.lens"
    settle(run(at))
    assert {"hlab_lens", "hlab_lens_step_view"} <= set(figures(at))
    text = node_text(at.get_by_key("hlab_lens_decided"))
    assert "**il**" in text and "L" in text  # the sidebar's flagship sentence writes il
    lens_fig = figures(at)["hlab_lens"]["data"][0]
    assert len(lens_fig["y"]) == ckpt.config.n_decoder_layers
    at.session_state["lab_tab"] = "hlab.importance"
    settle(run(at))
    figs = figures(at)
    assert {"hlab_importance_encoder", "hlab_importance_cross", "hlab_pruning_chrf", "hlab_pruning_accuracy"} <= set(
        figs
    )
    chrf = figs["hlab_pruning_chrf"]["data"]
    assert len(chrf) == 4 and all(tr["x"][0] == 1.0 and tr["x"][-1] == 0.0 for tr in chrf)
    assert "chrF" in node_text(at.get_by_key("hlab_finding"))


@pytest.mark.slow
def test_the_research_tabs_render_on_a_tiny_random_marian_import(tiny_marian_root, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tiny_marian_root))
    text = "The dog was too tired, so it stayed home."
    ckpt = load_checkpoint(tiny_marian_root / "tiny-marian")
    for name, keys in (
        ("hlab.roles", {"hlab_roles_grid"}),
        ("hlab.importance", {"hlab_importance_cross", "hlab_pruning_chrf"}),
        ("hlab.lens", {"hlab_lens", "hlab_lens_step_view"}),
    ):
        at = settle(run(app("headlab", checkpoint="tiny-marian", text=text, lab_tab=name)))
        assert keys <= set(figures(at)), name
    # the frequency is the source tokenizer's piece scores, and the role table has a row per head
    assert R.piece_frequency(ckpt.tokenizer, ckpt.card).origin == "scores"
    at = settle(run(app("headlab", checkpoint="tiny-marian", text=text, lab_tab="hlab.roles")))
    assert len(table(at, "hlab_roles_table")) == len(HeadId.all(ckpt.config))
