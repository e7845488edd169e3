"""Head lab: measure every head, switch heads off, watch heads form during training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

from pages._ui import background, cache, figures, norms_and_alignment, research
from pages._ui.folder import inside_root
from pages._ui.i18n import Translator
from pages._ui.probe import default_kind, no_probe_set
from pages._ui.query import model_inputs
from pages._ui.sentence import sentence_analysis
from pages._ui.session import PICK, Subject, open_page
from pages._ui.views import HeadView
from pages._ui.widgets import (
    check,
    choice_radio,
    ensure_choice,
    head_picker,
    lazy_tabs,
    open_tab,
    plot,
    set_head,
    show_view,
    table,
    token_picker,
)
from transformer.analysis import Analysis
from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint
from transformer.corpus import CorpusSpec, generate_test
from transformer.evaluate import PROBE_QUERIES, coreference_probe
from transformer.inspection.card import has_probe_set
from transformer.inspection.headlab import (
    bystanders,
    head_map,
    measure,
    probe_ranking,
    probe_set,
    pronoun_query,
    pronoun_scores,
    rank_heads,
    set_statistics,
    statistics_rows,
)
from transformer.inspection.heads import STATISTICS, head_statistics, rollout
from transformer.layout import snapshots
from transformer.options import CallOptions, HeadMask

TABS = ("statistics", "probe", "ablation", "rollout", "training", *research.TABS, *norms_and_alignment.TABS)
PROBE_N = 300
KINDS = list(AttentionKind)


def _probe_set(ckpt: Checkpoint):
    return probe_set(ckpt.tokenizer, generate_test(CorpusSpec.from_card(ckpt.card)), PROBE_N)


def _examples(ckpt: Checkpoint):
    return generate_test(CorpusSpec.from_card(ckpt.card))[:PROBE_N]


def the_probe_set(subj: Subject):
    return cache.memo(_probe_set, cache.checkpoint(subj.path))


def head_label(head: HeadId, tr: Translator) -> str:
    return f"{tr(f'kind.short.{head.kind.value}')} L{head.layer} H{head.head}"


def statistics_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("lab.statistics_intro"))
    scope = choice_radio(tr("lab.scope"), ("sentence", "probe_set"), "lab_scope", "lab.scope", tr)
    if scope == "probe_set" and not has_probe_set(ckpt.card):
        st.info(no_probe_set(ckpt, tr))
        scope = "sentence"
    if scope == "sentence":
        stats = {kind: head_statistics(a.maps(kind), kind) for kind in KINDS}
        coref = None
    else:
        ps = the_probe_set(subj)
        stats = cache.memo(set_statistics, ckpt.model, ps)
        probe = _background_probe(subj, tr, "lab_stats_progress")
        if probe is None:
            return
        coref = pronoun_scores(probe)
    rows = [
        {
            tr("lab.stat.kind"): tr(f"kind.short.{head.kind.value}"),
            tr("lab.stat.layer"): head.layer,
            tr("lab.stat.head"): head.head,
            **{tr(f"lab.stat.{name}"): None if v is None else round(v, 4) for name, v in values.items()},
        }
        for head, values in statistics_rows(stats, coref)
    ]
    table(rows, "lab_stats_table", tr, "head_statistics")
    c1, c2 = st.columns(2)
    kind = c1.selectbox(tr("common.attention"), KINDS, format_func=lambda k: tr(f"kind.{k.value}"), key="lab_stat_kind")
    names = [n for n in STATISTICS if not np.isnan(stats[kind][n]).all()]
    ensure_choice("lab_stat", names, "entropy")
    name = c2.selectbox(tr("lab.statistic"), names, format_func=lambda n: tr(f"lab.stat.{n}"), key="lab_stat")
    grid = stats[kind][name]
    fig = figures.attention_heatmap(
        grid,
        [f"L{layer}" for layer in range(grid.shape[0])],
        [f"H{h}" for h in range(grid.shape[1])],
        tr,
        tr("lab.grid_title", stat=tr(f"lab.stat.{name}"), kind=tr(f"kind.{kind.value}")),
        zrange=(float(np.nanmin(grid)), float(np.nanmax(grid)) or 1.0),
        show_values=True,
        row_title=tr("common.layer"),
        col_title=tr("common.head"),
        value_title=tr(f"lab.stat.{name}"),
        height=120 + 50 * grid.shape[0],
    )
    plot(fig, "lab_grid", tr)


def _probe_examples(subj: Subject):
    return cache.memo(_examples, cache.checkpoint(subj.path))


def _lane_probe(subj: Subject, path: str):
    """(probe, job): the coreference probe of the checkpoint at path on the subject's probe set if computed, else
    (None, its job in the background lane: off the page thread, holding no work slot)."""
    c = cache.checkpoint(path)
    return background.start(coreference_probe, c.model, c.tokenizer, _probe_examples(subj))


def _background_probe(subj: Subject, tr: Translator, key: str):
    """The subject's probe if computed; else None, with a progress bar while the lane computes it."""
    probe, job = _lane_probe(subj, subj.path)
    if job is not None:
        background.progress(job, key, tr)
    return probe


def _open_in_explorer(head: HeadId, checkpoint: str) -> None:
    set_head(PICK, head, checkpoint)
    open_tab("explorer_tab", "overview")
    st.session_state["_goto"] = "explorer"


def probe_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    if not has_probe_set(ckpt.card):
        st.info(no_probe_set(ckpt, tr))
        return
    st.markdown(tr("lab.probe_intro", n=PROBE_N))
    probe = _background_probe(subj, tr, "lab_probe_progress")
    if probe is None:
        return
    cols = st.columns(len(PROBE_QUERIES))
    for col, q in zip(cols, PROBE_QUERIES):
        with col:
            ranked = probe_ranking(probe, q)
            st.markdown(f"**{tr(f'lab.query.{q.kind.value}_{q.query.value}')}**")
            labels = [f"L{h.layer} H{h.head}" for h, _ in ranked]
            fig = figures.bar_chart(
                labels, [s for _, s in ranked], tr, "", value_title=tr("lab.probe_axis"), highlight=0
            )
            plot(fig, f"lab_probe_{q.kind.value}_{q.query.value}", tr)
            best = ranked[0][0]
            st.button(
                tr("lab.open_explorer", head=f"L{best.layer} H{best.head}"),
                key=f"lab_open_{q.kind.value}_{q.query.value}",
                on_click=_open_in_explorer,
                args=(best, subj.path),
            )


def ablation_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("lab.ablation_intro"))
    cfg = ckpt.config
    all_heads = HeadId.all(cfg)
    ss = st.session_state
    ss["lab_off"] = [h for h in ss.get("lab_off", []) if h in all_heads]
    off = st.multiselect(tr("lab.switch_off"), all_heads, key="lab_off", format_func=lambda h: head_label(h, tr))
    options = CallOptions(head_mask=HeadMask.without(cfg, off)) if off else CallOptions()
    ablated = cache.analyse(subj.path, a.text, subj.beam, options)
    c1, c2 = st.columns(2)
    c1.caption(tr("lab.translation_all"))
    c1.text(a.translation)
    c2.caption(tr("lab.translation_off", n=len(off)))
    with c2.container(key="lab_ablated_translation"):
        st.text(ablated.translation)
    if not has_probe_set(ckpt.card):
        st.info(no_probe_set(ckpt, tr))
        return
    ps = the_probe_set(subj)
    base = cache.memo(measure, ckpt.model, ps)
    now = cache.memo(measure, ckpt.model, ps, options)
    m1, m2 = st.columns(2)
    with m1.container(key="lab_accuracy"):
        st.metric(tr("lab.accuracy", n=ps.n), f"{now.accuracy:.1%}", f"{now.accuracy - base.accuracy:+.1%}")
    with m2.container(key="lab_loss"):
        st.metric(tr("lab.loss"), f"{now.loss:.4f}", f"{now.loss - base.loss:+.4f}", delta_color="inverse")
    st.subheader(tr("lab.ranking_title"))
    ranking, job = background.start(rank_heads, ckpt.model, ps)
    if job is not None:
        background.progress(job, "lab_ranking_progress", tr)
        return
    base, effects = ranking
    probe = _background_probe(subj, tr, "lab_ranking_progress")
    if probe is None:
        return
    scores = pronoun_scores(probe)
    rows = [
        {
            tr("lab.col_head"): head_label(e.head, tr),
            tr("lab.col_accuracy_drop"): round(e.accuracy_drop, 4),
            tr("lab.col_loss_rise"): round(e.loss_rise, 4),
            tr("lab.col_probe"): round(scores[e.head], 3) if e.head in scores else None,
        }
        for e in effects
    ]
    table(rows, "lab_ranking", tr)
    found = bystanders(effects, scores)
    with st.container(key="lab_bystanders"):
        if found:
            st.warning(tr("lab.bystanders", heads=", ".join(head_label(h, tr) for h in found)))
        else:
            st.info(tr("lab.no_bystanders"))
    st.caption(tr("lab.caveat"))


def rollout_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("lab.rollout_intro"))
    token = token_picker("lab_token", a.source_pieces, a.pronoun_source or 0, (subj.path, a.text), tr("lab.token"))
    roll = rollout(a.encoder)  # (L, S, S)
    raw = a.encoder.mean(1)  # (L, S, S) heads averaged
    layers = [f"L{layer}" for layer in range(roll.shape[0])]
    for col, (name, grid) in zip(st.columns(2), (("raw", raw), ("rollout", roll))):
        with col:
            title = tr(f"lab.{name}_title", token=a.source_pieces[token])
            fig = figures.attention_heatmap(
                grid[:, token],
                layers,
                a.source_pieces,
                tr,
                title,
                row_title=tr("common.layer"),
                height=200 + 30 * len(layers),
            )
            plot(fig, f"lab_{name}", tr)
    check("rollout_rows", tr("lab.rollout_check"), float(np.abs(roll.sum(-1) - 1).max()), 1e-9, tr)
    st.caption(tr("lab.rollout_caveat"))


def readable_snapshots(run: Path) -> list[tuple[int, Path]]:
    """The run's snapshots that lie inside the checkpoints root (links are never listed nor read)."""
    return [(step, path) for step, path in snapshots(run) if inside_root(str(path))]


def training_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    snaps = readable_snapshots(Path(subj.path))
    if not snaps:
        st.info(tr("lab.no_snapshots"))
        return
    st.markdown(tr("lab.training_intro", n=len(snaps)))
    steps = [step for step, _ in snaps] + [None]
    choice = head_picker(PICK, ckpt, tr, kinds=KINDS, default_kind=default_kind(ckpt))
    ensure_choice("lab_snapshot", steps, steps[0])
    step = st.select_slider(
        tr("lab.snapshot"), steps, key="lab_snapshot", format_func=lambda s: tr("lab.final") if s is None else str(s)
    )
    src, dec = model_inputs(ckpt, a)
    if step is None:
        show_view(HeadView(choice), _ctx(subj, ckpt, a), tr, "lab_snapshot_map")
    else:
        path = str(dict(snaps)[step])
        grid = cache.memo(head_map, cache.checkpoint(path).model, src, dec, choice)
        rows, cols = a.labels(choice.kind)
        title = tr("lab.snapshot_title", step=step, head=head_label(choice, tr))
        plot(figures.attention_heatmap(grid, rows, cols, tr, title), "lab_snapshot_map", tr)
    q = pronoun_query(choice.kind)
    if has_probe_set(ckpt.card) and q is not None:
        lane = [_lane_probe(subj, path) for path in [*(str(p) for _, p in snaps), subj.path]]  # every job queued
        waiting = next((job for _, job in lane if job is not None), None)
        if waiting is not None:
            background.progress(waiting, "lab_formation_progress", tr)
            return
        xs = [s for s, _ in snaps]
        xs.append(ckpt.card["step"] if isinstance(ckpt.card.get("step"), int) else xs[-1] + 1)
        ys = [float(probe.scores[q][choice.layer, choice.head]) for probe, _ in lane]
        label = head_label(choice, tr)
        plot(
            figures.line_chart(
                {label: (xs, ys)},
                tr("lab.formation_title", head=label),
                x_title=tr("fig.step"),
                y_title=tr("lab.probe_axis"),
                markers=True,
                y_range=(0, 1.02),
            ),
            "lab_formation",
            tr,
        )


def _ctx(subj: Subject, ckpt: Checkpoint, a: Analysis):
    from pages._ui.sentence import view_context

    return view_context(subj, ckpt, a)


RENDER = {
    "statistics": statistics_tab,
    "probe": lambda subj, ckpt, a, tr: probe_tab(subj, ckpt, tr),
    "ablation": ablation_tab,
    "rollout": rollout_tab,
    "training": training_tab,
    **research.RENDER,  # roles, importance and pruning, logit lens (pages/_ui/research.py)
    **norms_and_alignment.RENDER,  # norm-weighted attention, alignment (pages/_ui/norms_and_alignment.py)
}


def page() -> None:
    tr, subj, ckpt = open_page("lab.title")
    st.markdown(tr("lab.intro"))
    a = sentence_analysis(subj, ckpt, tr)
    lazy_tabs("lab_tab", TABS, "lab.tab", tr, RENDER, subj, ckpt, a, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
