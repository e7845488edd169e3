"""AppTest runs of the entry page and the explorer on the shipped checkpoint."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from transformer.checkpoint import DEFAULT_CHECKPOINT, load_checkpoint
from transformer.corpus import SEED_SENTENCES

pytestmark = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")

APP = Path(__file__).resolve().parent.parent / "app.py"
TIRED, WIDE = SEED_SENTENCES[0][0], SEED_SENTENCES[1][0]


def _z(trace: dict) -> np.ndarray:
    z = trace["z"]
    if isinstance(z, dict):  # plotly's typed-array encoding
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        return arr.reshape([int(s) for s in str(z["shape"]).split(",")]) if "shape" in z else arr
    return np.array(z, dtype=float)


def _figures(at: AppTest) -> dict[str, dict]:
    return {el.proto.id: json.loads(el.proto.spec) for el in at.get("plotly_chart")}


def _run(text: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception
    at.sidebar.text_area[0].input(text).run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def test_flagship_sentence_translates_with_il_and_heatmaps_have_the_model_shapes():
    at = _run(TIRED)
    texts = _texts(at)
    assert any("qu'il" in t for t in texts), texts
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    cfg = ckpt.config
    S = len(ckpt.tokenizer.encode(TIRED)) + 1
    figs = list(_figures(at).values())
    heat = [_z(f["data"][0]) for f in figs if f["data"][0]["type"] == "heatmap" and f["data"][0].get("zmin", 0) >= 0]
    shapes = {h.shape for h in heat}
    assert (S, S) in shapes  # encoder self-attention, one head
    translation = next(t for t in texts if "qu'il" in t)
    T = len(ckpt.tokenizer.encode(translation)) + 1  # + </s>
    assert (T, T) in shapes and (T, S) in shapes  # decoder self and cross
    # the all-heads overview tiles L x H heads with one-cell gaps
    L, H = cfg.n_encoder_layers, cfg.n_heads
    assert (L * (S + 1) - 1, H * (S + 1) - 1) in shapes
    for h in heat:
        if h.shape in ((S, S), (T, S)):
            assert np.allclose(np.nansum(h, axis=-1), 1.0, atol=1e-3)


def test_wide_sentence_gives_elle():
    at = _run(WIDE)
    assert any("qu'elle" in t for t in _texts(at)), _texts(at)


@pytest.mark.parametrize("text", ["", "   ", "the dog " * 625])
def test_empty_and_huge_inputs_render_without_exception(text):
    at = _run(text)
    if not text.strip():
        assert any("Type an English sentence" in i.value for i in at.info)
    else:
        assert len(text) == 5000
        assert any("pieces" in w.value for w in at.warning)


def test_unknown_characters_are_listed_as_text():
    at = _run("The zebra <b>jumped</b> over 中文.")
    assert not at.exception
    assert any("<unk>" in w.value for w in at.warning)
    assert any("中文" in t for t in _texts(at))


def test_beam_and_examples_change_the_output():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.sidebar.selectbox(key="example").select(WIDE).run()
    assert at.session_state["text"] == WIDE
    # AppTest (1.67) drops the entry page's sidebar from its tree after a rerun, so the second
    # option is set through session state, as the widget itself would.
    at.session_state["beam"] = 4
    at.run()
    assert not at.exception
    assert any("qu'elle" in t for t in _texts(at))


def test_a_corrupt_checkpoint_in_the_picker_gives_a_message(tmp_path, monkeypatch):
    import shutil

    good = tmp_path / "coref-en-fr"
    shutil.copytree(DEFAULT_CHECKPOINT, good, ignore=shutil.ignore_patterns("snapshots"))
    bad = tmp_path / "broken"
    shutil.copytree(good, bad)
    (bad / "model.safetensors").write_bytes(b"not a safetensors file at all")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception
    assert at.session_state["checkpoint"] == "coref-en-fr"  # the shipped one is preselected
    at.sidebar.selectbox(key="checkpoint").select("broken").run()
    assert not at.exception
    assert any("cannot be used" in e.value and "safetensors" in e.value for e in at.error)


def test_an_untrained_snapshot_can_be_explored():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    options = at.sidebar.selectbox(key="checkpoint").options
    assert "coref-en-fr/snapshots/step-000000" in options
    at.sidebar.selectbox(key="checkpoint").select("coref-en-fr/snapshots/step-000000").run()
    assert not at.exception
    assert at.get("plotly_chart")  # an untrained model still has heads to show


def test_a_malformed_card_does_not_break_the_page(tmp_path, monkeypatch):
    import shutil

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
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception
    assert any("L0 H2 = 0.850" in c.value for c in at.caption)


def test_axes_are_labelled_the_right_way_round():
    """Cross rows are the French pieces produced, columns the English pieces (cf. Annotated Transformer #104)."""
    at = _run(TIRED)
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    tok = ckpt.tokenizer
    src = tok.pieces(tok.encode(TIRED)) + ["&lt;/s&gt;"]
    figs = {f["layout"]["title"]["text"]: f for f in _figures(at).values() if f["layout"].get("title")}
    cross = next(f for t, f in figs.items() if t.startswith("Encoder–decoder (cross) attention"))
    dec = next(f for t, f in figs.items() if t.startswith("Decoder masked self-attention"))
    enc = next(f for t, f in figs.items() if t.startswith("Encoder self-attention ·"))
    produced = cross["layout"]["yaxis"]["ticktext"]
    assert cross["layout"]["xaxis"]["ticktext"] == src and enc["layout"]["yaxis"]["ticktext"] == src
    assert "".join(produced).replace("▁", " ").strip().startswith("L'animal")
    assert produced[-1] == "&lt;/s&gt;"  # the last row produces the end of the sentence
    # decoder self-attention: rows name the produced piece, columns the decoder's input (<s> first)
    assert dec["layout"]["yaxis"]["ticktext"] == produced
    assert dec["layout"]["xaxis"]["ticktext"] == ["&lt;s&gt;"] + produced[:-1]
