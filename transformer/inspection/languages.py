"""Which languages a checkpoint translates between, and the rules that depend on the target language.

- the language pair itself is the card's (:mod:`transformer.provenance`: language_pair, target_language).
- :func:`target_word_groups`: the pieces of a target row grouped into words, by the target's writing.
  Languages written with spaces: a piece marked ``▁`` opens a word (:func:`transformer.tokenizer.word_groups`).
  Chinese has no spaces, so the tokenizer marks a word start only after a space (English names, numbers): there
  pieces are merged where it marks them, and a piece of Chinese characters (or a full-width punctuation mark)
  stays a unit of its own; no word boundary is guessed inside Chinese text.
"""

from __future__ import annotations

import re

from ..tokenizer import SPECIAL_PIECES, word_groups

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_PUNCT = re.compile(r"^[\u3000-\u303f\uff00-\uffef]+$")


def writes_without_spaces(lang: str | None) -> bool:
    """Whether words of the language are not separated by spaces (Chinese, Japanese)."""
    return lang in ("zh", "ja")


def target_word_groups(pieces: list[str], lang: str | None) -> list[list[int]]:
    """Indices of the pieces of each target word (see the module's docstring): the whitespace rule for a
    language written with spaces; for Chinese, a piece marked ▁ or one holding a CJK character or a full-width
    punctuation mark opens a word of its own, and Latin pieces without a mark join the word before them."""
    if not writes_without_spaces(lang):
        return word_groups(pieces)
    groups: list[list[int]] = []
    prev_cjk = True
    for i, p in enumerate(pieces):
        bare = p.lstrip("▁")
        cjk = bool(_CJK.search(bare) or _CJK_PUNCT.match(bare or " "))
        special = p in SPECIAL_PIECES
        if not groups or special or p.startswith("▁") or cjk or prev_cjk or pieces[i - 1] in SPECIAL_PIECES:
            groups.append([i])
        else:
            groups[-1].append(i)
        prev_cjk = cjk or special
    return groups
