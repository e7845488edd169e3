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


def test_large_counts_read_with_thousands_separators_in_every_language():
    """The vocabulary expander counts 41,689 words on en-zh; a bare 41689 is hard to read at a projector."""
    for lang in LANGUAGES:
        texts = catalogue(lang)
        assert "41,689" in texts["sentence.vocabulary"].format(n=41689), lang
        assert "12,345" in texts["realdata.more_words"].format(n=12345), lang
