"""Shared wiring for the app's pages: cached model loading, cached analyses, sidebar state.

The model is loaded once per server (st.cache_resource) and never mutated;
analyses and figures are cached per (checkpoint, sentence, options).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from transformer.checkpoint import CHECKPOINTS_DIR, DEFAULT_CHECKPOINT, Checkpoint, list_checkpoints, load_checkpoint
from transformer.corpus import SEED_SENTENCES
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


def checkpoint_choices() -> dict[str, str]:
    """label -> path, the shipped default first."""
    found = list_checkpoints()
    found.sort(key=lambda p: (p != DEFAULT_CHECKPOINT, str(p)))
    return {str(p.relative_to(CHECKPOINTS_DIR)) if p.is_relative_to(CHECKPOINTS_DIR) else str(p): str(p) for p in found}


def sidebar_state() -> None:
    ss = st.session_state
    ss.setdefault("text", EXAMPLES[0])
    ss.setdefault("example", EXAMPLES[0])
    ss.setdefault("beam", 1)
    if "checkpoint" not in ss:
        choices = checkpoint_choices()
        if choices:
            ss["checkpoint"] = next(iter(choices))


def _stamp(path: str) -> float:
    p = Path(path) / "model.safetensors"
    return p.stat().st_mtime if p.exists() else 0.0


@st.cache_resource(show_spinner="Loading the model…", max_entries=8)
def _load(path: str, stamp: float) -> Checkpoint:
    return load_checkpoint(path)


def current_checkpoint() -> tuple[str, Checkpoint]:
    """The checkpoint chosen in the sidebar (shared by every session, read-only)."""
    choices = checkpoint_choices()
    label = st.session_state.get("checkpoint")
    path = choices.get(label) or str(DEFAULT_CHECKPOINT)
    return path, _load(path, _stamp(path))


@st.cache_data(show_spinner="Translating…", max_entries=512)
def _analysis(path: str, stamp: float, text: str, beam: int) -> Analysis:
    ckpt = _load(path, stamp)
    return analyse(ckpt.model, ckpt.tokenizer, text, beam)


def get_analysis(path: str, text: str, beam: int) -> Analysis:
    return _analysis(path, _stamp(path), text[:MAX_TEXT], int(beam))


def probe_marks(ckpt: Checkpoint, kind: str, query: str = "pronoun", top: int = 3) -> dict[tuple[int, int], float]:
    """The best heads of the coreference probe recorded in the card (layer, head) -> score."""
    heads = ckpt.card.get("evaluation", {}).get("heads", [])
    picked = sorted((h for h in heads if h.get("kind") == kind and h.get("query") == query), key=lambda h: -h["score"])
    return {(int(h["layer"]), int(h["head"])): float(h["score"]) for h in picked[:top]}


def card_summary(ckpt: Checkpoint) -> dict[str, Any]:
    ev = ckpt.card.get("evaluation", {})
    keys = ("pronoun_accuracy", "exact_match", "bleu", "chrf", "n_sentences")
    return {k: ev[k] for k in keys if k in ev} | {
        "step": ckpt.card.get("step"),
        "wall_time_s": ckpt.card.get("wall_time_s"),
    }


def show_json(data: Any) -> None:
    st.code(json.dumps(data, indent=2, ensure_ascii=False), language="json")
