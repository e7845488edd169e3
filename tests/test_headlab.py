"""The head lab: ablation, probe ranking, statistics over the probe set, snapshots."""

from __future__ import annotations

import pytest
import torch
from apptest import EN, app, check_value, figures, node_text, run, tab, table

from transformer import CallOptions, HeadMask
from transformer.checkpoint import load_checkpoint
from transformer.corpus import CorpusSpec, generate_test
from transformer.inspection.headlab import measure, probe_set, rank_heads, set_statistics
from transformer.layout import DEFAULT_CHECKPOINT

shipped = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")


def test_switching_off_no_heads_changes_nothing_and_a_whole_layer_changes_the_output(trained_checkpoint):
    ckpt = load_checkpoint(trained_checkpoint)
    ps = probe_set(ckpt.tokenizer, generate_test(CorpusSpec(n_examples=600, n_test=100)), 60)
    base = measure(ckpt.model, ps)
    assert measure(ckpt.model, ps, CallOptions(head_mask=HeadMask.without(ckpt.config, []))) == base
    cfg = ckpt.config
    layer_off = HeadMask.without(cfg, [("decoder", 0, h) for h in range(cfg.n_heads)])
    src, tgt_in, _, _ = ps.batches[0]
    with torch.inference_mode():
        a = ckpt.model(src, tgt_in, return_intermediates=True)
        b = ckpt.model(src, tgt_in, options=CallOptions(head_mask=layer_off), return_intermediates=True)
    # the layer's attention output is then just W_O's bias, and everything after it changes
    bias = ckpt.model.decoder_layers[0].self_attn.w_o.bias
    torch.testing.assert_close(b.intermediates.trace("decoder", 0).output, bias.expand_as(a.logits[..., :32]))
    assert (a.logits - b.logits).abs().max() > 0
    cross_off = CallOptions(head_mask=HeadMask.without(cfg, [("cross", 1, 2)]))
    with torch.inference_mode():
        memories = [ckpt.model.encode(src) for src, _, _, _ in ps.batches]
    full, shortcut = measure(ckpt.model, ps, cross_off), measure(ckpt.model, ps, cross_off, memories)
    assert abs(full.loss - shortcut.loss) < 1e-6 and full.accuracy == shortcut.accuracy  # the encoder is reused
    base2, effects = rank_heads(ckpt.model, ps)
    assert base2 == base and len(effects) == cfg.n_heads * (cfg.n_encoder_layers + 2 * cfg.n_decoder_layers)
    stats = set_statistics(ckpt.model, ps)
    assert stats["encoder"]["entropy"].shape == (cfg.n_encoder_layers, cfg.n_heads)


@shipped
def test_head_lab_pages_render_and_measure():
    at = run(app("headlab"))
    assert "lab_grid" in figures(at) and len(table(at, "lab_stats_table")) == 4 * (3 + 2 + 2)
    at.radio(key="lab_scope").set_value("probe_set").run()
    frame = table(at, "lab_stats_table")
    assert frame[EN("lab.stat.coreference")].max() > 0.9  # the cross head that finds the antecedent
    tab(at, "lab_tab", "lab.tab.probe")
    assert {"lab_probe_cross_pronoun", "lab_probe_encoder_pronoun"} <= set(figures(at))
    at.button(key="lab_open_cross_pronoun").click().run()
    assert not at.exception
    assert (at.session_state["pick_kind"], at.session_state["pick_layer"], at.session_state["pick_head"]) == (
        "cross",
        1,
        1,
    )
    assert at.session_state["explorer_tab"] == EN("explorer.tab.overview")  # the browser test follows the link


@shipped
def test_ablation_ranks_heads_and_names_bystanders():
    at = run(app("headlab", lab_tab=EN("lab.tab.ablation")))
    ranking = table(at, "lab_ranking")
    assert len(ranking) == 4 * (3 + 2 + 2)
    text = node_text(at.get_by_key("lab_bystanders"))
    assert text  # either bystanders are named or the page says there are none
    at.multiselect(key="lab_off").set_value(
        [("cross", 1, h) for h in range(4)] + [("cross", 0, h) for h in range(4)]
    ).run()
    assert not at.exception
    accuracy = node_text(at.get_by_key("lab_accuracy"))
    assert accuracy  # the metric shows the new accuracy


@shipped
def test_rollout_and_training_tabs():
    at = run(app("headlab", lab_tab=EN("lab.tab.rollout")))
    assert check_value(at, "rollout_rows") <= 1e-9
    tab(at, "lab_tab", "lab.tab.training")
    assert {"lab_snapshot_map", "lab_formation"} <= set(figures(at))
    formation = figures(at)["lab_formation"]["data"][0]
    assert len(formation["x"]) == 7 and formation["y"][-1] > 0.9 > formation["y"][0]  # the head forms
