"""The few widgets every page shares: a chart, a CSV button, the layer/head picker, a printed check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint

from . import figures
from .i18n import Translator
from .probe import default_head
from .views import View, ViewContext


def plot(fig, key: str, **kw) -> None:
    """A plotly chart with the app's toolbar (PNG download from the camera icon)."""
    st.plotly_chart(fig, width="stretch", config=figures.PLOT_CONFIG, key=key, theme=None, **kw)


def show_view(view: View, ctx: ViewContext, tr: Translator, key: str, csv: bool = True) -> None:
    """A view's figure, and a button that downloads the same matrix as CSV."""
    plot(view.figure(ctx, tr), key)
    if csv:
        st.download_button(
            tr("common.csv"),
            view.csv(ctx),
            file_name=f"{view.file_name()}.csv",
            mime="text/csv",
            key=f"{key}_csv",
            help=tr("common.csv_help"),
            on_click="ignore",
        )


def n_layers(ckpt: Checkpoint, kind: AttentionKind) -> int:
    cfg = ckpt.config
    return cfg.n_encoder_layers if AttentionKind(kind).in_encoder else cfg.n_decoder_layers


def ensure_choice(key: str, options: Sequence, default) -> None:
    """Keep a widget's stored value among its options (e.g. after switching to a smaller model)."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default


@dataclass(frozen=True)
class HeadChoice:
    kind: AttentionKind
    layer: int
    head: int


def head_picker(
    key: str,
    ckpt: Checkpoint,
    tr: Translator,
    kinds: Sequence[AttentionKind] | None = None,
    default_kind: AttentionKind | None = None,
    labels: tuple[str, str] | None = None,
) -> HeadChoice:
    """The one layer/head picker: an optional kind, then layer and head, in one row.

    Opens on the probe's best head of the kind (per checkpoint); the values live in
    session state under f"{key}_kind", f"{key}_layer", f"{key}_head".
    """
    ss = st.session_state
    cols = st.columns(3 if kinds else 2)
    if kinds:
        kinds = [AttentionKind(k) for k in kinds]
        ensure_choice(f"{key}_kind", kinds, AttentionKind(default_kind or kinds[0]))
        kind = cols[0].selectbox(
            tr("common.attention"), kinds, format_func=lambda k: tr(f"kind.{k.value}"), key=f"{key}_kind"
        )
        cols = cols[1:]
    else:
        kind = AttentionKind(default_kind)
    L, H = n_layers(ckpt, kind), ckpt.config.n_heads
    layer_default, head_default = default_head(ckpt, kind)
    # a new checkpoint or kind opens on its own best head
    origin = (str(ckpt.path), kind)
    if ss.get(f"{key}_origin") != origin:
        ss[f"{key}_origin"] = origin
        ss[f"{key}_layer"], ss[f"{key}_head"] = layer_default, head_default
    ensure_choice(f"{key}_layer", range(L), layer_default)
    ensure_choice(f"{key}_head", range(H), head_default)
    layer_label, head_label = labels or (tr("common.layer"), tr("common.head"))
    layer = cols[0].selectbox(layer_label, range(L), key=f"{key}_layer")
    head = cols[1].selectbox(head_label, range(H), key=f"{key}_head")
    return HeadChoice(kind, int(layer), int(head))


def table(rows: list[dict], key: str) -> None:
    """A table (sortable, downloadable from its toolbar) in a container found by key."""
    with st.container(key=key):
        st.dataframe(rows, hide_index=True)


def check(key: str, label: str, value: float, limit: float | None, tr: Translator, above: bool = False) -> bool:
    """A printed check: "label: |Δ| = value" with ✓/✗ against limit (value <= limit, or > limit when above)."""
    ok = None if limit is None else (value > limit if above else value <= limit)
    mark = "" if ok is None else (" ✓" if ok else " ✗")
    with st.container(key=f"check_{key}"):
        st.markdown(f"{label}: `{value:.3g}`{mark}")
    return bool(ok)


def lazy_tabs(key: str, names: tuple[str, ...], prefix: str, tr: Translator, render: dict, *args) -> None:
    """Tabs of which only the open one runs render[name](*args) and sends its figures."""
    tabs = st.tabs([tr(f"{prefix}.{name}") for name in names], key=key, on_change="rerun")
    for name, tab in zip(names, tabs):
        if tab.open:
            with tab:
                render[name](*args)


def token_picker(key: str, labels: list[str], default: int, origin: tuple, label: str) -> int:
    """A token picker whose default follows the sentence (e.g. "it"), kept while the sentence stays."""
    ss = st.session_state
    if ss.get(f"{key}_origin") != origin:
        ss[f"{key}_origin"] = origin
        ss[key] = default
    ensure_choice(key, range(len(labels)), default)
    return st.selectbox(label, range(len(labels)), format_func=lambda i: f"{i}: {labels[i]}", key=key)


def choice_radio(label: str, options: tuple[str, ...], key: str, prefix: str, tr: Translator) -> str:
    """A horizontal radio whose option labels come from the catalogue (f"{prefix}_{option}")."""
    return st.radio(label, options, key=key, horizontal=True, format_func=lambda o: tr(f"{prefix}_{o}"))
