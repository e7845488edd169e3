"""The confidence line: how sure the model was of its own translation, from the probabilities its decoder produced.

At each step the decoder gives every piece of its vocabulary a probability and one piece is produced (the most
probable one when decoding greedily). Two figures summarise a translation:

- the **mean log-probability per piece** of the pieces it produced (0 = certain of every piece; -0.7 ≈ one
  chance in two on average), the quantity a beam search ranks by before its length penalty;
- the **share of pieces below a threshold** (``LOW_PROBABILITY``): the steps where the model was guessing.

``scripts/confidence_vs_chrf.py`` measures on held-out sentences how well these agree with the translation's
quality (sentence chrF against the reference). No torch or streamlit here: the probabilities come as numbers.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..checkpoint import card_number

LOW_PROBABILITY = 0.5  # a piece produced with less than this probability counts as a guess
# mean log-probability per piece at or above which the line reads "sure" / below which "guessing" (between: "partly
# sure"). Label smoothing (0.1) keeps a trained model's surest pieces near 0.9 (log ≈ -0.1). On real-kde-align's
# held-out KDE pages (200 sentences, scripts/confidence_vs_chrf.py) the most confident quarter averaged -0.42 and
# chrF 64.8, the least confident -1.13 and chrF 41.0
SURE_MEAN_LOG_PROB = -0.55
UNSURE_MEAN_LOG_PROB = -1.1
_FLOOR = 1e-12  # a probability of 0 (a piece ruled out) counts as this, so that the mean stays finite


class ConfidenceLevel(enum.Enum):
    SURE = "sure"
    PARTLY = "partly"
    UNSURE = "unsure"


@dataclass(frozen=True)
class Confidence:
    """What the decoder's probabilities say of one translation."""

    mean_log_prob: float  # mean natural log-probability per produced piece (end of sentence included)
    low_share: float  # share of produced pieces whose probability is below threshold
    n_pieces: int
    threshold: float

    @property
    def geometric_mean_prob(self) -> float:
        """exp(mean log-probability): the probability of a typical piece."""
        return math.exp(self.mean_log_prob)

    @property
    def level(self) -> ConfidenceLevel:
        if self.mean_log_prob >= SURE_MEAN_LOG_PROB and self.low_share <= 0.2:
            return ConfidenceLevel.SURE
        if self.mean_log_prob < UNSURE_MEAN_LOG_PROB:
            return ConfidenceLevel.UNSURE
        return ConfidenceLevel.PARTLY


def confidence(piece_probs: Sequence[float] | np.ndarray, threshold: float = LOW_PROBABILITY) -> Confidence | None:
    """The confidence of a translation from the probability of each piece it produced (None if it has none)."""
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
    p = np.asarray(piece_probs, dtype=np.float64).reshape(-1)
    if p.size == 0:
        return None
    if not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0 + 1e-6:
        raise ValueError("piece probabilities must lie between 0 and 1")
    logp = np.log(np.clip(p, _FLOOR, 1.0))
    return Confidence(float(logp.mean()), float((p < threshold).mean()), int(p.size), threshold)


def produced_probs(log_probs: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    """(T,) the probability of each produced token from a decoder's (T, vocab) log-probabilities."""
    lp = np.asarray(log_probs, dtype=np.float64)
    idx = np.asarray(tokens, dtype=np.int64)[: lp.shape[0]]
    return np.exp(lp[np.arange(idx.size), idx])


@dataclass(frozen=True)
class Agreement:
    """How well the line agreed with reality on a checkpoint's held-out sentences, as
    ``scripts/confidence_vs_chrf.py --write`` measured it (the card's "confidence", keyed "corpus/split")."""

    corpus: str  # a committed corpus: "everyday", "zh/everyday"
    split: str
    n_sentences: int
    pearson: float  # mean log-probability per piece against sentence chrF
    least_confident_chrf: float  # mean sentence chrF of the least confident quarter
    most_confident_chrf: float  # and of the most confident quarter


def _bounded(x: Any, low: float, high: float) -> float:
    """A card's number within [low, high] (checkpoint.card_number); anything else raises ValueError."""
    v = card_number(x)
    if v is None or not low <= v <= high:
        raise ValueError(f"{x!r} is not a number within [{low}, {high}]")
    return v


def measured_agreement(card: Mapping[str, Any]) -> Agreement | None:
    """The card's measurement on its largest held-out set (the first of equals); None when the card has none.

    A card is data from a file: an entry that is not the script's shape (four quarters, a whole positive count, a
    Pearson within [-1, 1], chrF within [0, 100], a named corpus) is skipped, never trusted."""
    found = []
    entries = card.get("confidence")
    for key, e in entries.items() if isinstance(entries, Mapping) else ():
        try:
            quarters = e["chrf_by_confidence_quarter"]
            n = e["n_sentences"]
            corpus = e.get("corpus", str(key).rpartition("/")[0])
            split = e.get("split", str(key).rpartition("/")[2])
            if len(quarters) != 4 or isinstance(n, bool) or not isinstance(n, int) or n <= 0:
                continue
            if not (isinstance(corpus, str) and corpus and isinstance(split, str) and split):
                continue
            a = Agreement(
                corpus,
                split,
                n,
                _bounded(e["mean_log_prob_vs_chrf"]["pearson"], -1.0, 1.0),
                _bounded(quarters[0]["chrf"], 0.0, 100.0),
                _bounded(quarters[-1]["chrf"], 0.0, 100.0),
            )
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            continue
        found.append(a)
    return max(found, key=lambda a: a.n_sentences, default=None)
