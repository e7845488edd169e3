"""Masks: what the padding mask and the look-ahead mask do, and what happens when one is switched off."""

from __future__ import annotations

import streamlit as st

from pages._ui import cache, figures
from pages._ui.i18n import Translator
from pages._ui.lesson_views import STAGES, LookAheadRowView, LookAheadView, PaddingStageView
from pages._ui.sentence import sentence_analysis
from pages._ui.session import Subject, open_page
from pages._ui.widgets import check, ensure_choice, head_picker, lazy_tabs, plot, show_view, table
from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint, CheckpointError
from transformer.inspection import masking
from transformer.inspection.masking import Stage
from transformer.layout import checkpoints_root

TABS = ("padding", "look_ahead", "off")
OTHER = "The dogs and the cat didn't cross the bridge because they were too tired."
LEAK_TWINS = ("leak-masked", "leak-no-mask")


def padding_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    st.markdown(tr("masks.padding.intro"))
    st.session_state.setdefault("mask_other", OTHER)
    other = st.text_input(tr("masks.padding.other"), key="mask_other")
    if not other.strip():
        st.info(tr("masks.padding.need_other"))
        return
    demo = cache.memo(masking.padding_demo, ckpt.model, ckpt.tokenizer, [subj.text, other])
    if demo.lengths[0] == demo.lengths[1]:
        st.warning(tr("masks.padding.same_length"))
    B, _, _, S = demo.mask.shape
    H = ckpt.config.n_heads
    st.markdown(tr("masks.padding.shape", B=B, S=S, H=H, lengths=", ".join(map(str, demo.lengths))))
    choice = head_picker("mask_pad", ckpt, tr, default_kind=AttentionKind.ENCODER)
    cols = st.columns(3)
    for col, stage in zip(cols, STAGES):
        with col:
            show_view(PaddingStageView(stage, choice), demo, tr, f"padding_{stage}")
    check("pad_weight", tr("masks.padding.check"), demo.pad_weight(), 0.0, tr)


def look_ahead_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    st.markdown(tr("masks.look_ahead.intro"))
    demo = cache.memo(masking.look_ahead_demo, ckpt.model, ckpt.tokenizer, subj.text)
    T = len(demo.targets)
    st.markdown(tr("masks.look_ahead.shape", T=T))
    choice = head_picker("mask_dec", ckpt, tr, default_kind=AttentionKind.DECODER)
    rows = list(range(T))
    ensure_choice("mask_row", rows, min(T - 1, 3))
    row = (
        st.select_slider(
            tr("masks.look_ahead.row"), rows, key="mask_row", format_func=lambda i: f"{i}: {demo.targets[i]}"
        )
        if T > 1
        else 0
    )
    show_view(LookAheadRowView(choice, row), demo, tr, "look_ahead_row")
    c1, c2 = st.columns(2)
    with c1:
        show_view(LookAheadView(Stage.MASKED, choice), demo, tr, "look_ahead_masked")
    with c2:
        show_view(LookAheadView(Stage.WEIGHTS, choice), demo, tr, "look_ahead_weights")
    check("upper_weight", tr("masks.look_ahead.check"), float(demo.upper(demo.weights).max(initial=0.0)), 0.0, tr)


def _leak_runs(tr: Translator) -> None:
    """The twins trained with and without the look-ahead mask: curves and exact match, from their files."""
    root = checkpoints_root()
    found = {name: root / name for name in LEAK_TWINS if (root / name / "card.json").is_file()}
    if len(found) < 2:
        st.info(tr("masks.leak.missing", names=", ".join(LEAK_TWINS)))
        return
    series, rows = {}, []
    for name, path in found.items():
        label = tr(f"masks.leak.{name}")
        try:
            run = masking.read_leak_run(path)
        except CheckpointError as exc:
            st.warning(tr("masks.leak.unreadable", name=name, error=exc))
            continue
        series[label] = (run.steps, run.losses)
        rows.append(
            {
                tr("masks.leak.col_model"): label,
                tr("masks.leak.col_look_ahead"): "✓" if run.look_ahead_mask else "✗",
                tr("masks.leak.col_loss"): None if run.final_loss is None else round(run.final_loss, 3),
                tr("masks.leak.col_exact"): run.exact_match,
                tr("masks.leak.col_time"): run.wall_time_s,
            }
        )
    plot(
        figures.line_chart(series, tr("masks.leak.curves"), x_title=tr("fig.step"), y_title=tr("fig.loss")),
        "leak_curves",
        tr,
    )
    table(rows, "leak_table", tr)
    st.markdown(tr("masks.leak.explain"))


def off_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    st.subheader(tr("masks.off.look_ahead"))
    st.markdown(tr("masks.off.look_ahead_intro"))
    demo = cache.memo(masking.look_ahead_demo, ckpt.model, ckpt.tokenizer, subj.text)
    choice = head_picker("mask_off", ckpt, tr, default_kind=AttentionKind.DECODER)
    c1, c2 = st.columns(2)
    with c1:
        show_view(LookAheadView(Stage.WEIGHTS, choice), demo, tr, "off_masked")
    with c2:
        show_view(LookAheadView(Stage.OPEN, choice), demo, tr, "off_open")
    check(
        "upper_open",
        tr("masks.off.upper_open"),
        float(demo.upper(demo.weights_open).min(initial=1.0)),
        0.0,
        tr,
        above=True,
    )
    table(
        [
            {
                tr("masks.off.col_mask"): tr("masks.off.with"),
                tr("masks.off.col_loss"): round(demo.loss, 4),
                tr("masks.off.col_predicted"): " ".join(demo.predicted),
            },
            {
                tr("masks.off.col_mask"): tr("masks.off.without"),
                tr("masks.off.col_loss"): round(demo.loss_open, 4),
                tr("masks.off.col_predicted"): " ".join(demo.predicted_open),
            },
        ],
        "off_table",
        tr,
    )
    st.caption(tr("masks.off.no_claim"))
    st.subheader(tr("masks.leak.title"))
    _leak_runs(tr)
    st.subheader(tr("masks.off.padding"))
    other = st.session_state.get("mask_other") or OTHER
    effect = cache.memo(masking.padding_effect, ckpt.model, ckpt.tokenizer, subj.text, other)
    st.markdown(tr("masks.off.padding_intro", pads=effect.n_pads))
    check("pad_delta", tr("masks.off.delta_with"), effect.delta, 1e-6, tr)
    check("pad_delta_open", tr("masks.off.delta_without"), effect.delta_open, 1e-4, tr, above=True)
    st.caption(tr("masks.off.translation_with"))
    st.text(effect.translation)
    st.caption(tr("masks.off.translation_without"))
    st.text(effect.translation_open)


RENDER = {"padding": padding_tab, "look_ahead": look_ahead_tab, "off": off_tab}


def page() -> None:
    tr, subj, ckpt = open_page("masks.title")
    st.markdown(tr("masks.intro"))
    sentence_analysis(subj, ckpt, tr)
    lazy_tabs("masks_tab", TABS, "masks.tab", tr, RENDER, subj, ckpt, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
