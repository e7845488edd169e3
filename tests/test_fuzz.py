"""Every page under random links and random typed input (issue 60): Hypothesis drives the app through AppTest with
query strings and sentences a class could paste — Unicode digits, emoji, right-to-left text, control characters,
5,000 characters, nothing — and no page may raise; a refused link value is named in the sidebar.

The fast profile (a few examples a page) is part of the fast subset; the slow one tries many more
(``pytest -m slow tests/test_fuzz.py``).
"""

from __future__ import annotations

import pytest
from apptest import EN, app
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pages._ui.entry import SECTIONS
from transformer.layout import DEFAULT_CHECKPOINT

PAGES = [module for entries in SECTIONS.values() for module, _, _ in entries]
NAMES = ("lang", "ckpt", "text", "beam", "kind", "layer", "head")

ODD = st.sampled_from(
    [
        "²",
        "①",
        "٣",
        "৩",
        "-1",
        "0",
        "99999",
        "1e3",
        " 2",
        "",
        "encoder",
        "cross",
        "decoder",
        "zh",
        "en",
        "..",
        "../../etc",
        "😀🐶",
        "مرحبا بالعالم",
        "שלום",
        "\u202eevil",
        "\x00\x07\x1b[31m",
        "a" * 700,
        "tiny",
        "en-fr",
    ]
)
VALUE = st.one_of(ODD, st.text(max_size=40), st.integers(-5, 200).map(str))
QUERY = st.dictionaries(st.sampled_from(NAMES + ("page", "x")), VALUE, max_size=5)
TEXT = st.one_of(
    st.sampled_from(
        [
            "",
            "   ",
            "The animal didn't cross the street because it was too tired. " * 80,  # about 5,000 characters
            "😀🐶🦓",
            "لم يعبر الحيوان الشارع لأنه كان متعبا",
            "The dog\x00\x07 was\x1b[31m too tired.",
            "² ① ٣ 10²",
            "<script>alert(1)</script>",
            "\u202eThe cat sat.",
        ]
    ),
    st.text(max_size=300),
)

shipped = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="the shipped checkpoint is missing")


def _visit(page: str, query: dict[str, str], text: str | None) -> None:
    """The link is read on a session's first run (the default page's in AppTest, which cannot open a function
    page first), then the page is opened; every run must be clean."""
    at = app()
    at.query_params.update(query)
    if text is not None:
        at.session_state["text"] = text
    at.run()
    assert not at.exception, (PAGES[0], query, repr(text)[:200], at.exception)
    if page != PAGES[0]:
        hashes = [h for h, info in at._registered_pages.items() if info.get("url_pathname") == page]
        at._page_hash = hashes[0]
        at.run()
        assert not at.exception, (page, query, repr(text)[:200], at.exception)
    refused = " ".join(w.value for w in at.sidebar.warning)
    for name in ("beam", "layer", "head"):  # a number that is not a small ASCII one is named as refused
        value = query.get(name)
        if name == "beam" and value is not None and not (value.isascii() and value.isdigit() and 1 <= int(value) <= 8):
            assert "beam" in refused, (query, refused)


def _fuzz(max_examples: int):
    def decorate(fn):
        return settings(
            max_examples=max_examples,
            deadline=None,
            derandomize=True,  # the same examples on every run: a failure reproduces
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )(given(query=QUERY, text=st.one_of(st.none(), TEXT))(fn))

    return decorate


@shipped
@pytest.mark.parametrize("page", PAGES)
@_fuzz(3)
def test_no_link_or_paste_raises_on_any_page(page, query, text):
    _visit(page, query, text)


@shipped
@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
@_fuzz(40)
def test_no_link_or_paste_raises_on_any_page_long(page, query, text):
    _visit(page, query, text)


LECTURE_QUERY = st.dictionaries(st.sampled_from(("join", "teacher", "lang", "text")), VALUE, min_size=1, max_size=3)


def _lecture_visit(monkeypatch, query: dict[str, str]) -> None:
    """In lecture mode (a teacher key set), a link's join code and teacher key, whatever they hold, never raise: a
    wrong key is refused in words and leaves no role, an unknown code is refused in words."""
    from pages._ui import lecture, roles

    monkeypatch.setenv(roles.KEY_ENV, "fuzz-teacher-key-0123456789")
    monkeypatch.setattr(lecture, "SIGNALS", ROOT / "test-artifacts" / "lecture-signals")
    at = app()
    at.query_params.update(query)
    at.run()
    assert not at.exception, (query, at.exception)
    assert roles.ROLE not in at.session_state or at.session_state[roles.ROLE] is not roles.Role.TEACHER
    errors = " ".join(e.value for e in at.sidebar.error)
    if query.get("teacher") is not None:
        assert EN("lecture.refused.key") in errors, (query, errors)
    if "join" in query:
        assert lecture.LECTURE not in at.session_state  # no lecture is open: nothing to join
        assert EN("lecture.refused.unknown_code") in errors, (query, errors)


@shipped
@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(query=LECTURE_QUERY)
def test_no_join_code_or_teacher_key_in_a_link_raises(monkeypatch, query):
    _lecture_visit(monkeypatch, query)


@shipped
@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(query=LECTURE_QUERY)
def test_no_join_code_or_teacher_key_in_a_link_raises_long(monkeypatch, query):
    _lecture_visit(monkeypatch, query)
