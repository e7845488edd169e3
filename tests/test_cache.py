"""The shared caches: BoundedCache (the concurrency core), the one size estimator, and keys derived
from what a computation reads (never written by hand)."""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
import pytest
import torch
from apptest import app, figures, run, z_of

from pages._ui import cache, keys
from pages._ui.lru import BoundedCache, size_of
from transformer.analysis import analyse
from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import load_checkpoint
from transformer.inspection.headlab import head_map
from transformer.layout import DEFAULT_CHECKPOINT, snapshots
from transformer.options import CallOptions, HeadMask

# ---- BoundedCache ---------------------------------------------------------------------------------


def test_bounded_by_count_evicts_the_least_recently_used():
    c = BoundedCache(3, 10**9, lambda v: 1)
    for k in "abc":
        c.get(k, lambda k=k: k.upper())
    assert c.get("a", lambda: "recomputed") == "A"  # a is now the most recent
    c.get("d", lambda: "D")
    assert len(c) == 3
    assert c.get("b", lambda: "b again") == "b again"  # b was the least recent: evicted
    assert (c.hits, c.misses) == (1, 5)


def test_bounded_by_bytes_and_a_value_over_the_limit_is_returned_but_not_kept():
    c = BoundedCache(100, 1000, size_of)
    for i in range(5):
        c.get(i, lambda: np.zeros(300, dtype=np.uint8))
    assert c.nbytes <= 1000 and len(c) == 3  # 3 × 300 bytes fit, a 4th would not
    big = c.get("big", lambda: np.zeros(5000, dtype=np.uint8))
    assert big.nbytes == 5000 and "big" not in c._entries and c.nbytes == 900


def test_entries_expire_after_their_ttl(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr("pages._ui.lru.time.monotonic", lambda: now[0])
    c = BoundedCache(10, 10**6, size_of, ttl_s=60)
    calls = []
    compute = lambda: calls.append(1) or len(calls)  # noqa: E731
    assert c.get("k", compute) == 1
    now[0] += 59
    assert c.get("k", compute) == 1
    now[0] += 2  # 61 s after it was computed
    assert c.get("k", compute) == 2
    c.get("other", lambda: 0)
    now[0] += 61
    c.get("fresh", lambda: 0)  # adding evicts what has expired
    assert set(c._entries) == {"fresh"}


def test_every_expired_entry_is_evicted_not_only_the_least_recently_used(monkeypatch):
    """Issue 60, fault 7: eviction looked at the LRU end only, so an old entry that a hit had moved to the other
    end stayed (and held its bytes) long after its ttl."""
    now = [1000.0]
    monkeypatch.setattr("pages._ui.lru.time.monotonic", lambda: now[0])
    c = BoundedCache(10, 10**6, lambda _: 100, ttl_s=60)
    c.get("old", lambda: 0)
    now[0] += 30
    c.get("young", lambda: 0)
    c.get("old", lambda: 0)  # a hit: "old" is now the most recently used, "young" the least
    now[0] += 31  # "old" expired (61 s), "young" not (31 s)
    c.get("new", lambda: 0)
    assert set(c._entries) == {"young", "new"} and c.nbytes == 200


def test_one_computation_per_key_under_threads():
    c = BoundedCache(10, 10**6, size_of)
    calls, gate = [], threading.Event()

    def compute():
        calls.append(threading.get_ident())
        gate.wait(10)
        return np.arange(4)

    out = []
    threads = [threading.Thread(target=lambda: out.append(c.get("k", compute))) for _ in range(16)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(out) == 16
    assert all(o is out[0] for o in out)  # every session shares the one result


def test_errors_are_not_cached_and_reach_every_waiter():
    c = BoundedCache(10, 10**6, size_of)
    gate = threading.Event()

    def fail():
        gate.wait(10)
        raise ValueError("bad sentence")

    errors = []

    def ask():
        try:
            c.get("k", fail)
        except ValueError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join(10)
    assert errors == ["bad sentence"] * 4
    assert len(c) == 0 and c.get("k", lambda: "fine") == "fine"  # the next call computes again


class Stop(BaseException):
    """What Streamlit raises in a script thread it stops (a rerun, a closed session): not an Exception."""


def test_a_stopped_owner_makes_the_waiters_compute_instead_of_failing():
    c = BoundedCache(10, 10**6, size_of)
    started, gate = threading.Event(), threading.Event()

    def stopped():
        started.set()
        gate.wait(10)
        raise Stop()

    def owner():
        with pytest.raises(Stop):
            c.get("k", stopped)

    t = threading.Thread(target=owner)
    t.start()
    started.wait(10)
    out = []
    waiter = threading.Thread(target=lambda: out.append(c.get("k", lambda: "computed by the waiter")))
    waiter.start()
    time.sleep(0.2)
    gate.set()
    t.join(10)
    waiter.join(10)
    assert out == ["computed by the waiter"]


def test_one_size_estimator_for_every_cache():
    a = np.zeros((2, 3), dtype=np.float32)
    t = torch.zeros(10, dtype=torch.float64)
    assert size_of(a) == 24 and size_of(t) == 80 and size_of("abcd") == 4
    assert size_of([a, a]) == 48 + 16 + 56
    assert size_of({"x": a}) == 1 + 24 + 64
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    with torch.inference_mode():
        an = analyse(ckpt.model.eval(), ckpt.tokenizer, "The dog was too tired.")
    arrays = an.encoder.nbytes + an.decoder.nbytes + an.cross.nbytes + an.top_probs.nbytes
    assert arrays < size_of(an) < arrays + 20_000


# ---- keys from what a computation reads ------------------------------------------------------------


def double(x):
    return x * 2


@pytest.fixture(scope="module")
def shipped():
    return cache.checkpoint(str(DEFAULT_CHECKPOINT))


def test_keys_follow_the_arguments_values(shipped):
    key = lambda *a, **k: cache.call_key(double, a, k)  # noqa: E731
    assert key(np.arange(3)) == key(np.arange(3))
    assert key(np.arange(3)) != key(np.arange(1, 4)) != key(np.arange(3).astype(np.int32))
    assert key(torch.tensor([1, 2])) == key(torch.tensor([1, 2])) != key(torch.tensor([1, 3]))
    assert key([1, 2]) != key((1, 2)) != key([True, 2])
    assert key(CallOptions()) == key(CallOptions()) != key(CallOptions(padding_mask=False))
    off = HeadMask.without(shipped.config, [("cross", 0, 1), ("encoder", 1, 0)])
    same = HeadMask.without(shipped.config, [("encoder", 1, 0), ("cross", 0, 1)])
    assert key(CallOptions(head_mask=off)) == key(CallOptions(head_mask=same))
    assert key(HeadId(AttentionKind.CROSS, 0, 1)) != key(HeadId(AttentionKind.DECODER, 0, 1))
    assert key(shipped.model) == key(shipped.model) != key(shipped.tokenizer)
    assert key(x=1) != key(1)
    assert cache.call_key(double, (1,), {}) != cache.call_key(size_of, (1,), {})


def test_a_cached_checkpoints_card_counts_as_the_checkpoint_and_goes_with_it(shipped):
    import gc
    import json

    key = lambda *a: cache.call_key(double, a, {})  # noqa: E731
    # the card of a checkpoint from cache.checkpoint is keyed by the checkpoint, not hashed by content
    assert key(shipped.card) == key(shipped.card) != key(json.loads(json.dumps(shipped.card)))
    assert key(shipped.card) != key(shipped.model)
    fresh = load_checkpoint(DEFAULT_CHECKPOINT)  # the same files, loaded anew: its card is a plain dict
    assert key(fresh.card) == key(dict(fresh.card)) != key(shipped.card)
    keys._register(fresh, ("checkpoint", "elsewhere", 0.0))
    ids = [id(fresh), id(fresh.model), id(fresh.tokenizer), id(fresh.card)]
    assert all(i in keys._IDENTITY for i in ids)
    del fresh
    gc.collect()
    assert not any(i in keys._IDENTITY for i in ids)  # nothing of it is kept alive


def test_a_lambda_or_an_unknown_type_is_refused(shipped):
    with pytest.raises(TypeError, match="module-level function"):
        cache.memo(lambda c: c, shipped)
    with pytest.raises(TypeError, match="cannot derive a cache key"):
        cache.memo(double, object())
    fresh = load_checkpoint(DEFAULT_CHECKPOINT)  # not loaded through cache.checkpoint: no identity
    with pytest.raises(TypeError, match="cannot derive a cache key"):
        cache.memo(double, fresh.model)


CALLS: list[list[int]] = []


def total(model, ids):
    CALLS.append(list(ids))
    return sum(ids)


def test_memo_computes_once_per_arguments(shipped):
    CALLS.clear()
    assert cache.memo(total, shipped.model, [1, 2]) == 3
    assert cache.memo(total, shipped.model, [1, 2]) == 3
    assert cache.memo(total, shipped.model, [1, 3]) == 4
    assert CALLS == [[1, 2], [1, 3]]


def test_a_views_figure_is_built_once_for_every_session_of_a_sentence_and_language(shipped, monkeypatch):
    from pages._ui import figures
    from pages._ui.i18n import Translator
    from pages._ui.views import Context, OverviewView
    from pages._ui.widgets import shared_figure

    built = []
    real = figures.heads_overview
    monkeypatch.setattr(figures, "heads_overview", lambda *a, **k: built.append(1) or real(*a, **k))
    with torch.inference_mode():
        a = analyse(shipped.model, shipped.tokenizer, "The cow didn't cross the field because it was too lazy.")
        b = analyse(shipped.model, shipped.tokenizer, "The cow didn't cross the field because it was too wide.")
    view = OverviewView(AttentionKind.ENCODER, HeadId(AttentionKind.ENCODER, 1, 2))
    en, zh = Translator("en"), Translator("zh")
    first = shared_figure(view, Context(a, shipped, None), en)
    # another session: its own (equal) analysis object and context, the same figure object, not built again
    copy = dataclasses.replace(a, encoder=a.encoder.copy())
    assert shared_figure(view, Context(copy, shipped, None), en) is first and len(built) == 1
    # what the figure reads makes a new one: the language, the sentence, the highlighted head
    assert shared_figure(view, Context(a, shipped, None), zh) is not first
    shared_figure(view, Context(b, shipped, None), en)
    shared_figure(
        OverviewView(AttentionKind.ENCODER, HeadId(AttentionKind.ENCODER, 0, 0)), Context(a, shipped, None), en
    )
    assert len(built) == 4
    assert first.to_json() == view.figure(Context(a, shipped, None), en).to_json()  # the figure the view draws
    assert size_of(first) > a.encoder.nbytes  # the cache counts a figure by its data


def test_a_cached_analysis_is_keyed_by_the_key_it_was_computed_from(shipped):
    import gc

    text = "The goat didn't cross the bridge because it was too shy."
    a = cache.analyse(str(DEFAULT_CHECKPOINT), text)
    assert keys._identity(a) == ("analysis", *cache.call_key(cache.analyse, (shipped, text, 1, CallOptions()), {}))
    same = dataclasses.replace(a)  # equal values, not the server's object: hashed by content, as any dataclass
    assert keys._identity(same) is None and cache.call_key(double, (same,), {}) != cache.call_key(double, (a,), {})
    i = id(same)
    keys.identify(same, ("analysis", "test"))
    del same
    gc.collect()
    assert i not in keys._IDENTITY  # the entry goes with the value


# ---- issue 15, bug 1: the head lab's "across training" map follows the session's beam ---------------

TEXT = "the dog is near the house and it is small ."  # beam 1 and beam 4 translate it differently


@pytest.mark.slow
def test_two_sessions_with_beam_1_and_beam_4_each_get_their_own_snapshot_map():
    # real-kde-align: three snapshots, and a sentence whose beam-4 translation differs (chosen on it)
    align = DEFAULT_CHECKPOINT.parent / "real-kde-align"
    ckpt = load_checkpoint(align)
    model = ckpt.model.eval()
    with torch.inference_mode():
        greedy, beam = (analyse(model, ckpt.tokenizer, TEXT, b, alpha=ckpt.alpha) for b in (1, 4))
    assert greedy.decoder_ids != beam.decoder_ids and len(greedy.decoder_ids) != len(beam.decoder_ids)
    step, path = snapshots(align)[2]
    snap = load_checkpoint(path).model.eval()
    grids = {}
    for b, a in ((1, greedy), (4, beam)):
        # a cross map: its rows are the decoder's, which the beam changes
        at = run(
            app(
                "headlab",
                text=TEXT,
                beam=b,
                checkpoint=align.name,
                lab_tab="training",
                lab_snapshot=step,
                pick_kind=AttentionKind.CROSS,
            )
        )
        ss = at.session_state
        head = HeadId(ss["pick_kind"], ss["pick_layer"], ss["pick_head"])  # the picker's default head
        assert head.kind is AttentionKind.CROSS
        z = z_of(figures(at)["lab_snapshot_map"]["data"][0])
        with torch.inference_mode():
            expected = head_map(snap, a.source_ids, a.decoder_ids, head)
        assert z.shape == (len(a.decoder_ids), len(a.source_ids))
        np.testing.assert_allclose(z, expected, atol=1e-4)
        grids[b] = z
    assert grids[1].shape != grids[4].shape


def test_a_keys_function_source_is_read_once(monkeypatch):
    """Issue 60, fault 8: every memo and analysis key read its function's source with inspect.getsource (0.6 ms,
    a stat and a tokenisation), several times a page run; the class of 30 was 1.2 times slower for it."""
    import inspect

    from pages._ui import keys

    def fn(x):
        return x + 1

    fn.__module__ = __name__  # a module-level function as far as call_key is concerned
    fn.__qualname__ = "fn"
    calls = []
    real = inspect.getsource
    monkeypatch.setattr(keys.inspect, "getsource", lambda f: calls.append(f) or real(f))
    first = keys.call_key(fn, (1,), {})
    assert [keys.call_key(fn, (1,), {}) for _ in range(5)] == [first] * 5
    assert len(calls) == 1
    fn.__code__ = (lambda x: x + 2).__code__  # new code: read again, and a new key
    assert keys.call_key(fn, (1,), {}) != first and len(calls) == 2
