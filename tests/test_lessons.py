"""AppTest of the lesson pages on the shipped checkpoint: they render, and their printed checks hold."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest import EN, app, check_value, figures, run, tab, table, z_of

from pages._ui.export import table_csv
from pages._ui.i18n import Translator, catalogue
from transformer.layout import SHIPPED_ROOT

pytestmark = pytest.mark.skipif(not (SHIPPED_ROOT / "coref-en-fr").exists(), reason="the shipped checkpoint is missing")
ZH = Translator("zh")


def test_masks_page_padding_and_look_ahead_entries_are_exactly_zero():
    at = run(app("masks"))
    assert set(figures(at)) == {"padding_scaled", "padding_masked", "padding_weights"}
    assert check_value(at, "pad_weight") == 0.0
    figs = figures(at)
    weights = z_of(figs["padding_weights"]["data"][0])
    masked = figs["padding_masked"]["data"][0]
    n_real = int(np.isfinite(z_of(masked)[0]).sum())  # pad columns carry no number ...
    assert n_real < weights.shape[1]
    assert all(t == "−∞" for t in masked["text"][0][n_real:])  # ... and are labelled −∞
    assert np.all(weights[:, n_real:] == 0)
    tab(at, "masks_tab", "masks.tab.look_ahead")
    assert check_value(at, "upper_weight") == 0.0
    w = z_of(figures(at)["look_ahead_weights"]["data"][0])
    assert np.all(w[np.triu_indices(w.shape[0], 1)] == 0)


def test_switching_masks_off_changes_what_the_page_says_it_changes():
    at = run(app("masks", masks_tab="off"))
    assert check_value(at, "upper_open") > 0  # every row now sees later positions
    w = z_of(figures(at)["off_open"]["data"][0])
    assert np.all(w[np.triu_indices(w.shape[0], 1)] > 0)
    assert check_value(at, "pad_delta") <= 1e-6
    assert check_value(at, "pad_delta_open") > 1e-4
    assert len(table(at, "off_table")) == 2


def test_a_table_downloads_what_it_shows_through_the_one_csv_writer(monkeypatch):
    import streamlit as st

    written = {}
    real = st.download_button

    def record(label, data, *args, key=None, **kwargs):
        written[key] = data() if callable(data) else data  # a view's CSV is written when clicked
        return real(label, data, *args, key=key, **kwargs)

    monkeypatch.setattr(st, "download_button", record)
    at = run(app("masks", masks_tab="off"))
    shown = table(at, "off_table")
    assert written["off_table_csv"] == table_csv(shown.to_dict("records"))
    header, *rows = written["off_table_csv"].splitlines()
    assert header == ",".join(f'"{c}"' for c in shown.columns) and len(rows) == 2
    assert written["off_masked_csv"].startswith('"query \\ key",')  # a view's matrix, through the same module


def test_the_leak_twins_show_a_lower_loss_and_a_lower_exact_match_without_the_mask():
    cards = {}
    for name in ("leak-masked", "leak-no-mask"):
        path = SHIPPED_ROOT / name
        if not path.exists():
            pytest.skip(f"{name} is not shipped")
        cards[name] = json.loads((path / "card.json").read_text())
        losses = [json.loads(line)["loss"] for line in (path / "metrics.jsonl").read_text().splitlines()]
        cards[name]["final_loss"] = np.mean(losses[-5:])
    masked, open_ = cards["leak-masked"], cards["leak-no-mask"]
    assert masked["train_config"]["look_ahead_mask"] is True and open_["train_config"]["look_ahead_mask"] is False
    assert open_["final_loss"] < 0.5 * masked["final_loss"]  # it copies the next token from its input
    assert open_["evaluation"]["exact_match"] < masked["evaluation"]["exact_match"] - 0.5
    at = run(app("masks", masks_tab="off"))
    assert "leak_curves" in figures(at)
    shown = table(at, "leak_table")
    assert list(shown[EN("masks.leak.col_exact")]) == [cards[n]["evaluation"]["exact_match"] for n in cards]
    assert list(shown[EN("masks.leak.col_look_ahead")]) == ["✓", "✗"]


def test_positions_page_checks_hold():
    at = run(app("positions"))
    assert check_value(at, "relative") <= 1e-5
    assert {"pe_table", "pe_similarity", "pe_waves"} <= set(figures(at))
    tab(at, "positions_tab", "positions.tab.order")
    assert check_value(at, "order_without") <= 1e-5
    assert check_value(at, "order_with") > 1e-5
    removed = table(at, "order_table").iloc[0]
    assert removed.iloc[1] == removed.iloc[2]  # without positions both orders translate the same
    at.button(key="pe_shuffle").click().run()
    assert at.session_state["pe_seed"] == 1 and check_value(at, "order_without") <= 1e-5


@pytest.mark.parametrize(
    "page,tab_key,tabs",
    [
        ("masks", "masks_tab", ("masks.tab.padding", "masks.tab.look_ahead", "masks.tab.off")),
        (
            "positions",
            "positions_tab",
            ("positions.tab.table", "positions.tab.sentence", "positions.tab.order"),
        ),
    ],
)
def test_pages_speak_chinese(page, tab_key, tabs):
    at = run(app(page, lang="zh"))
    english = [catalogue("en")[k].split("{")[0] for k in ("masks.intro", "positions.intro", "masks.padding.intro")]
    for t in tabs:
        at.session_state[tab_key] = t.rsplit(".", 1)[-1]  # the tab's id; its label follows the language
        run(at)
        assert at.session_state[f"{tab_key}_label"] == ZH(t)
        shown = " ".join(el.value for el in at.markdown) + " ".join(el.value for el in at.caption)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in shown)
        for sentence in english:
            assert sentence[:40] not in shown


def test_the_padding_effect_never_runs_past_max_len(trained_checkpoint):
    """Issue 60, fault 3: the Masks page padded a target that can already hold max_len - 1 pieces with three more,
    and the positional encoding refuses positions past max_len. A model that never writes EOS (random weights)
    on a source cut at max_len is the input that reaches it; the effect is measured, not raised."""
    import torch

    from transformer.checkpoint import load_checkpoint
    from transformer.inspection import masking
    from transformer.model import Transformer

    ckpt = load_checkpoint(trained_checkpoint)
    torch.manual_seed(0)
    model = Transformer(ckpt.model.config).eval()  # random: no EOS, so every decode runs to its limit
    long = " ".join(["the cat sat on the mat because it was tired"] * 40)
    effect = masking.padding_effect(model, ckpt.tokenizer, long, "a dog")
    assert effect.n_pads >= 1 and effect.delta < 1e-9


def test_a_leak_twins_files_are_read_with_a_cap_and_their_types_checked(tmp_path, monkeypatch):
    """Issue 60, fault 7: the Masks page read the twins' cards without a size cap or type checks, and a metrics
    record without "loss" raised KeyError."""
    import json as _json

    from transformer import checkpoint
    from transformer.checkpoint import CheckpointError
    from transformer.inspection.masking import read_leak_run

    run = tmp_path / "leak-masked"
    run.mkdir()
    (run / "card.json").write_text(_json.dumps({"train_config": "oops", "evaluation": {"exact_match": "high"},
                                                "wall_time_s": True}))
    (run / "metrics.jsonl").write_text('{"step": 1, "loss": 2.5}\n{"step": 2}\n{"step": 3, "loss": "x"}\n[1]\n')
    leak = read_leak_run(run)
    assert (leak.steps, leak.losses, leak.final_loss) == ([1], [2.5], 2.5)
    assert leak.look_ahead_mask and leak.exact_match is None and leak.wall_time_s is None
    (run / "card.json").write_text("[]")
    with pytest.raises(CheckpointError, match="not a JSON object"):
        read_leak_run(run)
    monkeypatch.setattr(checkpoint, "MAX_JSON_BYTES", 10)
    (run / "card.json").write_text(_json.dumps({"pad": "x" * 100}))
    with pytest.raises(CheckpointError, match="larger than"):
        read_leak_run(run)
