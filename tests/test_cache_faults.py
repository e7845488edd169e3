"""Issue 35, faults 3, 4 and 7: a peek that never waits, a key released by a failure in any stage, a
bounded wait with a typed error, and keys that see a card update and a changed constant."""

from __future__ import annotations

import importlib.util
import shutil
import threading

import pytest

from pages._ui import cache, probe
from pages._ui.lru import BoundedCache, CacheWaitTimeout
from transformer.checkpoint import update_card
from transformer.layout import DEFAULT_CHECKPOINT


def _in_flight(c: BoundedCache, key) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """A thread computing key in c, stopped inside its computation until `release` is set."""
    started, release = threading.Event(), threading.Event()

    def compute():
        started.set()
        release.wait()
        return {"done": True}

    t = threading.Thread(target=c.get, args=(key, compute))
    t.start()
    started.wait()
    return t, started, release


@pytest.mark.timeout(60)
def test_peek_never_computes_nor_waits_for_a_computation_in_flight():
    c: BoundedCache[dict] = BoundedCache(4, 2**20)
    assert c.peek("k") is None and c.peek("k", 7) == 7 and len(c) == 0
    t, _, release = _in_flight(c, "k")
    assert c.peek("k") is None  # in flight elsewhere: no value, and no wait
    release.set()
    t.join()
    assert c.peek("k") == {"done": True}


@pytest.mark.timeout(60)
def test_the_probe_peek_returns_none_while_the_lane_computes(monkeypatch):
    """An imported model's probe is the background lane's (issue 60, fault 4): a page only peeks at it."""
    from pages._ui import cache

    shared: BoundedCache[dict] = BoundedCache(4, 2**20)
    monkeypatch.setattr(cache, "results", lambda: shared)
    args = ("model", "tokenizer", [1, 2, 3])
    monkeypatch.setattr(probe, "_probe_args", lambda ckpt: args)
    t, _, release = _in_flight(shared, cache.call_key(probe.coreference_evaluation, args, {}))
    assert probe._computed(None) is None  # neither blocks nor leaks a sentinel
    release.set()
    t.join()
    assert probe._computed(None) == {"done": True}


@pytest.mark.timeout(60)
def test_a_failure_while_sizing_the_value_releases_the_key():
    calls = []

    def sizes(value):
        calls.append(value)
        if len(calls) == 1:
            raise ValueError("cannot size")
        return 1

    c: BoundedCache[int] = BoundedCache(4, 2**20, size_of=sizes)
    with pytest.raises(ValueError, match="cannot size"):
        c.get("k", lambda: 1)
    assert c.get("k", lambda: 2) == 2  # the key is free again: computed anew, not waited on for ever
    assert c.peek("k") == 2


@pytest.mark.timeout(60)
def test_a_wait_on_another_computation_is_bounded_and_says_so(monkeypatch):
    monkeypatch.setenv("TRANSFORMER_CACHE_WAIT_S", "0.05")
    c: BoundedCache[dict] = BoundedCache(4, 2**20)
    t, _, release = _in_flight(c, "slow")
    try:
        with pytest.raises(CacheWaitTimeout, match="has not finished") as info:
            c.get("slow", lambda: {"mine": True})
        assert isinstance(info.value, TimeoutError) and info.value.key == "slow"
    finally:
        release.set()
        t.join()
    assert c.get("slow", lambda: {}) == {"done": True}


def test_an_updated_card_is_a_new_checkpoint(tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(DEFAULT_CHECKPOINT, folder, ignore=shutil.ignore_patterns("snapshots", "runs"))
    before = cache.stamp(str(folder))
    first = cache.checkpoint(str(folder))
    update_card(folder, {"h3_marker": 1})
    cache.forget_stamps()
    assert cache.stamp(str(folder)) != before
    assert cache.checkpoint(str(folder)).card.get("h3_marker") == 1
    assert "h3_marker" not in first.card


def _load(path, source: str):
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("h3_memo_source", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scale


def test_the_memo_key_follows_the_functions_constants(tmp_path):
    one = _load(tmp_path / "a.py", "def scale(x):\n    return x * 2\n")
    other = _load(tmp_path / "b.py", "def scale(x):\n    return x * 3\n")
    assert one.__code__.co_code == other.__code__.co_code  # what the key hashed before
    assert cache.call_key(one, (1,), {}) != cache.call_key(other, (1,), {})
    assert cache.call_key(one, (1,), {}) == cache.call_key(one, (1,), {})
