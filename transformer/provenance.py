"""Where a checkpoint comes from and what it translates, as its card says: trained here or imported from a Marian
folder (:func:`is_imported`), the languages (:func:`language_pair`: an import's own source_lang / target_lang, a
card's explicit ones, else the committed corpora it trained on: ``zh/...`` English → Chinese, the others English →
French; a run on a file of the user's states none), and whether our English → French coreference probe applies.

Only cards are read here: the package's lowest floor, imported by the Marian import/export and by inspection alike.
"""

from __future__ import annotations

import re
from typing import Any

IMPORTED = "imported-marian"  # card.json's "kind" of an imported checkpoint
FRENCH = ("fr", "fra", "fre", "french")


def is_imported(card: Any) -> bool:
    """Whether a checkpoint's card says it was imported from a Marian folder (not trained here)."""
    return isinstance(card, dict) and card.get("kind") == IMPORTED


def stated_target(card: Any) -> str | None:
    """The target language an imported card states ("fr", "de", ...); None when it states none."""
    lang = card.get("target_lang") if isinstance(card, dict) else None
    return lang.strip() if isinstance(lang, str) and lang.strip() else None


def coreference_applies(card: Any) -> bool:
    """Whether our English -> French coreference sentences can probe the model: ours always; an import when
    its target language is French."""
    if not is_imported(card):
        return True
    lang = stated_target(card)
    return lang is not None and re.split(r"[_\-]", lang.lower())[0] in FRENCH


def _code(lang: Any) -> str | None:
    if not isinstance(lang, str) or not lang.strip():
        return None
    return re.split(r"[_\-]", lang.strip().lower())[0]


def language_pair(card: Any) -> tuple[str | None, str | None]:
    """(source, target) language codes of a checkpoint ("en", "zh"), None where the card cannot say."""
    if not isinstance(card, dict):
        return None, None
    src, tgt = _code(card.get("source_lang")), _code(card.get("target_lang"))
    if src or tgt:
        return src, tgt
    if is_imported(card):
        return None, None
    train = card.get("train_config")
    if not isinstance(train, dict):
        return "en", "fr"
    if train.get("data_file"):
        return None, None
    names = train.get("real_data")
    if isinstance(names, list) and names and all(isinstance(n, str) and n.startswith("zh/") for n in names):
        return "en", "zh"
    return "en", "fr"


def target_language(card: Any) -> str | None:
    return language_pair(card)[1]


def pair_label(card: Any) -> str:
    """ "en → zh" (a "?" for a side the card cannot say)."""
    src, tgt = language_pair(card)
    return f"{src or '?'} → {tgt or '?'}"
