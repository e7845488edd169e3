"""Every figure of the app: pure functions, arrays in, plotly Figure out.

Axes are numeric positions with token tick labels, so repeated tokens never
merge into one category; hover text carries the query, the key and the weight.
"""

from __future__ import annotations

import numpy as np
import plotly.colors
import plotly.graph_objects as go

COLORSCALE = "Blues"
DIVERGING = "RdBu"
PLOT_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2, "filename": "attention"},
}


def esc(text: str) -> str:
    """Plotly reads <b>, <s>, <a> ... in labels as markup: escape tokens so "</s>" shows as text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _esc_all(labels: list[str]) -> list[str]:
    return [esc(s) for s in labels]


def _text_width(labels: list[str], px_per_char: float = 6.6) -> int:
    """Pixels that the longest label needs at font size 11."""
    return int(px_per_char * max((len(s) for s in labels), default=1)) + 6


def attention_heatmap(
    weights: np.ndarray,
    row_labels: list[str],
    col_labels: list[str],
    title: str = "",
    *,
    row_title: str = "query",
    col_title: str = "key",
    diverging: bool = False,
    height: int | None = None,
) -> go.Figure:
    """One head's (T_q, T_k) matrix: rows are queries, columns are keys."""
    weights = np.asarray(weights, dtype=np.float32)
    Tq, Tk = weights.shape
    row_labels, col_labels, title = _esc_all(row_labels), _esc_all(col_labels), esc(title)
    custom = np.empty((Tq, Tk, 2), dtype=object)
    custom[:, :, 0] = np.array(row_labels, dtype=object)[:, None]
    custom[:, :, 1] = np.array(col_labels, dtype=object)[None, :]
    zmax = float(np.abs(weights).max()) if diverging else 1.0
    zmax = zmax or 1.0
    trace = go.Heatmap(
        z=weights,
        x=np.arange(Tk),
        y=np.arange(Tq),
        customdata=custom,
        colorscale=DIVERGING if diverging else COLORSCALE,
        reversescale=diverging,
        zmin=-zmax if diverging else 0.0,
        zmax=zmax,
        hovertemplate=f"{row_title}: %{{customdata[0]}}<br>{col_title}: %{{customdata[1]}}<br>"
        + ("Δ weight" if diverging else "weight")
        + ": %{z:.3f}<extra></extra>",
        colorbar=dict(thickness=10, len=0.8),
    )
    # explicit margins sized to the labels (automargin misplaces the plot inside Streamlit's layout)
    top = 30 + _text_width(col_labels)
    left = 12 + _text_width(row_labels)
    layout = dict(
        title=dict(text=title, font=dict(size=13), x=0, xanchor="left", y=1, yanchor="top", pad=dict(t=6)),
        height=height or top + 12 + max(180, min(760, 21 * Tq)),
        margin=dict(l=left, r=70, t=top, b=8, autoexpand=False),
        font=dict(size=11),
        xaxis=dict(
            tickmode="array",
            tickvals=list(range(Tk)),
            ticktext=col_labels,
            side="top",
            tickangle=-90,
            showgrid=False,
            zeroline=False,
            automargin=False,
        ),
        yaxis=dict(
            tickmode="array",
            tickvals=list(range(Tq)),
            ticktext=row_labels,
            autorange="reversed",
            showgrid=False,
            zeroline=False,
            automargin=False,
        ),
    )
    # one constructor call: update_layout afterwards costs ~5x more
    return go.Figure(data=[trace], layout=layout)


def heads_overview(
    weights: np.ndarray, title: str = "", *, highlight: tuple[int, int] | None = None, quantize: bool | None = None
) -> go.Figure:
    """All heads of all layers (L, H, T_q, T_k) as one tiled heatmap: a row of tiles per layer.

    One heatmap trace (not L×H subplots) keeps it fast to build and to draw; a dot
    marks each tile's centre, for picking a head with a click. Large maps are
    sent as 8-bit weights (÷254) to keep the payload small.
    """
    L, H, Tq, Tk = weights.shape
    gap = 1
    z = np.full((L * (Tq + gap) - gap, H * (Tk + gap) - gap), np.nan, dtype=np.float32)
    for layer in range(L):
        for head in range(H):
            r, c = layer * (Tq + gap), head * (Tk + gap)
            z[r : r + Tq, c : c + Tk] = weights[layer, head]
    if quantize is None:
        quantize = z.size > 40_000
    if quantize:
        # one byte per cell: weights as 0..254, the gaps as 255 drawn white
        zq = np.where(np.isnan(z), 255, np.round(z * 254)).astype(np.uint8)
        blues = plotly.colors.get_colorscale(COLORSCALE)
        scale = [[stop * 254 / 255, color] for stop, color in blues] + [[254.5 / 255, "white"], [1.0, "white"]]
        trace = go.Heatmap(z=zq, colorscale=scale, zmin=0, zmax=255, hoverinfo="skip", showscale=False)
    else:
        trace = go.Heatmap(
            z=z,
            colorscale=COLORSCALE,
            zmin=0,
            zmax=1,
            showscale=False,
            hovertemplate="weight %{z:.3f}<extra></extra>",
        )
    title = esc(title)
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
    layout = dict(
        title=dict(text=title, font=dict(size=14)),
        shapes=shapes,
        height=min(1000, max(220, 60 + L * 170)),
        margin=dict(l=70, r=10, t=60 if title else 30, b=10, autoexpand=False),
        xaxis=dict(
            tickmode="array",
            tickvals=[h * (Tk + gap) + (Tk - 1) / 2 for h in range(H)],
            ticktext=[f"head {h}" for h in range(H)],
            side="top",
            showgrid=False,
            zeroline=False,
        ),
        yaxis=dict(
            tickmode="array",
            tickvals=[layer * (Tq + gap) + (Tq - 1) / 2 for layer in range(L)],
            ticktext=[f"layer {layer}" for layer in range(L)],
            autorange="reversed",
            showgrid=False,
            zeroline=False,
            scaleanchor="x",
        ),
        plot_bgcolor="white",
    )
    # one clickable dot per tile: the app enlarges the head whose dot is clicked
    centres = [(layer, head) for layer in range(L) for head in range(H)]
    dots = go.Scatter(
        x=[head * (Tk + gap) + (Tk - 1) / 2 for _, head in centres],
        y=[layer * (Tq + gap) + (Tq - 1) / 2 for layer, _ in centres],
        customdata=[[layer, head] for layer, head in centres],
        mode="markers",
        marker=dict(size=18, symbol="circle-open", color="crimson", line=dict(width=2)),  # open: cells show through
        hovertemplate="layer %{customdata[0]}, head %{customdata[1]}: click to enlarge<extra></extra>",
        showlegend=False,
    )
    return go.Figure(data=[trace, dots], layout=layout)


def token_focus_figure(
    rows: np.ndarray, n_heads: int, key_labels: list[str], title: str, marks: dict[tuple[int, int], float] | None = None
) -> go.Figure:
    """One token's attention row in every (layer, head): rows (L·H, T_k). Probe heads get a ★ and their score."""
    marks = marks or {}
    labels = []
    for i in range(rows.shape[0]):
        layer, head = divmod(i, n_heads)
        star = f" ★{marks[(layer, head)]:.2f}" if (layer, head) in marks else ""
        labels.append(f"L{layer} H{head}{star}")
    return attention_heatmap(rows, labels, key_labels, title, row_title="layer/head", col_title="key")


def replay_figure(step_rows: np.ndarray, key_labels: list[str], title: str) -> go.Figure:
    """Cross-attention of one decoding step in every head of one layer: (H, S)."""
    labels = [f"head {h}" for h in range(step_rows.shape[0])]
    return attention_heatmap(
        step_rows, labels, key_labels, title, row_title="head", col_title="source", height=120 + 40 * len(labels)
    )


def candidates_figure(tokens: list[str], probs: list[float], title: str) -> go.Figure:
    """The most probable next pieces at one decoding step, most probable on top."""
    tokens, title = _esc_all(tokens), esc(title)
    n = len(tokens)
    trace = go.Bar(
        x=probs,
        y=list(range(n)),
        orientation="h",
        customdata=tokens,
        hovertemplate="%{customdata}: %{x:.3f}<extra></extra>",
    )
    layout = dict(
        title=dict(text=title, font=dict(size=13), x=0, xanchor="left"),
        height=110 + 30 * n,
        margin=dict(l=16 + _text_width(tokens), r=12, t=40, b=44, autoexpand=False),
        font=dict(size=11),
        xaxis=dict(range=[0, 1], title=dict(text="probability"), automargin=False),
        yaxis=dict(tickmode="array", tickvals=list(range(n)), ticktext=tokens, autorange="reversed", automargin=False),
    )
    return go.Figure(data=[trace], layout=layout)
