"""Every figure of the app: arrays in, a plotly Figure out, or for attention maps a Heatmap (no Streamlit here).

Heatmap axes are categories whose labels are the tokens; a repeated token gets
zero-width spaces appended, so "the" twice stays two columns. This keeps the JSON
small (no per-cell hover data): a 128×128 map is ~120 kB and serialises in ~1 ms.
Every label goes through :func:`esc`, since plotly reads <b>, </s> ... as markup.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go

COLORSCALE = "Blues"
DIVERGING = "RdBu"
SEQUENTIAL_SIGNED = "Viridis"
MASKED_COLOR = "#d9d9d9"
PLOT_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2, "filename": "attention"},
}
Tr = Callable[..., str]


def esc(text: str) -> str:
    """Plotly reads <b>, <s>, <a> ... in labels as markup: escape tokens so "</s>" shows as text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Escaped labels, made distinct with zero-width spaces so repeated tokens stay separate categories."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        s = esc(label) or "·"
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.append(s + "\u200b" * n)
    return out


def _text_width(labels: Sequence[str], px_per_char: float = 6.6) -> int:
    """Pixels that the longest label needs at font size 11."""
    return int(px_per_char * max((len(s.rstrip("\u200b")) for s in labels), default=1)) + 6


def _title(title: str, size: int = 13) -> dict:
    return dict(text=esc(title), font=dict(size=size), x=0, xanchor="left", y=1, yanchor="top", pad=dict(t=6))


@dataclass(frozen=True, eq=False)
class Heatmap:
    """One attention heatmap: plotly's own figure dict, a single heatmap trace and its layout.

    The app draws it with its canvas chart (widgets.plot, heatmap.js), which keeps its place on
    the page and redraws in place when a new sentence comes; Streamlit remounts a plotly chart
    whose data changed (three per sentence on the heads tab). to_plotly() is the same figure in
    plotly (the tests read it); to_dict() is what the browser receives, z as plotly's typed array.
    """

    trace: dict
    layout: dict

    def to_plotly(self) -> go.Figure:
        return go.Figure(data=[go.Heatmap(**self.trace)], layout=self.layout)

    def to_dict(self) -> dict:
        z = np.ascontiguousarray(self.trace["z"], dtype="<f4")  # NaN and -inf survive, as bytes
        bdata = {"dtype": "f4", "bdata": base64.b64encode(z.tobytes()).decode(), "shape": f"{z.shape[0]},{z.shape[1]}"}
        trace = {**self.trace, "type": "heatmap", "z": bdata, "colorscale": _scale(self.trace["colorscale"])}
        if "text" in trace:
            trace["text"] = np.asarray(trace["text"]).tolist()
        config = {"filename": PLOT_CONFIG["toImageButtonOptions"]["filename"]}
        return {"data": [trace], "layout": self.layout, "config": config}


@functools.lru_cache(maxsize=16)
def _named_scale(name: str) -> tuple:
    return tuple((float(p), c) for p, c in plotly.colors.get_colorscale(name))


def _scale(name) -> list:
    """A colorscale as [position, colour] pairs (what the canvas chart reads)."""
    return [list(stop) for stop in _named_scale(name)] if isinstance(name, str) else name


def attention_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    tr: Tr,
    title: str = "",
    *,
    row_title: str | None = None,
    col_title: str | None = None,
    value_title: str | None = None,
    diverging: bool = False,
    zrange: tuple[float, float] | None = None,
    colorscale: str | None = None,
    height: int | None = None,
    show_values: bool = False,
) -> Heatmap:
    """A (T_q, T_k) matrix: rows are queries, columns are keys (first query on top).

    Cells that are -inf (masked scores) are drawn grey and labelled −∞; NaN cells are left empty.
    """
    values = np.asarray(values, dtype=np.float32)
    Tq, Tk = values.shape
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    neg_inf = np.isneginf(values)
    z = np.where(np.isfinite(values), values, np.nan).astype(np.float32)
    finite = z[np.isfinite(z)]
    if zrange is None:
        if diverging:
            m = float(np.abs(finite).max()) if finite.size else 1.0
            zrange = (-(m or 1.0), m or 1.0)
        else:
            zrange = (0.0, 1.0)
    row_title = row_title or tr("fig.query")
    col_title = col_title or tr("fig.key")
    value_title = value_title or (tr("fig.delta_weight") if diverging else tr("fig.weight"))
    trace = dict(
        z=z,
        x=cols,
        y=rows,
        colorscale=colorscale or (DIVERGING if diverging else COLORSCALE),
        reversescale=diverging,
        zmin=zrange[0],
        zmax=zrange[1],
        hovertemplate=f"{row_title}: %{{y}}<br>{col_title}: %{{x}}<br>{value_title}: %{{z:.4g}}<extra></extra>",
        meta=dict(  # what the canvas chart writes: its hover, its buttons' titles
            hover=[esc(row_title), esc(col_title), esc(value_title)], buttons=[tr("fig.save_png"), tr("fig.reset_zoom")]
        ),
        colorbar=dict(thickness=10, len=0.8),
        xgap=0,
        ygap=0,
    )
    if show_values or neg_inf.any():
        texts = np.where(neg_inf, "−∞", np.char.mod("%.2f", np.nan_to_num(values, nan=0.0, neginf=0.0)))
        if not show_values:
            texts = np.where(neg_inf, "−∞", "")
        trace.update(text=texts, texttemplate="%{text}", textfont=dict(size=10))
    top = 30 + _text_width(cols)
    left = 12 + _text_width(rows)
    layout = dict(
        title=_title(title),
        height=height or top + 12 + max(180, min(760, 21 * Tq)),
        margin=dict(l=left, r=70, t=top, b=8, autoexpand=False),
        font=dict(size=11),
        plot_bgcolor=MASKED_COLOR if neg_inf.any() else "white",
        xaxis=dict(type="category", side="top", tickangle=-90, showgrid=False, zeroline=False, automargin=False),
        yaxis=dict(type="category", autorange="reversed", showgrid=False, zeroline=False, automargin=False),
    )
    return Heatmap(trace, layout)


def _tile_axis(labels: list[str], stride: int, **extra) -> dict:
    """An axis with one tick in the middle of each tile (tiles of stride - 1 cells and a gap)."""
    ticks = [i * stride + (stride - 2) / 2 for i in range(len(labels))]
    return dict(tickmode="array", tickvals=ticks, ticktext=labels, showgrid=False, zeroline=False, **extra)


OVERVIEW_WIDTH_PX = 700  # the width a page gives a figure, for sizing the overview's tiles
OVERVIEW_MAX_HEIGHT = 1100


def heads_overview(
    weights: np.ndarray, tr: Tr, title: str = "", *, highlight: tuple[int, int] | None = None
) -> go.Figure:
    """All heads of all layers (L, H, T_q, T_k) as one tiled heatmap: a row of tiles per layer.

    One heatmap trace (not L×H subplots) keeps it fast to build and to draw; an open ring
    marks each tile's centre, for picking a head with a click. Weights go out as one byte
    per cell (0..254; 255 is the white gap between tiles).
    """
    L, H, Tq, Tk = weights.shape
    gap = 1
    z = np.full((L * (Tq + gap) - gap, H * (Tk + gap) - gap), 255, dtype=np.uint8)
    for layer in range(L):
        for head in range(H):
            r, c = layer * (Tq + gap), head * (Tk + gap)
            z[r : r + Tq, c : c + Tk] = np.round(np.clip(weights[layer, head], 0, 1) * 254)
    blues = plotly.colors.get_colorscale(COLORSCALE)
    scale = [[stop * 254 / 255, color] for stop, color in blues] + [[254.5 / 255, "white"], [1.0, "white"]]
    heat = go.Heatmap(z=z, colorscale=scale, zmin=0, zmax=255, hoverinfo="skip", showscale=False)
    shapes = []
    if highlight is not None:
        layer, head = highlight
        r, c = layer * (Tq + gap), head * (Tk + gap)
        shapes.append(
            dict(
                type="rect",
                x0=c - 0.5,
                x1=c + Tk - 0.5,
                y0=r - 0.5,
                y1=r + Tq - 0.5,
                line=dict(color="crimson", width=3),
            )
        )
    centres = [(layer, head) for layer in range(L) for head in range(H)]
    # square cells fill the width: the height follows the tiles' aspect, so that 6 layers x 8 heads
    # (opus-mt, 48 tiles per kind) keep tiles of ~80 px at the page's ~700 px rather than a squeezed strip
    rows, cols = z.shape
    tile_px = OVERVIEW_WIDTH_PX * Tk / cols
    height = int(min(OVERVIEW_MAX_HEIGHT, max(220, (60 if title else 30) + 20 + OVERVIEW_WIDTH_PX * rows / cols)))
    dots = go.Scatter(
        x=[head * (Tk + gap) + (Tk - 1) / 2 for _, head in centres],
        y=[layer * (Tq + gap) + (Tq - 1) / 2 for layer, _ in centres],
        customdata=[[layer, head] for layer, head in centres],
        mode="markers",
        # open: cells show through; no larger than a third of a tile, so many small tiles stay readable
        marker=dict(size=max(6, min(18, tile_px / 3)), symbol="circle-open", color="crimson", line=dict(width=2)),
        hovertemplate=esc(tr("fig.click_to_enlarge", layer="%{customdata[0]}", head="%{customdata[1]}"))
        + "<extra></extra>",
        showlegend=False,
    )
    layout = dict(
        title=dict(text=esc(title), font=dict(size=14)),
        shapes=shapes,
        height=height,
        margin=dict(l=70, r=10, t=60 if title else 30, b=10, autoexpand=False),
        xaxis=_tile_axis(
            [esc(tr("fig.head_n", head=h)) for h in range(H)],
            Tk + gap,
            side="top",
            tickfont=dict(size=12 if H <= 8 else 9),
        ),
        yaxis=_tile_axis(
            [esc(tr("fig.layer_n", layer=i)) for i in range(L)], Tq + gap, autorange="reversed", scaleanchor="x"
        ),
        plot_bgcolor="white",
    )
    return go.Figure(data=[heat, dots], layout=layout)


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    tr: Tr,
    title: str = "",
    *,
    value_title: str = "",
    value_range: tuple[float, float] | None = (0.0, 1.0),
    highlight: int | None = None,
) -> go.Figure:
    """Horizontal bars, first label on top."""
    labels = unique_labels(labels)
    n = len(labels)
    colors = ["crimson" if i == highlight else "#4c78a8" for i in range(n)]
    trace = go.Bar(
        x=list(values),
        y=labels,
        orientation="h",
        marker=dict(color=colors),
        hovertemplate="%{y}: %{x:.4g}<extra></extra>",
    )
    layout = dict(
        title=_title(title),
        height=110 + 26 * n,
        margin=dict(l=16 + _text_width(labels), r=12, t=40, b=44, autoexpand=False),
        font=dict(size=11),
        xaxis=dict(range=list(value_range) if value_range else None, title=dict(text=esc(value_title))),
        yaxis=dict(type="category", autorange="reversed", automargin=False),
    )
    return go.Figure(data=[trace], layout=layout)


def line_chart(
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    title: str = "",
    *,
    x_title: str = "",
    y_title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    height: int = 320,
    markers: bool = False,
    y_range: tuple[float, float] | None = None,
) -> go.Figure:
    """Named (x, y) series as lines."""
    traces = [
        go.Scatter(x=list(x), y=list(y), name=esc(name), mode="lines+markers" if markers else "lines")
        for name, (x, y) in series.items()
    ]
    layout = dict(
        title=_title(title),
        height=height,
        margin=dict(l=60, r=10, t=40, b=50),
        font=dict(size=11),
        xaxis=dict(title=dict(text=esc(x_title)), type="log" if log_x else "linear"),
        yaxis=dict(title=dict(text=esc(y_title)), type="log" if log_y else "linear", range=y_range),
        legend=dict(orientation="h", y=-0.25),
    )
    return go.Figure(data=traces, layout=layout)
