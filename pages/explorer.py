"""The attention explorer: every head of the encoder, the decoder and the cross attention for a typed sentence."""

from __future__ import annotations

import streamlit as st

from pages._ui import cache, lecture_banner, norms_and_alignment
from pages._ui.folder import checkpoint_choices
from pages._ui.i18n import Translator
from pages._ui.probe import default_head, default_kind, route_statement
from pages._ui.sentence import sentence_analysis, view_context
from pages._ui.session import EXAMPLES, PICK, open_page, subject
from pages._ui.views import (
    CandidatesView,
    Context,
    DiffView,
    FocusView,
    HeadView,
    OverviewView,
    ReplayView,
    WordsView,
)
from pages._ui.widgets import (
    choice_radio,
    ensure_choice,
    head_picker,
    lazy_tabs,
    plot,
    shared_figure,
    show_view,
    token_picker,
)
from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import CheckpointError
from transformer.inspection.languages import writes_without_spaces
from transformer.provenance import target_language

KINDS = list(AttentionKind)
TABS = ("heads", "overview", "focus", "words", "compare", "replay")


def _enlarge_clicked() -> None:
    """Runs before the rerun: a clicked ring of the overview becomes the enlarged head (and a lecture's answer)."""
    event = st.session_state.get("overview_chart") or {}
    points = (event.get("selection") or {}).get("points") or []
    custom = points[0].get("customdata") if points else None
    if custom:
        st.session_state[f"{PICK}_layer"], st.session_state[f"{PICK}_head"] = int(custom[0]), int(custom[1])
        kind = st.session_state.get(f"{PICK}_kind")
        if isinstance(kind, AttentionKind):  # in a lecture, the click also answers "which head resolves it?"
            lecture_banner.answer_head(HeadId(kind, int(custom[0]), int(custom[1])))


def heads_tab(ctx: Context, tr: Translator) -> None:
    st.caption(tr("explorer.heads.caption"))
    normed = norms_and_alignment.explorer_toggle(tr)  # raw weights or ‖α f(x)‖ (Kobayashi et al. 2020)
    slots = st.columns(2) + st.columns(2)
    for col, kind in zip(slots, (AttentionKind.ENCODER, AttentionKind.CROSS, AttentionKind.DECODER)):
        with col:
            choice = head_picker(f"heads_{kind.value}", ctx.checkpoint, tr, default_kind=kind)
            if normed:
                norms_and_alignment.show_norm_head(choice, ctx, tr, f"head_{kind.value}")
            else:
                show_view(HeadView(choice), ctx, tr, f"head_{kind.value}")
    with slots[3]:
        st.caption(tr("explorer.heads.how_to_read_title"))
        st.markdown(tr("explorer.heads.how_to_read"))


def overview_tab(ctx: Context, tr: Translator) -> None:
    choice = head_picker(PICK, ctx.checkpoint, tr, kinds=KINDS, default_kind=default_kind(ctx.checkpoint))
    st.caption(tr("explorer.overview.caption"))
    view = OverviewView(choice.kind, choice)
    plot(
        shared_figure(view, ctx, tr),
        "overview_chart",
        tr,
        on_select=_enlarge_clicked,
        selection_mode="points",
    )
    show_view(HeadView(choice), ctx, tr, "overview_big")


def focus_tab(ctx: Context, tr: Translator) -> None:
    a = ctx.analysis
    st.caption(tr("explorer.focus.caption"))
    origin = (str(ctx.checkpoint.path), a.text)
    q = token_picker("focus_src", a.source_pieces, a.pronoun_source or 0, origin, tr("explorer.focus.source"))
    show_view(FocusView(AttentionKind.ENCODER, q), ctx, tr, "focus_encoder")
    if a.output_pieces:
        t = token_picker("focus_tgt", a.output_pieces, a.pronoun_step or 0, origin, tr("explorer.focus.produced"))
        show_view(FocusView(AttentionKind.CROSS, t), ctx, tr, "focus_cross")


def words_tab(ctx: Context, tr: Translator) -> None:
    st.caption(tr("explorer.words.rule"))
    if writes_without_spaces(target_language(ctx.checkpoint.card)):
        st.caption(tr("zh.words_rule"))
        if ctx.checkpoint.tokenizer.restores_full_width:
            st.caption(tr("zh.words_full_width"))
    choice = head_picker(PICK, ctx.checkpoint, tr, kinds=KINDS, default_kind=default_kind(ctx.checkpoint))
    show_view(WordsView(choice), ctx, tr, "words")


def compare_tab(ctx: Context, tr: Translator) -> None:
    mode = choice_radio(
        tr("explorer.compare.mode"), ("sentences", "checkpoints"), "cmp_mode", "explorer.compare.mode", tr
    )
    if mode == "checkpoints":
        compare_checkpoints(ctx, tr)
    else:
        compare_sentences(ctx, tr)


def compare_checkpoints(ctx: Context, tr: Translator) -> None:
    """The same sentence through two checkpoints, one chosen head of each, side by side."""
    st.caption(tr("explorer.compare.checkpoints_caption"))
    choices = checkpoint_choices()
    here = next((label for label, path in choices.items() if path == str(ctx.checkpoint.path)), None)
    others = [label for label in choices if label != here] or list(choices)
    default = next((label for label in others if "encoder" in label), others[0])
    ensure_choice("cmp_ckpt", others, default)
    other_label = st.selectbox(tr("explorer.compare.other"), others, key="cmp_ckpt")
    sides = st.columns(2)
    subj = subject()
    for col, (label, path, key) in zip(
        sides,
        ((here or subj.label, str(ctx.checkpoint.path), "cmp_left"), (other_label, choices[other_label], "cmp_right")),
    ):
        with col:
            try:
                ckpt = cache.checkpoint(path)
            except CheckpointError as exc:
                st.error(tr("common.bad_checkpoint"))
                st.text(str(exc))
                continue
            st.markdown(f"**{label}**")
            a = cache.analyse(path, ctx.analysis.text, subj.beam)
            st.text(a.translation)
            statement = route_statement(ckpt, tr, f"{key}_probe")
            if statement:
                st.caption(statement)
            side = Context(a, ckpt, ctx.other)
            choice = head_picker(key, ckpt, tr, kinds=KINDS, default_kind=AttentionKind.ENCODER)
            show_view(HeadView(choice), side, tr, f"{key}_fig")


def compare_sentences(ctx: Context, tr: Translator) -> None:
    st.caption(tr("explorer.compare.caption"))
    ss = st.session_state
    ss.setdefault("cmp_a", EXAMPLES[0])
    ss.setdefault("cmp_b", EXAMPLES[1])
    c1, c2 = st.columns(2)
    text_a = c1.text_input(tr("explorer.compare.a"), key="cmp_a")
    text_b = c2.text_input(tr("explorer.compare.b"), key="cmp_b")
    if not text_a.strip() or not text_b.strip():
        st.info(tr("explorer.compare.need_two"))
        return
    a, b = ctx.other(text_a), ctx.other(text_b)
    c1.text(a.translation)
    c2.text(b.translation)
    choice = head_picker(PICK, ctx.checkpoint, tr, kinds=[AttentionKind.CROSS, AttentionKind.ENCODER])
    ctx_a, ctx_b = Context(a, ctx.checkpoint, ctx.other), Context(b, ctx.checkpoint, ctx.other)
    p1, p2, p3 = st.columns(3)
    with p1:
        show_view(HeadView(choice), ctx_a, tr, "cmp_a_fig", csv=False)
    with p2:
        show_view(HeadView(choice), ctx_b, tr, "cmp_b_fig", csv=False)
    with p3:
        show_view(DiffView(choice, text_b), ctx_a, tr, "cmp_diff")
    ma, mb = a.maps(choice.kind), b.maps(choice.kind)
    if ma.shape != mb.shape:
        st.warning(tr("explorer.compare.sizes", a=f"{ma.shape[-2]}×{ma.shape[-1]}", b=f"{mb.shape[-2]}×{mb.shape[-1]}"))


def replay_tab(ctx: Context, tr: Translator) -> None:
    a = ctx.analysis
    T = len(a.output_pieces)
    if T == 0:
        st.info(tr("explorer.replay.nothing"))
        return
    ss = st.session_state
    steps = list(range(1, T + 1))
    start = T if a.pronoun_step is None else a.pronoun_step + 1  # open on the step that writes the pronoun
    origin = (str(ctx.checkpoint.path), a.text)
    if ss.get("replay_origin") != origin:
        ss["replay_origin"], ss["replay_step"] = origin, start
    ensure_choice("replay_step", steps, start)
    step = st.select_slider(tr("explorer.replay.step"), steps, key="replay_step") if T > 1 else 1
    layer_default = default_head(ctx.checkpoint, AttentionKind.CROSS).layer
    ensure_choice("replay_layer", range(a.cross.shape[0]), layer_default)
    layer = st.selectbox(tr("common.layer"), range(a.cross.shape[0]), key="replay_layer")
    st.caption(tr("explorer.replay.so_far"))
    st.text(" ".join(a.output_pieces[:step]))
    c1, c2 = st.columns([3, 1])
    with c1:
        show_view(ReplayView(layer, step), ctx, tr, "replay")
    with c2:
        show_view(CandidatesView(step), ctx, tr, "candidates", csv=False)


RENDER = {
    "heads": heads_tab,
    "overview": overview_tab,
    "focus": focus_tab,
    "words": words_tab,
    "compare": compare_tab,
    "replay": replay_tab,
}


def page() -> None:
    tr, subj, ckpt = open_page("explorer.title")
    a = sentence_analysis(subj, ckpt, tr)
    statement = route_statement(ckpt, tr)
    if statement:
        with st.container(key="route"):
            st.info(statement)
    ctx = view_context(subj, ckpt, a)
    lazy_tabs("explorer_tab", TABS, "explorer.tab", tr, RENDER, ctx, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
