"""The few widgets every page shares: a chart, a CSV button, the layer/head picker, a printed check."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import Checkpoint

from . import cache, figures, svg
from .export import table_csv
from .i18n import Translator
from .probe import default_head
from .views import View, ViewContext, figure_of

_heatmap = st.components.v2.component(
    "attention_heatmap",
    js=Path(__file__).with_name("heatmap.js").read_text(encoding="utf-8"),
    css=Path(__file__).with_name("heatmap.css").read_text(encoding="utf-8"),
    isolate_styles=False,  # in the page's DOM, where the browser tests and the benchmark look
)


def plot(fig, key: str, tr: Translator | None = None, *, file_name: str | None = None, **kw) -> None:
    """A chart: an attention heatmap on the app's canvas chart, which redraws in place when its data
    changes (hover, drag to zoom, PNG from the camera icon); any other figure in plotly, with the
    app's toolbar (PNG download from the camera icon). With a translator, an SVG (vector) download of
    the same figure below it (key f"{key}_svg"; file_name, default the key); only a caller that lays
    out its own download buttons (norms_and_alignment.show) leaves it out."""
    if isinstance(fig, figures.Heatmap):
        assert not kw, "the canvas heatmap takes no plotly options"
        _heatmap(key=key, data=fig.to_dict())
    else:
        st.plotly_chart(fig, width="stretch", config=figures.PLOT_CONFIG, key=key, theme=None, **kw)
    if tr is not None:
        svg_button(functools.partial(svg.figure_svg, fig), file_name or key, f"{key}_svg", tr)


def shared_figure(view: View, ctx: ViewContext, tr: Translator):
    """A view's figure of the page's sentence, built once for every session (the server's results cache): a
    plotly figure of every head costs a run ~10 ms, which a class of 30 following one view paid 30 times."""
    return cache.memo(figure_of, view, ctx.analysis, ctx.checkpoint, tr.lang)


def csv_button(text: str | Callable[[], str], file_name: str, key: str, tr: Translator) -> None:
    """The one CSV download button: text written by export.py, saved as f"{file_name}.csv"; a callable is
    only called when the button is clicked (a view's matrix: not written on every run)."""
    st.download_button(
        tr("common.csv"),
        text,
        file_name=f"{file_name}.csv",
        mime="text/csv",
        key=key,
        help=tr("common.csv_help"),
        on_click="ignore",
    )


def show_view(view: View, ctx: ViewContext, tr: Translator, key: str, csv: bool = True) -> None:
    """A view's figure with its SVG download, and a button that downloads the same matrix as CSV."""
    plot(view.figure(ctx, tr), key, tr, file_name=view.file_name())
    if csv:  # written when clicked: three heads' CSVs cost a new sentence ~7 ms of the server's CPU
        csv_button(functools.partial(view.csv, ctx), view.file_name(), f"{key}_csv", tr)


def svg_button(text: str | Callable[[], str], file_name: str, key: str, tr: Translator) -> None:
    """The SVG (vector) download of a figure, written by svg.py when clicked (PNG: the figure's camera icon)."""
    st.download_button(
        tr("hlb.svg"), text, file_name=f"{file_name}.svg", mime="image/svg+xml", key=key, on_click="ignore"
    )


def ensure_choice(key: str, options: Sequence, default) -> None:
    """Keep a widget's stored value among its options (e.g. after switching to a smaller model)."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default


def set_head(key: str, head: HeadId, checkpoint: str) -> None:
    """Open the picker `key` on a head of the checkpoint at this path (set before the picker is drawn)."""
    ss = st.session_state
    ss[f"{key}_kind"], ss[f"{key}_layer"], ss[f"{key}_head"] = head
    ss[f"{key}_origin"] = (checkpoint, head.kind)  # the picker keeps this head instead of its default


def head_picker(
    key: str,
    ckpt: Checkpoint,
    tr: Translator,
    kinds: Sequence[AttentionKind] | None = None,
    default_kind: AttentionKind | None = None,
    labels: tuple[str, str] | None = None,
) -> HeadId:
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
    L, H = ckpt.config.n_layers(kind), ckpt.config.n_heads
    default = default_head(ckpt, kind)
    # a new checkpoint or kind opens on its own best head
    origin = (str(ckpt.path), kind)
    if ss.get(f"{key}_origin") != origin:
        ss[f"{key}_origin"] = origin
        ss[f"{key}_layer"], ss[f"{key}_head"] = default.layer, default.head
    ensure_choice(f"{key}_layer", range(L), default.layer)
    ensure_choice(f"{key}_head", range(H), default.head)
    layer_label, head_label = labels or (tr("common.layer"), tr("common.head"))
    layer = cols[0].selectbox(layer_label, range(L), key=f"{key}_layer")
    head = cols[1].selectbox(head_label, range(H), key=f"{key}_head")
    return HeadId(kind, int(layer), int(head))


def table(rows: list[dict], key: str, tr: Translator, file_name: str | None = None) -> None:
    """A sortable table in a container found by key, and its CSV button (the tables' own toolbar export,
    which writes formulas as they are, is off: client.disableDataExport)."""
    with st.container(key=key):
        st.dataframe(rows, hide_index=True)
    csv_button(table_csv(rows), file_name or key, f"{key}_csv", tr)


def check(key: str, label: str, value: float, limit: float | None, tr: Translator, above: bool = False) -> bool:
    """A printed check: "label: |Δ| = value" with ✓/✗ against limit (value <= limit, or > limit when above)."""
    ok = None if limit is None else (value > limit if above else value <= limit)
    mark = "" if ok is None else (" ✓" if ok else " ✗")
    with st.container(key=f"check_{key}"):
        st.markdown(f"{label}: `{value:.3g}`{mark}")
    return bool(ok)


def open_tab(key: str, name: str) -> None:
    """Open the tab `name` of the tabs `key` when they are next drawn (e.g. from a link or another page)."""
    st.session_state[key] = name


def _tab_clicked(key: str, names: tuple[str, ...], labels: tuple[str, ...]) -> None:
    label = st.session_state.get(f"{key}_label")
    if label in labels:
        st.session_state[key] = names[labels.index(label)]


def lazy_tabs(key: str, names: tuple[str, ...], prefix: str, tr: Translator, render: dict, *args) -> None:
    """Tabs of which only the open one runs render[name](*args) and sends its figures.

    Session state keeps the open tab's id under `key` (one of names); the tabs widget itself, which stores
    its translated label, lives under f"{key}_label" and follows the id (and the language) on every run.
    """
    ss = st.session_state
    ensure_choice(key, names, names[0])
    labels = tuple(tr(f"{prefix}.{name}") for name in names)
    ss[f"{key}_label"] = labels[names.index(ss[key])]
    tabs = st.tabs(list(labels), key=f"{key}_label", on_change=_tab_clicked, args=(key, tuple(names), labels))
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
