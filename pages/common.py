"""Shared wiring for the app's pages: cached model loading, cached analyses, sidebar state.

The model is loaded once per server (st.cache_resource) and never mutated;
analyses and figures are cached per (checkpoint, sentence, options).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from transformer.checkpoint import (
    CHECKPOINTS_DIR,
    DEFAULT_CHECKPOINT,
    Checkpoint,
    CheckpointError,
    list_checkpoints,
    load_checkpoint,
)
from transformer.corpus import SEED_SENTENCES
from transformer.tokenizer import word_groups
from transformer.views import Analysis, analyse

EXAMPLES = [
    SEED_SENTENCES[0][0],
    SEED_SENTENCES[1][0],
    "The cow didn't cross the road because it was too scared.",
    "The cow didn't cross the road because it was too narrow.",
    "The dogs didn't cross the bridge because they were too tired.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "The trophy didn't fit in the suitcase because it was too small.",
    "The horse stopped at the river since it was too flooded.",
    "The goat avoided the bridges because they were too dangerous.",
]
MAX_TEXT = 5000


def checkpoints_root() -> Path:
    """checkpoints/ of the repository, or the folder named by $TRANSFORMER_CHECKPOINTS."""
    return Path(os.environ.get("TRANSFORMER_CHECKPOINTS") or CHECKPOINTS_DIR)


def checkpoint_choices() -> dict[str, str]:
    """label -> path of every checkpoint directory under the root, the shipped default first."""
    root = checkpoints_root()
    found = list_checkpoints(root)
    found.sort(key=lambda p: (p.name != DEFAULT_CHECKPOINT.name, str(p)))
    return {str(p.relative_to(root)): str(p) for p in found}


def sidebar_state() -> None:
    ss = st.session_state
    ss.setdefault("text", EXAMPLES[0])
    ss.setdefault("example", EXAMPLES[0])
    ss.setdefault("beam", 1)
    choices = checkpoint_choices()
    if choices and ss.get("checkpoint") not in choices:  # first visit, or the folder has gone
        ss["checkpoint"] = next(iter(choices))


def _stamp(path: str) -> float:
    p = Path(path) / "model.safetensors"
    return p.stat().st_mtime if p.exists() else 0.0


@st.cache_resource(show_spinner="Loading the model…", max_entries=8)
def _load(path: str, stamp: float) -> Checkpoint:
    return load_checkpoint(path)


def current_checkpoint() -> tuple[str, Checkpoint]:
    """The checkpoint chosen in the sidebar (shared by every session, read-only).

    A checkpoint that fails validation stops the page with the loader's message.
    """
    choices = checkpoint_choices()
    label = st.session_state.get("checkpoint")
    path = choices.get(label) or (next(iter(choices.values())) if choices else str(DEFAULT_CHECKPOINT))
    try:
        return path, _load(path, _stamp(path))
    except CheckpointError as exc:
        st.error(f"This checkpoint cannot be used: {exc}")
        st.stop()


@st.cache_data(show_spinner="Translating…", max_entries=512)
def _analysis(path: str, stamp: float, text: str, beam: int) -> Analysis:
    ckpt = _load(path, stamp)
    return analyse(ckpt.model, ckpt.tokenizer, text, beam)


def get_analysis(path: str, text: str, beam: int) -> Analysis:
    return _analysis(path, _stamp(path), text[:MAX_TEXT], int(beam))


def probe_heads(ckpt: Checkpoint, kind: str, query: str = "pronoun") -> list[dict[str, Any]]:
    """The coreference probe's scores recorded in the card for one kind of row, best first."""
    evaluation = ckpt.card.get("evaluation")
    heads = evaluation.get("heads", []) if isinstance(evaluation, dict) else []
    cfg = ckpt.config
    n_layers = cfg.n_encoder_layers if kind == "encoder" else cfg.n_decoder_layers
    picked = []
    for h in heads if isinstance(heads, list) else []:
        try:  # the card is data from disk: keep only well-formed numeric entries
            if h.get("kind") == kind and h.get("query") == query:
                entry = {"layer": int(h["layer"]), "head": int(h["head"]), "score": float(h["score"])}
                if 0 <= entry["layer"] < n_layers and 0 <= entry["head"] < cfg.n_heads:
                    picked.append(entry)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
    return sorted(picked, key=lambda h: -h["score"])


def probe_marks(ckpt: Checkpoint, kind: str, threshold: float = 0.8) -> dict[tuple[int, int], float]:
    """(layer, head) -> score for the heads whose pronoun row finds the antecedent in >= threshold of sentences."""
    return {
        (int(h["layer"]), int(h["head"])): float(h["score"])
        for h in probe_heads(ckpt, kind)
        if float(h["score"]) >= threshold
    }


@st.cache_data(show_spinner=False, max_entries=4096)
def _figure(path: str, stamp: float, text: str, beam: int, view: str, params: tuple) -> Any:
    return build_figure(
        _analysis(path, stamp, text, beam),
        _load(path, stamp),
        view,
        params,
        analysis_of=lambda other: _analysis(path, stamp, other[:MAX_TEXT], beam),
    )


def figure(path: str, text: str, beam: int, view: str, *params: Any) -> Any:
    """A cached figure of the explorer, keyed by (checkpoint, sentence, beam, view, params)."""
    return _figure(path, _stamp(path), text[:MAX_TEXT], int(beam), view, tuple(params))


def build_figure(
    a: Analysis, ckpt: Checkpoint, view: str, params: tuple, analysis_of: Callable[[str], Analysis]
) -> Any:
    """Map a view name and its parameters to one of the pure builders in transformer.figures.

    analysis_of(text) gives the analysis of another sentence (the "diff" view compares two).
    """
    from transformer import figures
    from transformer.views import diff_labels, difference, merge_words, token_focus, word_labels

    if view == "diff":
        other, kind, layer, head, title = params
        b = analysis_of(other)
        d = difference(a.maps(kind), b.maps(kind))
        (ra, ka), (rb, kb) = a.labels(kind), b.labels(kind)
        rows, keys = diff_labels(ra, rb, d.rows), diff_labels(ka, kb, d.cols)
        return figures.attention_heatmap(d.delta[layer, head], rows, keys, title, diverging=True)

    if view == "head":
        kind, layer, head, title = params
        rows, keys = a.labels(kind)
        return figures.attention_heatmap(a.maps(kind)[layer, head], rows, keys, title)
    if view == "overview":
        kind, layer, head, title = params
        return figures.heads_overview(a.maps(kind), title, highlight=(layer, head))
    if view == "focus":
        kind, query, title = params
        marks = probe_marks(ckpt, "encoder" if kind == "encoder" else "cross")
        return figures.token_focus_figure(
            token_focus(a.maps(kind), query), ckpt.config.n_heads, a.source_pieces, title, marks
        )
    if view == "words":
        kind, layer, head, title = params
        rows, keys = a.labels(kind)
        rg, kg = word_groups(rows), word_groups(keys)
        merged = merge_words(a.maps(kind)[layer, head], rg, kg)
        return figures.attention_heatmap(merged, word_labels(rows, rg), word_labels(keys, kg), title)
    if view == "replay":
        layer, step, title = params
        return figures.replay_figure(a.cross[layer, :, step - 1], a.source_pieces, title)
    if view == "candidates":
        (step,) = params
        return figures.candidates_figure(
            a.top_tokens[step - 1], a.top_probs[step - 1].tolist(), "Next-piece candidates"
        )
    raise ValueError(f"unknown view {view!r}")
