"""What a checkpoint was trained on, read defensively from its card (for the short on-screen card).

The trainer records the config (``train_config``); a checkpoint trained on real text also
records ``real_data`` (per corpus: pairs, pages, licence, Debian package versions), written
from transformer/corpus/data/MANIFEST.json when its card was completed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checkpoint import card_number
from ..corpus.chinese import (
    GRAPHICS_PACKAGES,
    GUIDES_PACKAGES,
    ITIL_PACKAGES,
    KICAD_PACKAGES,
    OFFICE_UI,
    REFERENCE_PACKAGES,
    TUTORIALS,
)
from ..corpus.everyday import (
    DIALOGUE_CATALOGUES,
    FREECOL_PACKAGE,
    GAME_CATALOGUES,
    HEDGEWARS_PACKAGE,
    OBJECT_CATALOGUES,
    STAMPS_PACKAGE,
    STORY_CATALOGUES,
    WESNOTH_PACKAGES,
)
from ..corpus.real import CATALOGUES, HELP_PACKAGES, KDE_PACKAGES
from ..corpus.tatoeba import OPUS_MT, Published
from ..layout import AVERAGED_FROM
from ..provenance import target_language


@dataclass(frozen=True)
class RealSource:
    name: str  # "libreoffice" | "handbook" | "gnome" | "apps" | "kde" | "ui"
    pairs: int
    pages: int
    licence: str
    packages: tuple[str, ...]  # "name version"


@dataclass(frozen=True)
class PublicFigure:
    """A model's figure on a public test set (scripts/evaluate_public.py), beside opus-mt's published one."""

    test_set: str  # tatoeba.TATOEBA_TEST | tatoeba.FLORES_TEST
    metric: str  # "chrf" | "bleu"
    ours: float
    n_sentences: int
    published: Published | None


@dataclass(frozen=True)
class Scores:
    """chrF on text never trained on (scripts/evaluate_real_coref.py), greedy and under the card's beam search."""

    held_out: float  # the held-out pages
    gimp: float  # the GIMP manual
    beam_held_out: float | None = None
    beam_gimp: float | None = None
    beam_size: int = 0
    alpha: float = 0.0
    everyday: float | None = None  # the everyday test campaigns (scripts/evaluate_everyday.py), when measured
    beam_everyday: float | None = None


@dataclass(frozen=True)
class Session:
    """One kept training session: where it ran, its minutes of training loop, its steps."""

    device: str  # "cuda" | "cpu"
    minutes: float
    steps: int
    threads: int = 0  # CPU threads, 0 when unknown


@dataclass(frozen=True)
class TrainingSummary:
    real: tuple[RealSource, ...]
    generated: int  # generated coreference sentences
    variant_share: float  # of them, typed variants
    steps: int
    sessions: tuple[Session, ...]
    scores: Scores | None = None
    averaged: tuple[int, ...] = ()  # the steps whose weights were averaged into these (card "averaged_from")

    @property
    def real_pairs(self) -> int:
        return sum(s.pairs for s in self.real)

    @property
    def minutes(self) -> float:
        return sum(s.minutes for s in self.sessions)


def _num(x: Any, kind: type = int) -> Any:
    v = card_number(x)
    return kind(0) if v is None else kind(x)


def _metric(part: Any, metric: str) -> float | None:
    """part[metric] ("chrf", "bleu") as a float, or None when part or its value is malformed."""
    return card_number(part.get(metric) if isinstance(part, dict) else None)


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _scores(
    metric: str, greedy: dict, beam: dict, everyday: tuple[dict, dict], parts: tuple[str, str], search: dict
) -> Scores | None:
    """Scores read from one metric of a card's greedy and beam entries: parts name the held-out pages' and GIMP's
    entries, everyday the (greedy, beam) entries holding "everyday_test", search the beam's size and alpha. None
    without both greedy figures; greedy only without both beam ones."""
    held_out, gimp = (_metric(greedy.get(k), metric) for k in parts)
    if held_out is None or gimp is None:
        return None
    days = tuple(_metric(e.get("everyday_test"), metric) for e in everyday)
    b_held_out, b_gimp = (_metric(beam.get(k), metric) for k in parts)
    if b_held_out is None or b_gimp is None:
        return Scores(held_out, gimp, everyday=days[0])
    size, alpha = _num(search.get("beam_size")), _num(search.get("alpha"), float)
    return Scores(held_out, gimp, b_held_out, b_gimp, size, alpha, *days)


def scores_of(card: dict[str, Any]) -> Scores | None:
    """The card's real-text chrF (its "real_coref" entry, the everyday test campaigns from "everyday_eval" and
    "everyday_eval_beam"), or None when it has none or they are malformed."""
    full = _dict(card.get("real_coref"))
    beam = _dict(full.get("beam"))
    everyday = (_dict(card.get("everyday_eval")), _dict(card.get("everyday_eval_beam")))
    return _scores("chrf", full, beam, everyday, ("real", "gimp"), beam)


def zh_scores_of(card: dict[str, Any]) -> Scores | None:
    """An English → Chinese card's BLEU (sacrebleu's Chinese tokenizer; scripts/evaluate_zh.py --write) on the
    held-out pages, GIMP and the everyday test campaigns, greedy and under its beam search; None when unmeasured."""
    greedy, beam = _dict(card.get("zh_eval")), _dict(card.get("zh_eval_beam"))
    return _scores("bleu", greedy, beam, (greedy, beam), ("held_out", "gimp"), _dict(card.get("decoding")))


def sessions_of(card: dict[str, Any]) -> tuple[Session, ...]:
    """The kept sessions a card records (its "sessions": each with "device", "minutes" and "steps" [from, to]), or,
    for a card without them, its one run (the card's device, threads, wall time and step)."""
    out = []
    for entry in card.get("sessions") or ():
        steps = entry.get("steps") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not entry.get("kept") or entry.get("device") not in ("cuda", "cpu"):
            continue
        if not (isinstance(steps, list) and len(steps) == 2):
            continue
        out.append(
            Session(
                entry["device"],
                _num(entry.get("minutes"), float),
                _num(steps[1]) - _num(steps[0]),
                _num(entry.get("threads")),
            )
        )
    if out:
        return tuple(out)
    device = "cuda" if card.get("device") == "cuda" else "cpu"
    return (
        Session(device, _num(card.get("wall_time_s"), float) / 60, _num(card.get("step")), _num(card.get("threads"))),
    )


def averaged_steps(card: dict[str, Any]) -> tuple[int, ...]:
    """The training steps whose weights the card's weights average (``python -m transformer average``), oldest
    first; () when they were not averaged (or the record is malformed)."""
    entries = card.get(AVERAGED_FROM)
    if not isinstance(entries, list):
        return ()
    steps = [e.get("step") if isinstance(e, dict) else None for e in entries]
    return tuple(steps) if all(isinstance(x, int) and not isinstance(x, bool) for x in steps) else ()


def training_summary(card: dict[str, Any]) -> TrainingSummary | None:
    """The summary of a card whose run mixed real text in, else None (malformed parts read as empty)."""
    if not isinstance(card, dict):
        return None
    train = card.get("train_config")
    real = card.get("real_data")
    if not isinstance(train, dict) or not isinstance(real, dict) or not train.get("real_data"):
        return None
    sources = []
    for name, entry in sorted(real.items()):
        if not isinstance(entry, dict):
            continue
        packages = entry.get("packages") if isinstance(entry.get("packages"), dict) else {}
        sources.append(
            RealSource(
                str(name),
                _num(entry.get("pairs")),
                _num(entry.get("pages")),
                str(entry.get("licence", "")),
                tuple(f"{p} {v}" for p, v in sorted(packages.items())),
            )
        )
    corpus = train.get("corpus") if isinstance(train.get("corpus"), dict) else {}
    return TrainingSummary(
        tuple(sources),
        _num(corpus.get("n_examples")),
        _num(corpus.get("variant_share"), float),
        _num(card.get("step")),
        sessions_of(card),
        scores_of(card),
        averaged_steps(card),
    )


# Which packages each committed corpus comes from (MANIFEST.json names the packages and their versions).
PACKAGES_OF = {
    "libreoffice": ("libreoffice-help-en-us", "libreoffice-help-fr"),
    "handbook": ("debian-handbook",),
    "gnome": ("gnome-user-docs",),
    "apps": HELP_PACKAGES,
    "kde": KDE_PACKAGES,
    "ui": tuple(CATALOGUES),
    "gimp": ("gimp-help-en", "gimp-help-fr"),
    "everyday": (*WESNOTH_PACKAGES, "gcompris-qt-data"),
    "everyday_words": ("dict-freedict-eng-fra",),
    "games": tuple(GAME_CATALOGUES),
    "objects": (*OBJECT_CATALOGUES, STAMPS_PACKAGE),
    "dialogue": (*DIALOGUE_CATALOGUES, HEDGEWARS_PACKAGE, FREECOL_PACKAGE),
    "stories": tuple(STORY_CATALOGUES),
    # English → Chinese (data/zh/, scripts/build_zh_corpus.py)
    "zh/libreoffice": ("libreoffice-help-en-us", "libreoffice-help-zh-cn"),
    "zh/everyday": WESNOTH_PACKAGES,
    "zh/gimp": ("gimp-help-en", "gimp-help-zh-cn"),
    "zh/gnome": ("gnome-user-docs",),
    "zh/apps": HELP_PACKAGES,
    "zh/ui": (*HELP_PACKAGES, *CATALOGUES),
    "zh/objects": (*OBJECT_CATALOGUES, STAMPS_PACKAGE),
    "zh/docs": ("debian-handbook", *REFERENCE_PACKAGES),
    "zh/guides": GUIDES_PACKAGES,
    "zh/tutorials": (TUTORIALS[0],),
    "zh/office_ui": (OFFICE_UI[0],),
    "zh/itil": ITIL_PACKAGES,
    "zh/kicad": KICAD_PACKAGES,
    "zh/graphics": GRAPHICS_PACKAGES,
}


def real_data_entry(names: tuple[str, ...] | list[str], manifest_path: str | Path) -> dict[str, Any]:
    """The card's ``real_data`` entry for the corpora a run trained on, from the corpus MANIFEST.json."""
    manifest = json.loads(Path(manifest_path).read_text(encoding="utf-8"))
    out = {}
    for name in names:
        info = manifest["files"][f"{name.rsplit('/', 1)[-1]}.tsv.gz"]  # zh/everyday: data/zh/MANIFEST.json
        pages = info.get("pages_by_split", {})  # Tatoeba's exports have sentences, no pages
        out[name] = {
            "pairs": info["by_split"]["train"],
            "pages": pages.get("train", 0),
            "held_out_pages": {s: n for s, n in pages.items() if s != "train"},
            "licence": info["licence"],
            "packages": {p: manifest["packages"][p] for p in PACKAGES_OF.get(name, ())},
        }
    return out


def public_figures(card: dict[str, Any]) -> tuple[PublicFigure, ...]:
    """The card's greedy figures on the public test sets (public_eval), each beside opus-mt's published figure
    for the same set and measure: chrF into French, BLEU (Chinese tokenizer) into Chinese."""
    greedy = _dict(_dict(card).get("public_eval")).get("greedy")
    target = target_language(card) or "fr"
    out = []
    for name, fig in sorted(_dict(greedy).items()):
        published = OPUS_MT.get((target, name))
        metric = published.metric if published else ("bleu" if target == "zh" else "chrf")
        ours = _metric(fig, metric)
        if ours is not None:
            out.append(PublicFigure(name, metric, ours, _num(_dict(fig).get("n_sentences")), published))
    return tuple(out)
