"""The head lab's research figures on a checkpoint (default: checkpoints/real-kde-align), as in docs/headlab.md.

    nice -n 19 python3 scripts/headlab_figures.py [CHECKPOINT] [--out docs/headlab] [--roles 200] [--prune 200]

Writes into --out: roles.csv, importance.csv, pruning.csv (every number), roles_<kind>.svg (the share of the
kind's strongest role per head, with the badges), importance.svg, pruning_chrf.svg, pruning_accuracy.svg,
lens.csv, and summary.json (what docs/headlab.md quotes). The SVGs are written here by hand (no plotting
library is needed); the app draws the same numbers in its head lab (pages/_ui/research_views.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from html import escape
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transformer.attention import AttentionKind, HeadId  # noqa: E402
from transformer.checkpoint import load_checkpoint  # noqa: E402
from transformer.corpus import CorpusSpec, generate_test  # noqa: E402
from transformer.inspection.card import best_probe_head, has_probe_set, probe_scores  # noqa: E402
from transformer.inspection.headlab import probe_set  # noqa: E402
from transformer.inspection.heldout import heldout_pairs  # noqa: E402
from transformer.inspection.importance import CURVE_KINDS, head_importance, pruning_curve  # noqa: E402
from transformer.inspection.logit_lens import logit_lens  # noqa: E402
from transformer.inspection.roles import (  # noqa: E402
    ROLE_KINDS,
    Role,
    measure_all_roles,
    piece_frequency,
    role_rows,
    strongest,
)
from transformer.inspection.syntax import Parser  # noqa: E402
from transformer.layout import DEFAULT_CHECKPOINT  # noqa: E402

FLAGSHIP = "The animal didn't cross the street because it was too tired."
COLOURS = {"encoder": "#4c78a8", "decoder": "#f58518", "cross": "#e45756", "all": "#54a24b"}


def svg_grid(values: np.ndarray, text: np.ndarray, title: str, vmax: float | None = None) -> str:
    """Cells coloured by value (white → blue), each with its text; rows L0.., columns H0.."""
    L, H = values.shape
    cell, left, top = 70, 40, 46
    vmax = vmax or float(np.nanmax(values)) or 1.0
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + H * cell + 10}" height="{top + L * cell + 10}" '
        'font-family="sans-serif" font-size="12">',
        f'<text x="4" y="16" font-size="13">{escape(title)}</text>',
    ]
    for h in range(H):
        out.append(f'<text x="{left + h * cell + cell / 2}" y="{top - 6}" text-anchor="middle">H{h}</text>')
    for la in range(L):
        out.append(f'<text x="4" y="{top + la * cell + cell / 2 + 4}">L{la}</text>')
        for h in range(H):
            v = 0.0 if np.isnan(values[la, h]) else float(values[la, h]) / vmax
            shade = int(255 - 180 * min(max(v, 0.0), 1.0))
            colour = f"rgb({shade},{shade + int(30 * (1 - v))},255)"
            x, y = left + h * cell, top + la * cell
            out.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{colour}"/>')
            out.append(
                f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle">'
                f"{escape(str(text[la, h]))}</text>"
            )
    out.append("</svg>")
    return "\n".join(out)


def svg_lines(series: dict[str, tuple[list[float], list[float]]], title: str, y_title: str, y_max: float) -> str:
    """Lines of (x in 0..1, y in 0..y_max) with markers and a legend."""
    W, Hh, left, top, bottom = 560, 340, 56, 36, 50
    pw, ph = W - left - 130, Hh - top - bottom
    X = lambda x: left + x * pw  # noqa: E731
    Y = lambda y: top + ph - y / y_max * ph  # noqa: E731
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{Hh}" font-family="sans-serif" font-size="12">',
        f'<text x="4" y="18" font-size="13">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>',
    ]
    for i in range(6):
        x = i / 5
        out.append(f'<text x="{X(x)}" y="{top + ph + 16}" text-anchor="middle">{x:.1f}</text>')
        y = y_max * i / 5
        out.append(f'<text x="{left - 6}" y="{Y(y) + 4}" text-anchor="end">{y:.3g}</text>')
        out.append(f'<line x1="{left}" y1="{Y(y)}" x2="{left + pw}" y2="{Y(y)}" stroke="#ddd"/>')
    out.append(
        f'<text x="{left + pw / 2}" y="{Hh - 10}" text-anchor="middle">'
        "share of heads kept (least important pruned first)</text>"
    )
    out.append(
        f'<text x="14" y="{top + ph / 2}" transform="rotate(-90 14 {top + ph / 2})" text-anchor="middle">'
        f"{escape(y_title)}</text>"
    )
    for j, (name, (xs, ys)) in enumerate(series.items()):
        colour = COLOURS.get(name.split()[0], "black")
        points = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in zip(xs, ys))
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="3" fill="{colour}"/>' for x, y in zip(xs, ys)]
        ly = top + 14 + 18 * j
        out.append(
            f'<line x1="{left + pw + 10}" y1="{ly}" x2="{left + pw + 30}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{left + pw + 34}" y="{ly + 4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint", nargs="?", default=str(DEFAULT_CHECKPOINT))
    parser.add_argument("--out", default="docs/headlab")
    parser.add_argument("--roles", type=int, default=200, help="held-out sentences of the roles")
    parser.add_argument("--prune", type=int, default=200, help="held-out sentences of importance and pruning")
    parser.add_argument("--points", type=int, default=7, help="points per pruning curve")
    args = parser.parse_args()
    torch.set_num_threads(2)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ckpt = load_checkpoint(args.checkpoint)
    model, tok, card, cfg = ckpt.model, ckpt.tokenizer, ckpt.card, ckpt.config
    summary: dict = {"checkpoint": Path(args.checkpoint).name}
    t0 = time.time()

    # roles
    held = heldout_pairs(card, args.roles)
    freq = piece_frequency(tok, card)
    syntactic = Parser.available()
    roles = measure_all_roles(model, tok, held.pairs, freq)
    coref = {
        s.head: s.score
        for kind in (AttentionKind.ENCODER, AttentionKind.CROSS)
        for s in probe_scores(card, cfg, kind)
        if s.score >= 0.8
    }
    rows = role_rows(roles, coref)
    lines = [
        "kind,layer,head,previous,next,rare,coreference,syntactic_role,syntactic_accuracy,syntactic_baseline,badges"
    ]
    for h, v in rows:
        cells = ["" if v[r] is None else f"{v[r]:.4f}" for r in ("previous", "next", "rare", "coreference")]
        syn = v["syntactic"]
        cells += ["", "", ""] if syn is None else [syn[0], f"{syn[1]:.4f}", f"{syn[2]:.4f}"]
        lines.append(",".join([h.kind.value, str(h.layer), str(h.head), *cells, v["badges"]]))
    (out / "roles.csv").write_text("\n".join(lines) + "\n")
    summary["roles"] = {
        "sentences": roles.n_sentences,
        "held_out": held.origin,
        "frequency": freq.origin,
        "chance": {k.value: round(c, 4) for k, c in roles.chance.items()},
        "counts": {r.value: {k.value: n for k, n in roles.count(r, coref).items()} for r in Role},
        "strongest": {r: {"head": h.label, "share": round(s, 4)} for r, (h, s) in strongest(roles).items()},
        "syntactic": {
            "parser": "Link Grammar (Debian python3-link-grammar)" if syntactic else None,
            "parsed": roles.parsed,
            "arcs": roles.arcs,
            "baseline": {r: round(b, 4) for r, b in roles.baseline.items()},
        },
    }
    for kind in AttentionKind:
        s = roles.shares[kind]
        plain = [r for r in s if r in ROLE_KINDS[kind]]  # a syntactic accuracy reads against its baseline, not 1
        best = np.nanmax(np.stack([s[r] for r in plain]), axis=0)  # the strongest role's share per head
        badges = roles.badges(kind, coref)
        text = np.vectorize(lambda v, b: f"{v:.2f} {b}".strip())(best, badges)
        title = f"{kind.value}: share of rows of the head's strongest role ({', '.join(plain)}); badges ← → R S C"
        (out / f"roles_{kind.value}.svg").write_text(svg_grid(best, text, title, vmax=1.0))
    print(f"roles: {time.time() - t0:.0f} s", flush=True)

    # importance and pruning
    held = heldout_pairs(card, args.prune)
    importance = head_importance(model, tok, held.pairs)
    lines = ["kind,layer,head,importance"]
    for h in HeadId.all(cfg):
        lines.append(f"{h.kind.value},{h.layer},{h.head},{importance.of(h):.6f}")
    (out / "importance.csv").write_text("\n".join(lines) + "\n")
    stacked = np.concatenate([importance.scores[k] for k in AttentionKind], axis=1)
    (out / "importance.svg").write_text(
        svg_grid(
            stacked,
            np.char.mod("%.3f", stacked),
            "Importance |dL/dxi| per head: encoder H0-3 | decoder H4-7 | cross H8-11",
        )
    )
    summary["importance"] = {
        "sentences": importance.n_sentences,
        "mean": {k.value: round(float(v.mean()), 5) for k, v in importance.scores.items()},
        "top": [{"head": h.label, "importance": round(importance.of(h), 5)} for h in importance.order()[::-1][:5]],
    }
    probe = None
    if has_probe_set(card):
        probe = probe_set(tok, generate_test(CorpusSpec.from_card(card)), 300)
    curves = []
    for kind in CURVE_KINDS:
        t = time.time()
        curves.append(pruning_curve(model, tok, held.pairs, importance, kind, probe, args.points))
        print(f"curve {kind}: {time.time() - t:.0f} s", flush=True)
    lines = ["curve,heads_kept,heads_pruned,chrf,pronoun_accuracy"]
    series_chrf, series_acc = {}, {}
    for c in curves:
        name = "all" if c.kind is None else c.kind.value
        for i, p in enumerate(c.pruned):
            acc = "" if c.accuracy[i] is None else f"{c.accuracy[i]:.4f}"
            lines.append(f"{name},{c.kept[i]},{p},{c.chrf[i]:.3f},{acc}")
        xs = [k / len(c.order) for k in c.kept]
        series_chrf[f"{name} ({len(c.order)})"] = (xs, list(c.chrf))
        if c.accuracy[0] is not None:
            series_acc[f"{name} ({len(c.order)})"] = (xs, list(c.accuracy))
    (out / "pruning.csv").write_text("\n".join(lines) + "\n")
    top = max(max(c.chrf) for c in curves)
    (out / "pruning_chrf.svg").write_text(
        svg_lines(series_chrf, "chrF of held-out sentences against heads kept", "chrF", float(np.ceil(top / 10) * 10))
    )
    if series_acc:
        (out / "pruning_accuracy.svg").write_text(
            svg_lines(series_acc, "Pronoun accuracy (probe set) against heads kept", "pronoun accuracy", 1.0)
        )
    summary["pruning"] = {
        "sentences": len(held.pairs),
        "base_chrf": round(curves[0].chrf[0], 2),
        "half_cost_chrf": {("all" if c.kind is None else c.kind.value): round(c.half_cost()[0], 2) for c in curves},
        "half_cost_accuracy": {
            ("all" if c.kind is None else c.kind.value): None
            if c.half_cost()[1] is None
            else round(c.half_cost()[1], 4)
            for c in curves
        },
    }

    # logit lens on the flagship sentence
    lens = logit_lens(model, tok, FLAGSHIP)
    lines = ["layer,step,written,written_prob,top1,top1_prob,rival,rival_prob"]
    for la in range(lens.n_layers):
        for t, piece in enumerate(lens.steps):
            rp = "" if np.isnan(lens.rival_prob[la, t]) else f"{lens.rival_prob[la, t]:.4f}"
            lines.append(
                f'{la},{t + 1},"{piece}",{lens.written_prob[la, t]:.4f},"{lens.top_pieces[la][t][0]}",'
                f'{lens.top_probs[la, t, 0]:.4f},"{lens.rival[t] or ""}",{rp}'
            )
    (out / "lens.csv").write_text("\n".join(lines) + "\n")
    summary["lens"] = {
        "sentence": FLAGSHIP,
        "pieces": lens.steps,
        "pronouns": [
            {
                "step": t + 1,
                "piece": lens.steps[t],
                "decided_layer": lens.decided_layer(t),
                "written_prob": [round(float(p), 4) for p in lens.written_prob[:, t]],
                "rival": lens.rival[t],
                "rival_prob": [round(float(p), 4) for p in lens.rival_prob[:, t]],
                "top1": [lens.top_pieces[la][t][0] for la in range(lens.n_layers)],
            }
            for t in lens.pronoun_steps()
        ],
    }
    best = best_probe_head(card, cfg, AttentionKind.ENCODER)
    summary["probe_best_encoder"] = None if best is None else {"head": best.head.label, "score": best.score}
    summary["seconds"] = round(time.time() - t0)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(summary, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
