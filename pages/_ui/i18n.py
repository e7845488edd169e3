"""Every text of the app comes from one flat catalogue per language (locales/<lang>.toml).

Keys are dotted names ("explorer.title"); values are ``str.format`` templates. The
catalogues must hold the same keys with the same placeholders (a test checks).
"""

from __future__ import annotations

import string
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

LOCALES = Path(__file__).resolve().parent / "locales"
LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"


def _flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = str(value)
    return flat


@cache
def catalogue(lang: str) -> dict[str, str]:
    """key -> template of one language."""
    with open(LOCALES / f"{lang}.toml", "rb") as fh:
        return _flatten(tomllib.load(fh))


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


class Translator:
    """tr("key", name=value) in one language; an unknown key is an error, never English by accident."""

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
        self.messages = catalogue(self.lang)

    def __call__(self, key: str, **values: Any) -> str:
        template = self.messages[key]
        return template.format(**values)

    def has(self, key: str) -> bool:
        return key in self.messages


def corpus_name(corpus: str, tr: Translator) -> str:
    """A committed corpus's name in the catalogue (realdata.name_kde; zh.name_everyday for zh/everyday), else itself."""
    key = f"zh.name_{corpus[3:]}" if corpus.startswith("zh/") else f"realdata.name_{corpus}"
    return tr(key) if tr.has(key) else corpus


_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*_[]<>~|$"})


def md_literal(text: str) -> str:
    """Text read from a card, shown literally inside markdown: a Debian version's "~" (2.12.23~deb12u1) would start
    a strikethrough, "$" a formula, "[...](...)" a link; each such character is backslash-escaped, and line breaks
    become spaces (a blank line followed by "#" or "-" would start a heading or a list)."""
    return " ".join(str(text).split()).translate(_MARKDOWN)


def md_token(token: str) -> str:
    """A piece of the user's text quoted in markdown ('▁*'), shown literally: its repr, escaped (md_literal)."""
    return md_literal(repr(token))
