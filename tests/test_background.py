"""The background lane (pages/_ui/background.py) is bounded, never recomputes an evicted value in a loop, and
never answers (None, None) (issue 60, fault 6); it stops with the server (fault 7)."""

from __future__ import annotations

import threading
import time

import pytest

from pages._ui import background, cache
from pages._ui.lru import BoundedCache

CALLS: list[int] = []
GATE = threading.Event()


def counted(n: int, progress) -> int:
    CALLS.append(n)
    progress(1, 1)
    return n * 10


def gated(n: int, progress) -> int:
    for i in range(200):
        GATE.wait(0.01)
        if GATE.is_set():
            return n
        progress(i, 200)
    return n


@pytest.fixture
def lane(monkeypatch):
    shared: BoundedCache = BoundedCache(64, 2**20)
    monkeypatch.setattr(cache, "results", lambda: shared)
    monkeypatch.setattr(background, "_jobs", {})
    monkeypatch.setattr(background, "_finished", background.OrderedDict())
    CALLS.clear()
    GATE.clear()
    yield shared
    GATE.set()
    background.drain(5)


@pytest.mark.timeout(60)
def test_a_value_evicted_before_the_page_reruns_is_not_computed_again(lane):
    value, job = background.start(counted, 1)
    assert value is None and job is not None
    assert job.future.result(5) == 10
    lane.clear()  # another session's work evicted it before this page reran
    for _ in range(3):
        value, job = background.start(counted, 1)
        assert (value, job) == (10, None)
    assert CALLS == [1]


@pytest.mark.timeout(60)
def test_start_never_answers_none_twice(lane, monkeypatch):
    """Fault 6: a value evicted between start's two looks gave (None, None), a blank tab."""
    background.start(counted, 2)[1].future.result(5)
    lane.clear()
    monkeypatch.setattr(background, "_finished", background.OrderedDict())  # and the lane forgot it too
    value, job = background.start(counted, 2)
    assert value is not None or job is not None
    assert job.future.result(5) == 20


@pytest.mark.timeout(60)
def test_the_lane_is_bounded_and_says_so(lane, monkeypatch):
    monkeypatch.setattr(background, "MAX_JOBS", 2)
    held = [background.start(gated, n)[1] for n in range(2)]
    value, refused = background.start(gated, 99)
    assert value is None and isinstance(refused.future.exception(0), background.LaneFull)
    assert len(background._jobs) == 2
    GATE.set()
    assert [j.future.result(5) for j in held] == [0, 1]


@pytest.mark.timeout(60)
def test_a_job_no_page_waits_for_stops_at_its_next_report(lane, monkeypatch):
    monkeypatch.setattr(background, "ABANDON_S", 0.05)
    _, job = background.start(gated, 3)
    with pytest.raises(background.Abandoned):
        job.future.result(5)
    time.sleep(0.05)
    assert not background._jobs  # the key is free: a page that comes back asks anew


@pytest.mark.timeout(60)
def test_the_lane_stops_with_the_server(lane, monkeypatch):
    stopping = threading.Event()
    monkeypatch.setattr(background, "_stopping", stopping)
    _, job = background.start(gated, 4)
    stopping.set()  # what shutdown() sets first
    with pytest.raises(background.Abandoned):
        job.future.result(5)


@pytest.mark.timeout(60)
def test_a_job_someone_drains_is_not_abandoned(lane, monkeypatch):
    """drain (tests, scripts) waits as a page's progress bar does: the job it waits for is looked at, not
    abandoned after ABANDON_S (which sent the ablation ranking round a loop of restarts)."""
    monkeypatch.setattr(background, "ABANDON_S", 0.05)
    _, job = background.start(gated, 5)
    threading.Timer(0.3, GATE.set).start()  # the job outlives ABANDON_S six times over
    assert background.drain(5)
    assert job.future.result(0) == 5
