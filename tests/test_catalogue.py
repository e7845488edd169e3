"""The message catalogues: the same keys and placeholders in every language."""

from __future__ import annotations

from pages._ui.i18n import LANGUAGES, catalogue, placeholders


def test_every_language_has_the_same_keys_and_placeholders():
    english = catalogue("en")
    assert len(english) > 100
    for lang in LANGUAGES:
        other = catalogue(lang)
        assert set(other) == set(english), sorted(set(other) ^ set(english))
        for key, template in english.items():
            assert placeholders(other[key]) == placeholders(template), (lang, key)


def test_chinese_uses_the_fields_terms():
    zh = " ".join(catalogue("zh").values())
    for term in ("注意力", "多头注意力", "掩码", "位置编码", "缩放点积"):
        assert term in zh, term
