"""Everyday example sentences for the sidebar, chosen by computation on held-out text (never by hand).

``scripts/everyday_examples.py`` (and ``scripts/evaluate_zh.py --write``) translate the short sentences of
:func:`held_out_pairs` (Tatoeba's dev split, the sentences typed as a new user would, the everyday corpus's whole
Wesnoth campaigns and GCompris activities: none trained on), score each translation by sentence chrF against the
reference, and keep those :func:`pick` chooses; they go into the card as "everyday_examples", which
:func:`card_examples` reads back for the sidebar.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..evaluate_real import sentence_chrf
from ..serving.running_batch import analyse_batch
from .confidence import confidence

MIN_WORDS, MAX_WORDS = 4, 10
MIN_CHRF = 60.0  # a translation this close to the reference (sentence chrF) counts as translated well
# a Chinese sentence's chrF runs lower than a French one's for as good a translation (character n-grams of a
# script with thousands of characters): the bar for "translated well" is lower than French's
MIN_CHRF_ZH = 40.0


def min_chrf(target: str) -> float:
    """The sentence chrF at which a translation into target counts as translated well."""
    return MIN_CHRF_ZH if target == "zh" else MIN_CHRF


def tatoeba_corpus(target: str) -> str:
    """The committed Tatoeba corpus with references in target: its dev split is where examples come from first."""
    return "zh/tatoeba" if target == "zh" else "tatoeba"


def held_out_pairs(target: str, card: dict | None = None) -> list[tuple[str, str]]:
    """The everyday-like (English, reference) pairs held out of training, references in target ("fr" or "zh"):
    Tatoeba's dev split, the typed sentences, the everyday corpus's dev and test campaigns; with a card, less any
    English sentence its model trained on (a game's "Are you sure about this?" is a Tatoeba training sentence too)."""
    from ..corpus.real import load_real
    from ..corpus.typed import typed_pairs
    from .roles import training_sources

    everyday = "zh/everyday" if target == "zh" else "everyday"
    pairs = (
        load_real("dev", (tatoeba_corpus(target),))
        + typed_pairs(target)
        + [p for split in ("dev", "test") for p in load_real(split, (everyday,))]
    )
    trained = set(training_sources(card) or ()) if card is not None else set()
    return [(s, t) for s, t in pairs if everyday_like(s) and s not in trained]


@dataclass(frozen=True)
class Scored:
    """One held-out sentence, the model's translation, the reference, and how they compare."""

    source: str
    translation: str
    reference: str
    chrf: float  # sentence chrF of translation against reference
    mean_log_prob: float  # the confidence line's mean log-probability per piece

    def to_dict(self) -> dict:
        return asdict(self)


def everyday_like(text: str) -> bool:
    """A short sentence a user might type: MIN_WORDS-MAX_WORDS words, a capital first and a final . ! or ?, and
    no name (no capitalised word after the first, but "I"): no Deoran, no Wesnoth."""
    words = text.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or not text[0].isupper() or text[-1] not in ".!?":
        return False
    return all(not w[:1].isupper() or w.strip(".,!?;:'\"") in ("I", "I'm", "I'll", "I've", "I'd") for w in words[1:])


def pick(
    rows: list[Scored], n: int = 4, min_chrf: float = MIN_CHRF, prefer: frozenset[str] = frozenset()
) -> list[Scored]:
    """The n best-translated everyday-like sentences (chrF at least min_chrf; those in prefer first, then higher
    chrF, then higher confidence, then shorter), no two sharing their first two words."""
    good = [r for r in rows if everyday_like(r.source) and r.chrf >= min_chrf]
    good.sort(key=lambda r: (r.source not in prefer, -r.chrf, -r.mean_log_prob, len(r.source), r.source))
    out, starts = [], set()
    for r in good:
        start = " ".join(r.source.lower().split()[:2])
        if start in starts:
            continue
        starts.add(start)
        out.append(r)
        if len(out) == n:
            break
    return out


def score(model, tokenizer, pairs: list[tuple[str, str]], batch: int = 16) -> list[Scored]:
    """Each (English, reference) pair translated greedily, in batches (as the app's batcher does), with its
    sentence chrF and the translation's confidence (mean log-probability per piece)."""
    rows = []
    for b in range(0, len(pairs), batch):
        chunk = pairs[b : b + batch]
        for (src, ref), a in zip(chunk, analyse_batch(model, tokenizer, [s for s, _ in chunk], 1)):
            if isinstance(a, Exception):
                raise a
            chrf = sentence_chrf(a.translation, ref)
            c = confidence(a.output_probs)
            rows.append(Scored(src, a.translation, ref, round(chrf, 1), round(c.mean_log_prob, 3) if c else -99.0))
    return rows


def choose(model, tokenizer, target: str, card: dict | None, n: int, least: float, limit: int | None = None):
    """The sidebar's examples for a model translating into target: every pair of held_out_pairs (the first limit)
    scored, and the n that pick chooses, Tatoeba's held-out sentences first (issue 61). Returns (rows, chosen)."""
    from ..corpus.real import load_real

    rows = score(model, tokenizer, held_out_pairs(target, card)[:limit])
    tatoeba = frozenset(s for s, _ in load_real("dev", (tatoeba_corpus(target),)))
    return rows, pick(rows, n, least, prefer=tatoeba)


def card_examples(card: dict, n: int = 4) -> list[str]:
    """The English sentences of a card's "everyday_examples" (scripts/everyday_examples.py --write), read
    defensively: at most n, each a short non-empty string."""
    entries = card.get("everyday_examples") if isinstance(card, dict) else None
    out: list[str] = []
    for e in entries if isinstance(entries, list) else []:
        src = e.get("source") if isinstance(e, dict) else None
        if isinstance(src, str) and src.strip() and len(src) <= 200 and src.strip() not in out:
            out.append(src.strip())
    return out[:n]
