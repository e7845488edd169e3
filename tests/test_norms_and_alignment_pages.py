"""The head lab's norm-weighted attention and alignment tabs, their SVG/CSV exports, and the gold set;
on the shipped model and on a tiny random Marian import."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from apptest import app, figures, node_text, run, settle

from pages._ui import figures as F
from pages._ui import svg
from transformer.attention import AttentionKind
from transformer.checkpoint import load_checkpoint
from transformer.inspection.alignment import AlignMethod, gold_aer, load_gold
from transformer.inspection.norms import disagreement, sentence_maps
from transformer.layout import DEFAULT_CHECKPOINT

shipped = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")


def _svg_root(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def test_svg_export_is_valid_svg():
    tr = lambda key, **kw: key  # noqa: E731
    m = np.array([[0.2, 0.8], [float("-inf"), 1.0]])
    heat = F.attention_heatmap(m, ["<s>", "a&b"], ["x", "</s>"], tr, "t <b>")
    root = _svg_root(svg.figure_svg(heat))
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    assert len(rects) == 1 + 4  # the background and one per cell
    assert "&lt;/s&gt;" in svg.figure_svg(heat)  # tokens are text, not markup
    line = F.line_chart({"naive": ([0, 1, 2], [0.7, 0.2, 0.1])}, "AER", x_title="layer", y_title="AER")
    root = _svg_root(svg.figure_svg(line))
    assert root.findall("{http://www.w3.org/2000/svg}polyline")
    root = _svg_root(svg.links_svg(["the", "cat"], ["le", "chat"], {(0, 0), (1, 1)}, "x", gold={(0, 0)}))
    lines = root.findall("{http://www.w3.org/2000/svg}line")
    assert len(lines) == 2 and sum("stroke-dasharray" in ln.attrib for ln in lines) == 1


def test_every_kind_of_figure_on_screen_has_its_svg():
    """The figures drawn without a view (plot(fig, key, tr)) are vector too: the overview's tiles, bars,
    lines on log axes; each drawn from the figure's own numbers."""
    tr = lambda key, **kw: key  # noqa: E731
    ns = "{http://www.w3.org/2000/svg}"
    weights = np.random.default_rng(0).random((2, 3, 4, 5))
    root = _svg_root(svg.figure_svg(F.heads_overview(weights, tr, "overview")))
    z = F.heads_overview(weights, tr).data[0].z
    assert len(root.findall(f"{ns}rect")) == 1 + np.asarray(z).size  # a cell per tile pixel and gap
    bars = F.bar_chart(["il", "elle", "<b>"], [0.7, 0.2, 0.1], tr, "who", value_title="share")
    text = svg.figure_svg(bars)
    root = _svg_root(text)
    assert len(root.findall(f"{ns}rect")) == 1 + 3 and "&lt;b&gt;" in text and "0.7" in text
    log = F.line_chart({"a": ([1, 10, 100], [1.0, 0.5, 0.2])}, "t", x_title="d_k", log_x=True)
    points = _svg_root(svg.figure_svg(log)).find(f"{ns}polyline").attrib["points"].split()
    xs = [float(p.split(",")[0]) for p in points]
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1])  # evenly spaced on a log axis


def test_the_gold_set_is_well_formed():
    gold = load_gold()
    assert len(gold) >= 100
    assert len({g.id for g in gold}) == len(gold)
    for g in gold:
        assert g.gold.sure, g.id  # every sentence has sure links
        assert g.gold.sure <= g.gold.possible


def test_norms_and_aer_on_a_tiny_random_marian_import(tiny_marian_root):
    ckpt = load_checkpoint(tiny_marian_root / "tiny-marian")
    tok = ckpt.tokenizer
    src, (tgt_in, _) = tok.source_ids("The dog was tired."), tok.target_ids("Le chien était fatigué.")
    maps = sentence_maps(ckpt.model, src, tgt_in)
    raw, normed = maps[AttentionKind.CROSS]
    assert raw.shape == normed.shape == (ckpt.config.n_decoder_layers, ckpt.config.n_heads, len(tgt_in), len(src))
    np.testing.assert_allclose(raw.sum(-1), 1.0, atol=1e-5)
    d = disagreement(ckpt.model, tok, [("The dog was tired.", "Le chien était fatigué.")])
    assert d.sentences == 1 and all(0 <= d.overall(k) <= 1 for k in AttentionKind)
    seen = []
    report = gold_aer(ckpt.model, tok, load_gold()[:5], seen.append)
    assert seen[-1] == 1.0 and report.sentences + report.skipped == 5
    assert set(report.aer) == set(AlignMethod)
    assert all(len(v) == ckpt.config.n_decoder_layers for v in report.aer.values())


@shipped
def test_the_norm_and_alignment_tabs_render_on_the_default_model():
    at = settle(run(app("headlab", lab_tab="hlb.norms")))
    figs = figures(at)
    assert {"hlb_norm_map", "hlb_disagree_encoder", "hlb_disagree_cross"} <= set(figs)
    assert "%" in node_text(at.get_by_key("hlb_norm_finding"))
    at.session_state["hlb_norm"] = False
    run(at)
    assert "hlb_norm_map" in figures(at)
    at.session_state["lab_tab"] = "hlb.align"
    settle(run(at))
    figs = figures(at)
    assert {"hlb_aer", "hlb_links"} <= set(figs)
    assert len(figs["hlb_aer"]["data"]) == 2  # naive and Shift-Att
    assert "AER" in node_text(at.get_by_key("hlb_aer_finding"))
    at.session_state["hlb_method"] = "naive"
    run(at)
    assert "hlb_links" in figures(at)


@shipped
def test_the_norm_tab_shows_progress_first_then_the_disagreement_computed_off_the_page_thread(monkeypatch):
    """Issue 36: a research computation runs in the background lane (holding no work slot), keyed by what it
    reads, and the tab shows a progress bar until its result is there."""
    import functools
    import threading

    from pages._ui import background, cache, norms_and_alignment, slots

    ran = []

    @functools.wraps(disagreement)  # keyed as disagreement itself (cache.call_key unwraps it)
    def watched(*args, **kwargs):
        ran.append((threading.current_thread().name, getattr(slots._held, "slot", False)))
        return disagreement(*args, **kwargs)

    monkeypatch.setattr(norms_and_alignment, "disagreement", watched)
    background.drain()
    cache.results().clear()
    background.forget()  # a disagreement computed by an earlier test would be shown at once
    at = run(app("headlab", lab_tab="hlb.norms"))
    bars = [el for el in at.get_by_key("hlb_norms_progress") if getattr(el, "type", "") == "progress"]
    assert bars, "the norm tab shows a progress bar on a first visit"
    assert "hlb_disagree_cross" not in figures(at)
    assert "hlb_norm_map" in figures(at)  # the sentence's own maps do not wait for the lane
    settle(at)
    assert {"hlb_disagree_encoder", "hlb_disagree_cross"} <= set(figures(at))
    assert "%" in node_text(at.get_by_key("hlb_norm_finding"))
    assert ran and all(name.startswith("background") and not slot for name, slot in ran)


@pytest.mark.slow
def test_the_norm_and_alignment_tabs_render_on_a_tiny_random_marian_import(tiny_marian_root, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tiny_marian_root))
    text = "The dog was too tired, so it stayed home."
    for name, keys in (("hlb.norms", {"hlb_norm_map", "hlb_disagree_cross"}), ("hlb.align", {"hlb_aer"})):
        at = settle(run(app("headlab", checkpoint="tiny-marian", text=text, lab_tab=name)))
        assert keys <= set(figures(at)), name


@shipped
def test_the_explorer_switches_to_norm_weighted_maps():
    at = run(app())  # the explorer, its heads tab
    before = figures(at)["head_cross"]
    buttons = {el.proto.id.rsplit("-", 1)[-1] for el in at.get("download_button")}
    assert {"head_cross_csv", "head_cross_svg", "head_encoder_svg"} <= buttons  # every view: CSV and SVG
    at.session_state["hlb_explorer_norm"] = True
    run(at)
    after = figures(at)["head_cross"]
    assert "‖α f(x)‖" in json.dumps(after, ensure_ascii=False)
    assert json.dumps(before) != json.dumps(after)
