"""AppTest runs of the entry page and the explorer on the shipped checkpoint (elements found by key)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from apptest import EN, app, checkpoint_names, figures, node_text, run, settle, tab, texts, z_of

from transformer.checkpoint import load_checkpoint
from transformer.corpus import SEED_SENTENCES
from transformer.layout import DEFAULT_CHECKPOINT, DEFAULT_NAME

pytestmark = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")
TIRED, WIDE = SEED_SENTENCES[0][0], SEED_SENTENCES[1][0]


def translation(at) -> str:
    return node_text(at.get_by_key("translation"))


def test_flagship_sentence_translates_with_il_and_heatmaps_have_the_model_shapes():
    at = run(app(text=TIRED))
    assert "qu'il" in translation(at)
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    S = len(ckpt.tokenizer.encode(TIRED)) + 1
    T = len(ckpt.tokenizer.encode(translation(at).splitlines()[-1])) + 1  # + </s>
    figs = figures(at)
    assert set(figs) == {"head_encoder", "head_cross", "head_decoder"}  # only the open tab draws
    shapes = {k: z_of(f["data"][0]).shape for k, f in figs.items()}
    assert shapes == {"head_encoder": (S, S), "head_decoder": (T, T), "head_cross": (T, S)}
    for key in ("head_encoder", "head_cross"):
        np.testing.assert_allclose(np.nansum(z_of(figs[key]["data"][0]), axis=-1), 1.0, atol=1e-3)
    # the cross head opens on the probe's best head (from the default's card)
    best = ckpt.card["real_coref"]["best_heads"]["cross/pronoun"]
    opened = (at.session_state["heads_cross_layer"], at.session_state["heads_cross_head"])
    assert opened == (best["layer"], best["head"])


def test_every_tab_renders_only_its_own_figures():
    expected = {
        "explorer.tab.overview": {"overview_chart", "overview_big"},
        "explorer.tab.focus": {"focus_encoder", "focus_cross"},
        "explorer.tab.words": {"words"},
        "explorer.tab.compare": {"cmp_a_fig", "cmp_b_fig", "cmp_diff"},
        "explorer.tab.replay": {"replay", "candidates"},
    }
    at = run(app(text=TIRED))
    for tab_key, keys in expected.items():
        tab(at, "explorer_tab", tab_key)
        assert set(figures(at)) == keys, tab_key
    # the overview tiles L x H heads with one-cell gaps
    at = run(app(text=TIRED, explorer_tab="overview", pick_kind="encoder"))
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    S, L, H = len(ckpt.tokenizer.encode(TIRED)) + 1, ckpt.config.n_encoder_layers, ckpt.config.n_heads
    assert z_of(figures(at)["overview_chart"]["data"][0]).shape == (L * (S + 1) - 1, H * (S + 1) - 1)


def test_wide_sentence_gives_elle():
    at = run(app(text=WIDE))
    assert "qu'elle" in translation(at)


@pytest.mark.parametrize("text", ["", "   ", "the dog " * 625])
def test_empty_and_huge_inputs_render_without_exception(text):
    at = run(app(text=text))
    if not text.strip():
        assert [i.value for i in at.info] == [EN("sentence.empty")] and figures(at) == {}
    else:
        notes = node_text(at.get_by_key("sentence_notes"))
        pieces = len(load_checkpoint(DEFAULT_CHECKPOINT).tokenizer.encode(text))
        assert EN("sentence.truncated", pieces=pieces, limit=127) in notes  # the model reads 127 pieces
        assert set(figures(at)) == {"head_encoder", "head_cross", "head_decoder"}
        assert z_of(figures(at)["head_encoder"]["data"][0]).shape == (128, 128)  # 127 pieces and </s>


def test_unknown_characters_are_listed_as_text():
    at = run(app(text="The zebra <b>jumped</b> over 中文."))
    assert "中文." in node_text(at.get_by_key("sentence_notes"))


def test_beam_and_examples_change_the_output():
    at = run(app())
    at.sidebar.selectbox(key="example").select(WIDE).run()
    assert at.session_state["text"] == WIDE
    at.sidebar.slider(key="beam").set_value(4).run()
    assert not at.exception
    assert "qu'elle" in translation(at)


def test_a_corrupt_checkpoint_in_the_picker_gives_a_message(tmp_path, monkeypatch):
    good = tmp_path / DEFAULT_NAME
    shutil.copytree(DEFAULT_CHECKPOINT, good, ignore=shutil.ignore_patterns("snapshots"))
    bad = tmp_path / "broken"
    shutil.copytree(good, bad)
    (bad / "model.safetensors").write_bytes(b"not a safetensors file at all")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    at = run(app())
    assert at.session_state["checkpoint"] == DEFAULT_NAME  # the shipped default is preselected
    at.sidebar.selectbox(key="checkpoint").select("broken").run()
    assert not at.exception
    assert [e.value for e in at.error] == [EN("common.bad_checkpoint")]
    assert any("safetensors" in t for t in texts(at))  # the loader's own message, as text


def test_an_untrained_snapshot_can_be_explored():
    at = run(app())
    options = checkpoint_names(at)
    assert "coref-en-fr/snapshots/step-000000" in options
    at.sidebar.selectbox(key="checkpoint").select("coref-en-fr/snapshots/step-000000").run()
    assert not at.exception
    figs = figures(at)  # an untrained model still has heads to show: proper attention rows
    assert set(figs) == {"head_encoder", "head_cross", "head_decoder"}
    for key in ("head_encoder", "head_cross"):
        np.testing.assert_allclose(np.nansum(z_of(figs[key]["data"][0]), axis=-1), 1.0, atol=1e-3)


def test_a_malformed_card_does_not_break_the_page(tmp_path, monkeypatch):
    ckpt = tmp_path / "odd"
    shutil.copytree(DEFAULT_CHECKPOINT, ckpt, ignore=shutil.ignore_patterns("snapshots"))
    card = json.loads((ckpt / "card.json").read_text())
    card["evaluation"]["heads"] = [
        {"kind": "cross", "query": "pronoun", "layer": 99, "head": 0, "score": 1.0},  # no such layer
        {"kind": "cross", "query": "pronoun", "layer": "[x](javascript:1)", "head": 0, "score": 0.9},
        "not a head",
        {"kind": "cross", "query": "pronoun", "layer": 0, "head": 2, "score": "0.85"},
    ]
    (ckpt / "card.json").write_text(json.dumps(card))
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    at = run(app(explorer_tab="focus"))
    # the only well-formed probe entry is starred in token focus, and the cross picker opens on it
    focus = figures(at)["focus_cross"]
    assert any("★0.85" in label for label in focus["data"][0]["y"])
    tab(at, "explorer_tab", "explorer.tab.heads")
    assert (at.session_state["heads_cross_layer"], at.session_state["heads_cross_head"]) == (0, 2)


def test_axes_are_labelled_the_right_way_round():
    """Cross rows are the French pieces produced, columns the English pieces (cf. Annotated Transformer #104)."""
    at = run(app(text=TIRED))
    tok = load_checkpoint(DEFAULT_CHECKPOINT).tokenizer
    src = tok.pieces(tok.encode(TIRED)) + ["&lt;/s&gt;"]
    figs = figures(at)
    clean = lambda labels: [s.replace("\u200b", "") for s in labels]  # noqa: E731
    cross, dec, enc = figs["head_cross"]["data"][0], figs["head_decoder"]["data"][0], figs["head_encoder"]["data"][0]
    produced = clean(cross["y"])
    assert clean(cross["x"]) == src and clean(enc["y"]) == src
    assert "".join(produced).replace("▁", " ").strip().startswith("L'animal")
    assert produced[-1] == "&lt;/s&gt;"  # the last row produces the end of the sentence
    # decoder self-attention: rows name the produced piece, columns the decoder's input (<s> first)
    assert clean(dec["y"]) == produced
    assert clean(dec["x"]) == ["&lt;s&gt;"] + produced[:-1]


def test_chinese_is_one_switch_away():
    at = run(app(text=TIRED, lang="zh"))
    page_text = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "行是查询" in page_text and "Rows are queries" not in page_text


# (page, its tab state key, tab): a tab of each page that draws figures without a view (plot(fig, key, tr))
SVG_TABS = [
    ("explorer", "explorer_tab", "overview"),
    ("arithmetic", "steps_tab", "scaling"),
    ("masks", "masks_tab", "off"),
    ("positions", "positions_tab", "order"),
    ("variants", "variants_tab", "scoring"),
    ("variants", "variants_tab", "table1"),
    ("headlab", "lab_tab", "statistics"),
]


@pytest.mark.parametrize(("page", "state", "name"), SVG_TABS)
def test_every_figure_on_screen_has_an_svg_download(page, state, name):
    """Issue 36's export: SVG (vector) as well as PNG of any figure on screen, not only of the typed views."""
    at = settle(run(app(None if page == "explorer" else page, **{state: name})))
    drawn = set(figures(at))
    assert drawn, (page, name)
    buttons = {el.proto.id.rsplit("-", 1)[-1] for el in at.get("download_button")}
    assert {f"{key}_svg" for key in drawn} <= buttons, (page, name, drawn - {b[:-4] for b in buttons})
