"""SVG (vector) downloads, written directly (kaleido, plotly's static-image engine, is not installed here;
PNG comes from the browser's camera icon, see figures.PLOT_CONFIG).

heatmap_svg draws a labelled matrix (what every heatmap view shows), links_svg an alignment between two
sentences, lines_svg named (x, y) series; figure_svg picks the one that fits a figure on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import unescape
from xml.sax.saxutils import escape

import numpy as np
import plotly.colors

from . import figures

FONT = 'font-family="sans-serif" font-size="11"'
TITLE_FONT = 'font-family="sans-serif" font-size="13"'
NAMED = {"white": "rgb(255, 255, 255)", "black": "rgb(0, 0, 0)"}  # the named colours figures.py uses in scales
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _t(text: object) -> str:
    return escape(str(text).replace("\u200b", ""))


def _doc(width: float, height: float, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}">\n<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )


def heatmap_svg(
    values: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    title: str = "",
    colorscale: str | list = "Blues",
    zrange: tuple[float, float] | None = None,
    cell: float = 22,
) -> str:
    """A labelled matrix as SVG: one rect per cell (NaN and −∞ grey), row labels left, column labels on top.
    colorscale: a plotly name or plotly's [[stop, colour], ...]."""
    values = np.asarray(values, dtype=float)
    left = 12 + 6.6 * max((len(str(r)) for r in rows), default=1)
    top = 40 + 6.6 * max((len(str(c)) for c in cols), default=1)
    finite = values[np.isfinite(values)]
    lo, hi = zrange or ((float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0))
    scale = plotly.colors.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale
    scale = [[stop, NAMED.get(color, color)] for stop, color in scale]  # sample_colorscale reads rgb() only
    body = [f'<text x="8" y="18" {TITLE_FONT}>{_t(title)}</text>']
    for j, c in enumerate(cols):
        x = left + j * cell + cell / 2
        body.append(f'<text transform="translate({x:.1f},{top - 4:.1f}) rotate(-60)" {FONT}>{_t(c)}</text>')
    for i, r in enumerate(rows):
        y = top + i * cell
        body.append(f'<text x="{left - 4:.1f}" y="{y + cell * 0.7:.1f}" text-anchor="end" {FONT}>{_t(r)}</text>')
        for j in range(values.shape[1]):
            v = values[i, j]
            if np.isfinite(v):
                t = 0.0 if hi == lo else min(max((v - lo) / (hi - lo), 0.0), 1.0)
                color = plotly.colors.sample_colorscale(scale, [t])[0]
            else:
                color = figures.MASKED_COLOR
            body.append(
                f'<rect x="{left + j * cell:.1f}" y="{y:.1f}" width="{cell:g}" height="{cell:g}" fill="{color}">'
                f"<title>{_t(r)} · {_t(cols[j])}: {v:.4g}</title></rect>"
            )
    return _doc(left + cell * len(cols) + 20, top + cell * len(rows) + 20, body)


def links_svg(
    source: Sequence[str],
    target: Sequence[str],
    links: set[tuple[int, int]],
    title: str = "",
    gold: set[tuple[int, int]] | None = None,
) -> str:
    """Two sentences, one above the other, joined by a line per link (source word, target word);
    links also in `gold` are drawn solid, the others dashed (all solid when no gold is given)."""

    def xs(words):
        out, x = [], 10.0
        for w in words:
            width = 8 + 7 * len(str(w))
            out.append((x, width))
            x += width + 6
        return out, x

    sx, w1 = xs(source)
    tx, w2 = xs(target)
    body = [f'<text x="8" y="18" {TITLE_FONT}>{_t(title)}</text>']
    for (x, _), w in zip(sx, source):
        body.append(f'<text x="{x:.1f}" y="50" {FONT}>{_t(w)}</text>')
    for (x, _), w in zip(tx, target):
        body.append(f'<text x="{x:.1f}" y="160" {FONT}>{_t(w)}</text>')
    for s, t in sorted(links):
        x1 = sx[s][0] + sx[s][1] / 2
        x2 = tx[t][0] + tx[t][1] / 2
        dash = "" if gold is None or (s, t) in gold else ' stroke-dasharray="4 3"'
        body.append(f'<line x1="{x1:.1f}" y1="56" x2="{x2:.1f}" y2="146" stroke="#1f77b4"{dash}/>')
    return _doc(max(w1, w2) + 10, 180, body)


def lines_svg(
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    *,
    log_x: bool = False,
    log_y: bool = False,
) -> str:
    """Named (x, y) series as polylines with markers, axes from the data's range (log10 where asked: the
    ends are labelled with the data's own values), and a legend."""
    W, H, L, T, B = 520, 320, 60, 40, 50

    def axis(values: Sequence[float], log: bool) -> list[float]:
        out = np.asarray([float(v) for v in values], dtype=float)
        if log:
            with np.errstate(divide="ignore", invalid="ignore"):
                out = np.where(out > 0, np.log10(np.where(out > 0, out, 1.0)), np.nan)
        return out.tolist()

    series = {name: (axis(x, log_x), axis(y, log_y)) for name, (x, y) in series.items()}
    xs = [float(v) for x, _ in series.values() for v in x if np.isfinite(v)]
    ys = [float(v) for _, y in series.values() for v in y if np.isfinite(v)]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    y0, y1 = (min(ys + [0.0]), max(ys + [1.0])) if ys and not log_y else ((min(ys), max(ys)) if ys else (0.0, 1.0))
    shown = lambda v, log: f"{10**v:.3g}" if log else f"{v:.3g}"  # noqa: E731
    px = lambda v: L + (v - x0) / ((x1 - x0) or 1) * (W - L - 20)  # noqa: E731
    py = lambda v: H - B - (v - y0) / ((y1 - y0) or 1) * (H - B - T)  # noqa: E731
    body = [
        f'<text x="8" y="18" {TITLE_FONT}>{_t(title)}</text>',
        f'<line x1="{L}" y1="{H - B}" x2="{W - 20}" y2="{H - B}" stroke="black"/>',
        f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
        f'<text x="{(W + L) / 2:.0f}" y="{H - 12}" text-anchor="middle" {FONT}>{_t(x_title)}</text>',
        f'<text transform="translate(14,{(H - B + T) / 2:.0f}) rotate(-90)" text-anchor="middle" {FONT}>'
        f"{_t(y_title)}</text>",
        f'<text x="{L - 4}" y="{H - B}" text-anchor="end" {FONT}>{shown(y0, log_y)}</text>',
        f'<text x="{L - 4}" y="{T + 4}" text-anchor="end" {FONT}>{shown(y1, log_y)}</text>',
        f'<text x="{L}" y="{H - B + 14}" text-anchor="middle" {FONT}>{shown(x0, log_x)}</text>',
        f'<text x="{W - 20}" y="{H - B + 14}" text-anchor="middle" {FONT}>{shown(x1, log_x)}</text>',
    ]
    for k, (name, (x, y)) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        pts = [(px(float(a)), py(float(b))) for a, b in zip(x, y) if np.isfinite(a) and np.isfinite(b)]
        body.append(f'<polyline fill="none" stroke="{color}" points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in pts)}"/>')
        body += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{color}"/>' for a, b in pts]
        body.append(f'<text x="{W - 150}" y="{T + 14 * k}" fill="{color}" {FONT}>{_t(name)}</text>')
    return _doc(W, H, body)


def bars_svg(labels: Sequence[str], values: Sequence[float], title: str = "", value_title: str = "") -> str:
    """Horizontal bars, first label on top, each with its value; the axis from 0 (or the least value) to the
    largest."""
    values = [float(v) for v in values]
    finite = [v for v in values if np.isfinite(v)]
    lo, hi = min(finite + [0.0]), max(finite + [0.0]) if finite else 1.0
    hi = hi if hi > lo else lo + 1.0
    left = 16 + 6.6 * max((len(str(label)) for label in labels), default=1)
    W, bar, T = left + 360, 20, 34
    px = lambda v: left + (v - lo) / (hi - lo) * 300  # noqa: E731
    body = [f'<text x="8" y="18" {TITLE_FONT}>{_t(title)}</text>']
    for i, (label, v) in enumerate(zip(labels, values)):
        y = T + i * (bar + 6)
        body.append(f'<text x="{left - 6:.1f}" y="{y + bar * 0.7:.1f}" text-anchor="end" {FONT}>{_t(label)}</text>')
        if np.isfinite(v):
            x0, x1 = sorted((px(0.0 if lo <= 0 else lo), px(v)))
            body.append(f'<rect x="{x0:.1f}" y="{y:.1f}" width="{x1 - x0:.1f}" height="{bar}" fill="{PALETTE[0]}"/>')
            body.append(f'<text x="{max(x1, x0) + 4:.1f}" y="{y + bar * 0.7:.1f}" {FONT}>{v:.4g}</text>')
    bottom = T + len(values) * (bar + 6) + 16
    body.append(f'<text x="{left + 150:.1f}" y="{bottom:.1f}" text-anchor="middle" {FONT}>{_t(value_title)}</text>')
    return _doc(W, bottom + 12, body)


def _text(obj) -> str:
    """A plotly title (escaped for plotly by figures.esc) as plain text."""
    return unescape(str(getattr(obj, "text", None) or ""))


def figure_svg(fig) -> str:
    """Any figure on screen as SVG: a canvas heatmap from its matrix, a plotly figure through kaleido when
    it is installed, else drawn here: a plotly heatmap (the overview's tiles) by heatmap_svg, horizontal
    bars by bars_svg, line/marker traces by lines_svg (on the figure's log axes where it has them)."""
    if isinstance(fig, figures.Heatmap):
        tr = fig.trace
        title = fig.layout.get("title", {})
        title = title.get("text", "") if isinstance(title, dict) else str(title or "")
        return heatmap_svg(  # the figure's labels are escaped for plotly: unescape them once
            np.asarray(tr["z"], dtype=float),
            [unescape(str(r)) for r in tr["y"]],
            [unescape(str(c)) for c in tr["x"]],
            unescape(title),
            tr.get("colorscale") if isinstance(tr.get("colorscale"), str) else "Blues",
            (tr.get("zmin"), tr.get("zmax")) if tr.get("zmin") is not None else None,
        )
    try:
        return fig.to_image(format="svg").decode()
    except (ValueError, ImportError, RuntimeError):
        pass
    title = _text(fig.layout.title)
    heat = [t for t in fig.data if t.type == "heatmap"]
    if heat:  # the overview: its tiles as cells (the gaps between tiles white), no labels per cell
        z = np.asarray(heat[0].z, dtype=float)
        scale = [list(stop) for stop in heat[0].colorscale] if heat[0].colorscale else "Blues"
        zrange = (heat[0].zmin, heat[0].zmax) if heat[0].zmin is not None else None
        return heatmap_svg(z, [""] * z.shape[0], [""] * z.shape[1], title, scale, zrange, cell=6)
    bars = [t for t in fig.data if t.type == "bar" and t.orientation == "h"]
    if bars:
        return bars_svg([unescape(str(y)) for y in bars[0].y], list(bars[0].x), title, _text(fig.layout.xaxis.title))
    series = {
        unescape(str(t.name or i)): (list(t.x if t.x is not None else range(len(t.y))), list(t.y))
        for i, t in enumerate(fig.data)
        if t.type in ("scatter", "bar") and t.y is not None
    }
    return lines_svg(
        series,
        title,
        _text(fig.layout.xaxis.title),
        _text(fig.layout.yaxis.title),
        log_x=fig.layout.xaxis.type == "log",
        log_y=fig.layout.yaxis.type == "log",
    )
