"""Head lab: measure every head, switch heads off, watch heads form during training."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
import torch

from pages._ui import cache, figures
from pages._ui.i18n import Translator
from pages._ui.sentence import sentence_analysis
from pages._ui.session import PICK, Subject, open_page, translator
from pages._ui.views import HeadView
from pages._ui.widgets import (
    check,
    choice_radio,
    ensure_choice,
    head_picker,
    lazy_tabs,
    plot,
    show_view,
    table,
    token_picker,
)
from pages.arithmetic import model_inputs
from transformer.analysis import Analysis
from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint
from transformer.corpus import CorpusSpec, generate_test
from transformer.evaluate import PROBE_QUERIES, coreference_probe
from transformer.inspection.headlab import probe_set, rank_heads, set_statistics
from transformer.inspection.heads import STATISTICS, head_statistics, rollout
from transformer.layout import snapshots
from transformer.options import CallOptions, HeadMask

TABS = ("statistics", "probe", "ablation", "rollout", "training")
PROBE_N = 300
KINDS = list(AttentionKind)


def has_probe_set(ckpt: Checkpoint) -> bool:
    train = ckpt.card.get("train_config") if isinstance(ckpt.card, dict) else None
    return not (isinstance(train, dict) and train.get("data_file"))


def the_probe_set(subj: Subject):
    return cache.memo(
        "probe_set",
        subj.path,
        PROBE_N,
        lambda c: probe_set(c.tokenizer, generate_test(CorpusSpec.from_card(c.card)), PROBE_N),
    )


def head_label(kind: AttentionKind, layer: int, head: int, tr: Translator) -> str:
    return f"{tr(f'kind.short.{AttentionKind(kind).value}')} L{layer} H{head}"


def statistics_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("lab.statistics_intro"))
    scope = choice_radio(tr("lab.scope"), ("sentence", "probe_set"), "lab_scope", "lab.scope", tr)
    if scope == "probe_set" and not has_probe_set(ckpt):
        st.info(tr("lab.no_probe_set"))
        scope = "sentence"
    if scope == "sentence":
        stats = {kind: head_statistics(a.maps(kind), kind) for kind in KINDS}
        coref = None
    else:
        ps = the_probe_set(subj)
        stats = cache.memo("set_statistics", subj.path, PROBE_N, lambda c: set_statistics(c.model, ps))
        coref = _probe(subj)
    rows = []
    for kind in KINDS:
        L, H = stats[kind]["entropy"].shape
        for layer in range(L):
            for head in range(H):
                row = {"kind": kind.value, "layer": layer, "head": head}
                for name in STATISTICS:
                    value = stats[kind][name][layer, head]
                    row[name] = None if np.isnan(value) else round(float(value), 4)
                if coref is not None and kind is not AttentionKind.DECODER:
                    q = next(q for q in PROBE_QUERIES if q.kind is kind and q.query == "pronoun")
                    row["coreference"] = round(float(coref.scores[q][layer, head]), 4)
                rows.append(row)
    frame = pd.DataFrame(rows).rename(columns=lambda c: tr(f"lab.stat.{c}"))
    with st.container(key="lab_stats_table"):
        st.dataframe(frame, hide_index=True)
    st.download_button(
        tr("common.csv"),
        frame.to_csv(index=False),
        "head_statistics.csv",
        "text/csv",
        key="lab_stats_csv",
        on_click="ignore",
    )
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
    plot(fig, "lab_grid")


def _probe(subj: Subject):
    ps_examples = cache.memo(
        "probe_examples", subj.path, PROBE_N, lambda c: generate_test(CorpusSpec.from_card(c.card))[:PROBE_N]
    )
    return cache.memo("probe", subj.path, PROBE_N, lambda c: coreference_probe(c.model, c.tokenizer, ps_examples))


def _open_in_explorer(kind: str, layer: int, head: int) -> None:
    ss = st.session_state
    ss[f"{PICK}_kind"], ss[f"{PICK}_layer"], ss[f"{PICK}_head"] = AttentionKind(kind), layer, head
    ss[f"{PICK}_origin"] = None  # keep the chosen head, not the checkpoint's default
    ss["explorer_tab"] = translator()("explorer.tab.overview")
    ss["_goto"] = "explorer"


def probe_tab(subj: Subject, ckpt: Checkpoint, tr: Translator) -> None:
    if not has_probe_set(ckpt):
        st.info(tr("lab.no_probe_set"))
        return
    st.markdown(tr("lab.probe_intro", n=PROBE_N))
    probe = _probe(subj)
    cols = st.columns(len(PROBE_QUERIES))
    for col, q in zip(cols, PROBE_QUERIES):
        with col:
            arr = probe.scores[q]
            ranked = sorted(
                ((float(arr[l_, h]), l_, h) for l_ in range(arr.shape[0]) for h in range(arr.shape[1])), reverse=True
            )
            st.markdown(f"**{tr(f'lab.query.{q.kind.value}_{q.query}')}**")
            labels = [f"L{l_} H{h}" for _, l_, h in ranked]
            fig = figures.bar_chart(
                labels, [s for s, _, _ in ranked], tr, "", value_title=tr("lab.probe_axis"), highlight=0
            )
            plot(fig, f"lab_probe_{q.kind.value}_{q.query}")
            score, layer, head = ranked[0]
            st.button(
                tr("lab.open_explorer", head=f"L{layer} H{head}"),
                key=f"lab_open_{q.kind.value}_{q.query}",
                on_click=_open_in_explorer,
                args=(q.kind.value, layer, head),
            )


def ablation_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("lab.ablation_intro"))
    cfg = ckpt.config
    all_heads = [
        (kind.value, layer, head)
        for kind in KINDS
        for layer in range(cfg.n_encoder_layers if kind.in_encoder else cfg.n_decoder_layers)
        for head in range(cfg.n_heads)
    ]
    st.session_state.setdefault("lab_off", [])
    st.session_state["lab_off"] = [h for h in st.session_state["lab_off"] if tuple(h) in set(all_heads)]
    off = st.multiselect(
        tr("lab.switch_off"), all_heads, key="lab_off", format_func=lambda h: head_label(h[0], h[1], h[2], tr)
    )
    options = CallOptions(head_mask=HeadMask.without(cfg, off)) if off else CallOptions()
    ablated = cache.analysis(subj.path, a.text, subj.beam, options)
    c1, c2 = st.columns(2)
    c1.caption(tr("lab.translation_all"))
    c1.text(a.translation)
    c2.caption(tr("lab.translation_off", n=len(off)))
    with c2.container(key="lab_ablated_translation"):
        st.text(ablated.translation)
    if not has_probe_set(ckpt):
        st.info(tr("lab.no_probe_set"))
        return
    ps = the_probe_set(subj)
    from transformer.inspection.headlab import measure

    base = cache.memo("measure", subj.path, (PROBE_N, None), lambda c: measure(c.model, ps))
    now = cache.memo("measure", subj.path, (PROBE_N, options), lambda c: measure(c.model, ps, options))
    m1, m2 = st.columns(2)
    with m1.container(key="lab_accuracy"):
        st.metric(tr("lab.accuracy", n=ps.n), f"{now.accuracy:.1%}", f"{now.accuracy - base.accuracy:+.1%}")
    with m2.container(key="lab_loss"):
        st.metric(tr("lab.loss"), f"{now.loss:.4f}", f"{now.loss - base.loss:+.4f}", delta_color="inverse")
    st.subheader(tr("lab.ranking_title"))
    base, effects = cache.memo("rank_heads", subj.path, PROBE_N, lambda c: rank_heads(c.model, ps))
    probe = _probe(subj)
    score = {}
    for q in PROBE_QUERIES:
        if q.query == "pronoun":
            arr = probe.scores[q]
            score.update(
                {(q.kind, l_, h): float(arr[l_, h]) for l_ in range(arr.shape[0]) for h in range(arr.shape[1])}
            )
    rows, bystanders = [], []
    for e in effects:
        s = score.get((e.kind, e.layer, e.head))
        rows.append(
            {
                tr("lab.col_head"): head_label(e.kind, e.layer, e.head, tr),
                tr("lab.col_accuracy_drop"): round(e.accuracy_drop, 4),
                tr("lab.col_loss_rise"): round(e.loss_rise, 4),
                tr("lab.col_probe"): None if s is None else round(s, 3),
            }
        )
        if s is not None and s >= 0.8 and abs(e.accuracy_drop) < 0.005:
            bystanders.append(head_label(e.kind, e.layer, e.head, tr))
    table(rows, "lab_ranking")
    with st.container(key="lab_bystanders"):
        if bystanders:
            st.warning(tr("lab.bystanders", heads=", ".join(bystanders)))
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
            plot(fig, f"lab_{name}")
    check("rollout_rows", tr("lab.rollout_check"), float(np.abs(roll.sum(-1) - 1).max()), 1e-9, tr)
    st.caption(tr("lab.rollout_caveat"))


@torch.inference_mode()
def _snapshot_map(ckpt: Checkpoint, src: list[int], dec: list[int], kind: AttentionKind, layer: int, head: int):
    """One head of a snapshot, teacher-forced on the final model's translation (the same rows at every step)."""
    att = ckpt.model(torch.tensor([src]), torch.tensor([dec]), return_attention=True).attention
    return att.of(kind)[layer][0, head].numpy()


def training_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    from pathlib import Path

    run = Path(subj.path)
    snaps = snapshots(run)
    if not snaps:
        st.info(tr("lab.no_snapshots"))
        return
    st.markdown(tr("lab.training_intro", n=len(snaps)))
    steps = [step for step, _ in snaps] + [None]
    choice = head_picker(PICK, ckpt, tr, kinds=KINDS, default_kind=AttentionKind.CROSS)
    ensure_choice("lab_snapshot", steps, steps[0])
    step = st.select_slider(
        tr("lab.snapshot"), steps, key="lab_snapshot", format_func=lambda s: tr("lab.final") if s is None else str(s)
    )
    src, dec = model_inputs(ckpt, a)
    if step is None:
        show_view(HeadView(choice.kind, choice.layer, choice.head), _ctx(subj, ckpt, a), tr, "lab_snapshot_map")
    else:
        path = str(dict(snaps)[step])
        key = (a.text, choice.kind, choice.layer, choice.head)
        grid = cache.memo(
            "snapshot_map", path, key, lambda c: _snapshot_map(c, src, dec, choice.kind, choice.layer, choice.head)
        )
        rows, cols = a.labels(choice.kind)
        title = tr("lab.snapshot_title", step=step, head=head_label(choice.kind, choice.layer, choice.head, tr))
        plot(figures.attention_heatmap(grid, rows, cols, tr, title), "lab_snapshot_map")
    if has_probe_set(ckpt) and choice.kind is not AttentionKind.DECODER:
        q = next(q for q in PROBE_QUERIES if q.kind is choice.kind and q.query == "pronoun")
        examples = cache.memo(
            "probe_examples", subj.path, PROBE_N, lambda c: generate_test(CorpusSpec.from_card(c.card))[:PROBE_N]
        )
        xs, ys = [], []
        for s, p in snaps:
            probe = cache.memo("probe", str(p), PROBE_N, lambda c: coreference_probe(c.model, c.tokenizer, examples))
            xs.append(s)
            ys.append(float(probe.scores[q][choice.layer, choice.head]))
        final = _probe(subj)
        xs.append(int(ckpt.card.get("step", xs[-1] + 1)) if isinstance(ckpt.card.get("step"), int) else xs[-1] + 1)
        ys.append(float(final.scores[q][choice.layer, choice.head]))
        label = head_label(choice.kind, choice.layer, choice.head, tr)
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
}


def page() -> None:
    tr, subj, ckpt = open_page("lab.title")
    st.markdown(tr("lab.intro"))
    a = sentence_analysis(subj, ckpt, tr)
    lazy_tabs("lab_tab", TABS, "lab.tab", tr, RENDER, subj, ckpt, a, tr)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
