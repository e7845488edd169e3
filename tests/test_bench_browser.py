"""The browser bench's wait: on a timeout it says which sentence, what it waited for and what the page showed
(a fake page object; no browser)."""

import sys
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from browser import REDRAWN, REDRAWN_NOTED, REDRAWN_STATE, RedrawTimeout, wait_redrawn  # noqa: E402

SENTENCE = "The trophy didn't fit in the suitcase because it was too big."
TRANSLATION = "Le trophée ne rentrait pas dans la valise parce qu'il était trop grand."
PIECES = "▁The ▁troph y ▁didn ' t ▁fit ▁in ▁the ▁suit case ▁because ▁it ▁was ▁too ▁big ."


class FakePage:
    """Records the calls; wait_for_function times out (or not), evaluate answers REDRAWN_STATE with `state`."""

    def __init__(self, state: dict | None, times_out: bool = True):
        self.state, self.times_out, self.calls = state, times_out, []

    def wait_for_function(self, expression, arg=None, timeout=None, polling=None):
        self.calls.append(("wait", expression, arg, timeout, polling))
        if self.times_out:
            raise PlaywrightTimeout(f"Page.wait_for_function: Timeout {timeout:.0f}ms exceeded.")

    def evaluate(self, expression, arg=None):
        self.calls.append(("evaluate", expression, arg))
        if self.state is None:
            raise RuntimeError("Target page, context or browser has been closed")
        return self.state


def wait(page, **kw):
    args = dict(sentence=SENTENCE, expected=TRANSLATION, marker=PIECES, min_charts=3, timeout_ms=30_000)
    wait_redrawn(page, **{**args, **kw})


def test_a_redraw_that_holds_returns_quietly():
    page = FakePage(state=None, times_out=False)
    wait(page, note=True)
    assert page.calls == [("wait", REDRAWN_NOTED, [TRANSLATION, PIECES, 3], 30_000, "raf")]


def test_the_timeout_names_the_sentence_what_was_awaited_and_what_the_page_showed():
    old_axes = ["▁The ▁cat ▁didn ' t ▁reach ▁the ▁field ▁because ▁it ▁was ▁too ▁lazy . </s>"] * 2
    page = FakePage({"script": "notRunning", "stale": 0, "shown": True, "charts": 3, "drawn": 3, "axes": old_axes})
    with pytest.raises(RedrawTimeout) as caught:
        wait(page)
    message = str(caught.value)
    assert SENTENCE in message and TRANSLATION in message and PIECES in message  # the sentence, what was awaited
    assert "waited 30 s" in message
    assert "the translation shown" in message and "NOT found on the axes" in message  # what was missing
    assert "▁lazy" in message  # what the axes showed instead
    assert isinstance(caught.value.__cause__, PlaywrightTimeout)
    assert page.calls[-1] == ("evaluate", REDRAWN_STATE, [TRANSLATION, PIECES, 3])
    assert page.calls[0][1] == REDRAWN


def test_the_timeout_says_when_the_translation_never_came():
    page = FakePage({"script": "running", "stale": 2, "shown": False, "charts": 1, "drawn": 0, "axes": []})
    with pytest.raises(RedrawTimeout, match="script running; 2 stale element.*translation NOT shown.*1 visible"):
        wait(page)


def test_a_page_that_is_gone_still_gives_a_clear_message():
    with pytest.raises(RedrawTimeout, match=r"could not be read \(RuntimeError: Target page"):
        wait(FakePage(state=None), sentence=None, expected=None, marker=None, min_charts=2)
