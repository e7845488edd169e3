"""The head lab's research tabs: head roles (Voita et al. 2019), head importance and pruning curves (Michel et
al. 2019), and the logit lens of the decoder layers.

The long computations (roles, importance, pruning curves; the logit lens, which decodes) are plain functions
of transformer/inspection that report progress(fraction); they run in the background lane (pages/_ui/background.py:
off the page threads, holding no work slot), once for every session (the server's result cache, keyed by what
they read), while the page shows their progress and polls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import streamlit as st

from transformer.analysis import Analysis
from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint
from transformer.corpus import CorpusSpec, generate_test
from transformer.inspection.card import has_probe_set
from transformer.inspection.headlab import ProbeSet, probe_set
from transformer.inspection.heldout import heldout_pairs
from transformer.inspection.importance import CURVE_KINDS, head_importance, pruning_curve
from transformer.inspection.logit_lens import logit_lens
from transformer.inspection.roles import (
    POSITIONAL_SHARE,
    RARE_RATIO,
    Role,
    measure_all_roles,
    piece_frequency,
    role_rows,
    strongest,
)
from transformer.inspection.syntax import INSTALL, SYNTACTIC_MARGIN, Parser

from . import background, cache
from .i18n import Translator
from .probe import no_probe_set, probe_marks
from .research_views import (
    ImportanceView,
    LensStepView,
    LensView,
    PruningView,
    RoleGridView,
    RolesResult,
    curve_name,
    ordered_curves,
    role_choices,
)
from .session import Subject
from .widgets import ensure_choice, show_view, table

TABS = ("hlab.roles", "hlab.importance", "hlab.lens")
ROLE_SENTENCES = 200  # held-out sentences the roles are measured on
PRUNE_SENTENCES = 100  # held-out sentences of the importance and of each point of the pruning curves
PRUNE_POINTS = 7  # points per curve (0 pruned, ..., all pruned; half included)
PROBE_N = 300  # coreference sentences of the pronoun accuracy (the ablation tab's)
KINDS = list(AttentionKind)


def in_lane(fn: Callable[..., Any], total: int | None) -> Callable[..., Any]:
    """fn as the background lane calls it, with progress(done, total): fn reports progress(fraction), counted
    here in total steps (sentences, points); total None: fn takes no progress callback (the bar waits).
    Keyed as fn itself (cache.call_key unwraps it)."""

    @functools.wraps(fn)
    def lane(*args: Any, progress: Callable[[int, int], None], **kwargs: Any) -> Any:
        if total is None:
            return fn(*args, **kwargs)

        def fraction(f: float) -> None:
            progress(round(min(max(float(f), 0.0), 1.0) * total), total)

        return fn(*args, progress=fraction, **kwargs)

    return lane


def computed(
    fn: Callable[..., Any], args: tuple, total: int | None, label: str | None, key: str, tr: Translator
) -> Any:
    """fn(*args) once for every session, keyed by what it reads, computed in the background lane (off the page
    thread, holding no work slot): its value, or None with a progress bar under container `key` meanwhile."""
    value, job = background.start(in_lane(fn, total), *args)
    if job is not None:
        background.progress(job, key, tr, label)
    return value


def _heldout(ckpt: Checkpoint, n: int):
    return cache.memo(heldout_pairs, ckpt.card, n)


def _probe_set(ckpt: Checkpoint) -> ProbeSet:
    return probe_set(ckpt.tokenizer, generate_test(CorpusSpec.from_card(ckpt.card)), PROBE_N)


def _probe(subj: Subject, ckpt: Checkpoint) -> ProbeSet | None:
    """The held-out coreference sentences the ablation tab measures pronoun accuracy on (ours only)."""
    if not has_probe_set(ckpt.card):
        return None
    return cache.memo(_probe_set, cache.checkpoint(subj.path))


def coreference_heads(ckpt: Checkpoint) -> dict[HeadId, float]:
    """The probe's marked heads (pronoun row finds the antecedent in >= 0.8 of sentences), every kind."""
    out: dict[HeadId, float] = {}
    for kind in KINDS:
        out.update(probe_marks(ckpt, kind))
    return out


def roles_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    held = _heldout(ckpt, ROLE_SENTENCES)
    freq = cache.memo(piece_frequency, ckpt.tokenizer, ckpt.card)
    st.markdown(
        tr("hlab.roles_intro", share=f"{POSITIONAL_SHARE:.0%}", ratio=f"{RARE_RATIO:g}", n=len(held.pairs))
        + " "
        + tr(f"hlab.heldout_{held.origin}")
        + " "
        + tr(f"hlab.frequency_{freq.origin}")
    )
    syntactic = Parser.available()
    if syntactic:
        st.caption(tr("hlab.syntactic_intro", margin=f"{SYNTACTIC_MARGIN:.0%}"))
    else:
        st.caption(tr("hlab.syntactic_missing", install=INSTALL))
    roles = computed(
        measure_all_roles,
        (ckpt.model, ckpt.tokenizer, held.pairs, freq),
        len(held.pairs),
        tr("hlab.running_roles", n=len(held.pairs)),
        "hlab_roles_progress",
        tr,
    )
    if roles is None:
        return
    coref = coreference_heads(ckpt)
    counts = {role: sum(roles.count(role, coref).values()) for role in Role}
    with st.container(key="hlab_roles_found"):
        st.markdown(tr("hlab.roles_found", **{r.value: n for r, n in counts.items()}, n=roles.n_sentences))
        best = ", ".join(
            f"{tr(f'hlab.role.{role}')} {tr(f'kind.short.{h.kind.value}')} L{h.layer} H{h.head} ({share:.2f})"
            for role, (h, share) in strongest(roles).items()
        )
        st.markdown(tr("hlab.roles_best", best=best))
        if syntactic:
            st.markdown(
                tr(
                    "hlab.syntactic_found",
                    parsed=roles.parsed,
                    n=roles.n_sentences,
                    arcs=", ".join(f"{tr(f'hlab.role.{r}')} {n}" for r, n in roles.arcs.items()),
                    baselines=", ".join(f"{tr(f'hlab.role.{r}')} {b:.2f}" for r, b in roles.baseline.items()),
                )
            )
    ctx = RolesResult(roles, coref)
    c1, c2 = st.columns(2)
    kind = c1.selectbox(tr("common.attention"), KINDS, format_func=lambda k: tr(f"kind.{k.value}"), key="hlab_kind")
    choices = role_choices(roles, kind)
    ensure_choice("hlab_role", choices, choices[0])
    role = c2.selectbox(tr("hlab.role_pick"), choices, format_func=lambda r: tr(f"hlab.role.{r}"), key="hlab_role")
    if role == "rare":
        st.caption(tr("hlab.rare_chance", chance=f"{roles.chance[kind]:.3f}", ratio=f"{RARE_RATIO:g}"))
    elif role in roles.baseline:
        st.caption(tr("hlab.syntactic_baseline", baseline=f"{roles.baseline[role]:.2f}", arcs=roles.arcs[role]))
    show_view(RoleGridView(kind, role), ctx, tr, "hlab_roles_grid")
    st.caption(tr("hlab.badges"))
    rows = [
        {
            tr("lab.col_head"): f"{tr(f'kind.short.{head.kind.value}')} L{head.layer} H{head.head}",
            **{tr(f"hlab.role.{r}"): None if v[r] is None else round(v[r], 3) for r in ("previous", "next", "rare")},
            tr("hlab.role.coreference"): None if v["coreference"] is None else round(v["coreference"], 3),
            tr("hlab.role.syntactic"): None
            if v["syntactic"] is None
            else tr(
                "hlab.syntactic_cell",
                role=tr(f"hlab.role.{v['syntactic'][0]}"),
                accuracy=f"{v['syntactic'][1]:.2f}",
                baseline=f"{v['syntactic'][2]:.2f}",
            ),
            tr("hlab.col_badges"): v["badges"],
        }
        for head, v in role_rows(roles, coref)
    ]
    table(rows, "hlab_roles_table", tr, "head_roles")


def importance_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    held = _heldout(ckpt, PRUNE_SENTENCES)
    st.markdown(tr("hlab.importance_intro", n=len(held.pairs)) + " " + tr(f"hlab.heldout_{held.origin}"))
    importance = computed(
        head_importance,
        (ckpt.model, ckpt.tokenizer, held.pairs),
        len(held.pairs),
        tr("hlab.running_importance", n=len(held.pairs)),
        "hlab_importance_progress",
        tr,
    )
    if importance is None:
        return
    cols = st.columns(len(KINDS))
    for col, kind in zip(cols, KINDS):
        with col:
            show_view(ImportanceView(kind), importance, tr, f"hlab_importance_{kind.value}")
    probe = _probe(subj, ckpt)
    curves = []
    for kind in CURVE_KINDS:  # queued together; the lane computes them one after another
        label = tr("hlab.running_pruning", kind=curve_name(kind, tr))
        args = (ckpt.model, ckpt.tokenizer, held.pairs, importance, kind, probe, PRUNE_POINTS)
        key = f"hlab_pruning_progress_{'all' if kind is None else kind.value}"
        curves.append(computed(pruning_curve, args, PRUNE_POINTS, label, key, tr))
    if any(c is None for c in curves):
        return
    curves = ordered_curves(curves)
    with st.container(key="hlab_finding"):
        st.markdown(finding(curves, tr))
    show_view(PruningView("chrf"), curves, tr, "hlab_pruning_chrf")
    if probe is not None:
        show_view(PruningView("accuracy"), curves, tr, "hlab_pruning_accuracy", csv=False)
    else:
        st.info(no_probe_set(ckpt, tr))
    st.caption(tr("hlab.pruning_caveat"))


def finding(curves, tr: Translator) -> str:
    """The measured statement: what pruning half of each kind's heads costs, and which kind is the most critical."""
    costs = {c.kind: c.half_cost() for c in curves}
    per_kind = {k: v for k, v in costs.items() if k is not None}
    worst = max(per_kind, key=lambda k: per_kind[k][0])
    text = tr(
        "hlab.finding",
        worst=curve_name(worst, tr),
        **{f"{k.value}": f"{v[0]:.1f}" for k, v in per_kind.items()},
        all=f"{costs[None][0]:.1f}",
        base=f"{curves[0].chrf[0]:.1f}",
    )
    if all(v[1] is not None for v in costs.values()):
        text += " " + tr("hlab.finding_accuracy", **{f"{k.value}": f"{100 * v[1]:.1f}" for k, v in per_kind.items()})
    return text


def lens_tab(subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator) -> None:
    st.markdown(tr("hlab.lens_intro"))
    # it decodes the sentence greedily: seconds on a large imported model, so in the lane too
    lens = computed(logit_lens, (ckpt.model, ckpt.tokenizer, a.text), None, None, "hlab_lens_progress", tr)
    if lens is None:
        return
    show_view(LensView(), lens, tr, "hlab_lens")
    pronouns = lens.pronoun_steps()
    with st.container(key="hlab_lens_decided"):
        if pronouns:
            for t in pronouns:
                layer = lens.decided_layer(t)
                rival = lens.rival[t]
                st.markdown(
                    tr(
                        "hlab.lens_decided",
                        piece=lens.steps[t],
                        step=t + 1,
                        layer=layer,
                        p=f"{lens.written_prob[layer, t]:.2f}",
                        last=f"{lens.written_prob[-1, t]:.2f}",
                    )
                    + (
                        " "
                        + tr(
                            "hlab.lens_rival",
                            rival=rival,
                            probs=", ".join(
                                f"L{la} {lens.written_prob[la, t]:.2f}/{lens.rival_prob[la, t]:.2f}"
                                for la in range(lens.n_layers)
                            ),
                        )
                        if rival
                        else ""
                    )
                )
        else:
            st.info(tr("hlab.lens_no_pronoun"))
    steps = list(range(len(lens.steps)))
    origin = (subj.path, a.text)
    if st.session_state.get("hlab_lens_origin") != origin:
        st.session_state["hlab_lens_origin"] = origin
        st.session_state["hlab_lens_step"] = pronouns[0] if pronouns else 0
    ensure_choice("hlab_lens_step", steps, pronouns[0] if pronouns else 0)
    step = st.selectbox(
        tr("hlab.lens_step"), steps, format_func=lambda t: f"{t + 1}: {lens.steps[t]}", key="hlab_lens_step"
    )
    show_view(LensStepView(step), lens, tr, "hlab_lens_step_view")


RENDER = {"hlab.roles": roles_tab, "hlab.importance": importance_tab, "hlab.lens": lens_tab}
