"""The batcher: one padded pass for the sessions that ask together, each result equal to the unbatched one."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch
from conftest import ROOT, subprocess_env

from transformer import Transformer, TransformerConfig
from transformer.analysis import Analysis, analyse
from transformer.checkpoint import load_checkpoint
from transformer.layout import DEFAULT_CHECKPOINT
from transformer.options import CallOptions, HeadMask
from transformer.serving import Batcher, analyse_batch
from transformer.tokenizer import Tokenizer

CORPUS = [
    "the cat sat on the mat",
    "a dog ran in the park today",
    "birds fly over the river",
    "the quick brown fox jumps over the lazy dog",
] * 5
TEXTS = ["the cat sat", "a dog ran in the park today and the cat sat on the mat", "birds", "fox jumps over the dog"]
SHIPPED = [  # the shipped model ends these at different steps, and beam 4 changes the third
    "The dog didn't cross the road because it was too tired.",
    "It is red.",
    "the dog is near the house and it is small .",
    "The plates didn't fit in the drawers because they were too big.",
]


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    tok = Tokenizer.train(CORPUS, vocab_size=60)
    model = Transformer(TransformerConfig.preset("tiny", vocab_size=tok.vocab_size, dropout=0.0)).eval()
    return model, tok


@pytest.fixture(scope="module")
def shipped():
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    return ckpt.model.eval(), ckpt.tokenizer


def same(a: Analysis, b: Analysis) -> None:
    """b is a: ids identical, maps and probabilities to 1e-5, every label the same."""
    assert isinstance(b, Analysis), b
    assert (b.source_ids, b.decoder_ids, b.output_ids) == (a.source_ids, a.decoder_ids, a.output_ids)
    assert (b.text, b.translation, b.truncated, b.n_pieces) == (a.text, a.translation, a.truncated, a.n_pieces)
    assert (b.source_pieces, b.target_pieces, b.output_pieces) == (a.source_pieces, a.target_pieces, a.output_pieces)
    assert b.top_tokens == a.top_tokens
    for name in ("encoder", "decoder", "cross", "top_probs", "output_probs"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        np.testing.assert_allclose(y, x, atol=1e-5, rtol=0, err_msg=name)


def reference(model, tok, texts, beam, options=CallOptions()):
    with torch.inference_mode():
        return [analyse(model, tok, t, beam, options) for t in texts]


@pytest.mark.parametrize("beam", [1, 4])
def test_a_padded_batch_equals_each_sentence_alone_on_a_tiny_random_model(tiny, beam):
    model, tok = tiny
    ref = reference(model, tok, TEXTS, beam)
    assert len({len(a.source_ids) for a in ref}) == len(TEXTS)  # every source has its own length: padding
    with torch.inference_mode():
        got = analyse_batch(model, tok, TEXTS, beam)
    for a, b in zip(ref, got):
        same(a, b)
        assert b.encoder.shape[-1] == len(a.source_ids)  # cut back to the sentence's own length


@pytest.mark.parametrize("beam", [1, 4])
def test_a_padded_batch_equals_each_sentence_alone_on_the_shipped_model(shipped, beam):
    model, tok = shipped
    ref = reference(model, tok, SHIPPED, beam)
    ends = [a.output_ids[-1] for a in ref]
    assert ends == [model.config.eos_id] * len(SHIPPED)  # each translation ends by itself ...
    assert len({len(a.output_ids) for a in ref}) > 1  # ... at a different step: padded decoder inputs
    with torch.inference_mode():
        got = analyse_batch(model, tok, SHIPPED, beam)
    for a, b in zip(ref, got):
        same(a, b)


def test_a_padded_beam_batch_equals_each_sentence_alone_under_another_length_penalty():
    """Dev sentences whose beam-4 translation the length penalty α changes on real-kde-align (the checkpoint
    whose card chose α = 3)."""
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT.parent / "real-kde-align")
    model, tok = ckpt.model.eval(), ckpt.tokenizer
    texts = [
        "The Base service can be invoked in a variety of ways.",
        "It is activated by the method.",
        "Creates a new macro, or deletes the selected macro.",
        "The example below prints all the properties of a document.",
    ]
    with torch.inference_mode():
        ref = [analyse(model, tok, t, 4, alpha=3.0) for t in texts]
        paper = [analyse(model, tok, t, 4).translation for t in texts]
        got = analyse_batch(model, tok, texts, 4, alpha=3.0)
    assert [a.translation for a in ref] != paper
    for a, b in zip(ref, got):
        same(a, b)


def test_beam_4_finds_another_translation_than_greedy_in_the_same_batch():
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT.parent / "real-kde-align")  # whose sentence 2 beam 4 changes
    model, tok = ckpt.model.eval(), ckpt.tokenizer
    with torch.inference_mode():
        greedy = analyse_batch(model, tok, SHIPPED, 1)
        beam = analyse_batch(model, tok, SHIPPED, 4)
    assert greedy[2].translation != beam[2].translation
    assert greedy[0].translation == beam[0].translation


def test_options_that_make_padding_matter_run_each_sentence_alone(tiny):
    model, tok = tiny
    for options in (CallOptions(padding_mask=False), CallOptions(look_ahead_mask=False), CallOptions(window=1)):
        ref = reference(model, tok, TEXTS[:3], 1, options)
        with torch.inference_mode():
            got = analyse_batch(model, tok, TEXTS[:3], 1, options)
        for a, b in zip(ref, got):
            same(a, b)
    heads = CallOptions(head_mask=HeadMask.without(model.config, [("cross", 0, 1), ("encoder", 1, 0)]))
    ref = reference(model, tok, TEXTS, 4, heads)
    with torch.inference_mode():
        got = analyse_batch(model, tok, TEXTS, 4, heads)
    for a, b in zip(ref, got):
        same(a, b)


class Touchy(Tokenizer):
    """A tokenizer that fails on one word, as a request with a bug of its own would."""

    def unknown_words(self, text):
        if "boom" in text:
            raise ValueError("cannot read 'boom'")
        return super().unknown_words(text)


def test_a_failing_request_inside_a_batch_fails_alone_with_its_message(tiny):
    model, tok = tiny
    touchy = Touchy(tok.sp, tok.model_bytes)
    texts = [TEXTS[0], "boom the cat", TEXTS[1]]
    with torch.inference_mode():
        got = analyse_batch(model, touchy, texts, 1)
    assert isinstance(got[1], ValueError) and str(got[1]) == "cannot read 'boom'"
    ref = reference(model, tok, [TEXTS[0], TEXTS[1]], 1)
    same(ref[0], got[0])
    same(ref[1], got[2])

    batcher = Batcher(window_s=0.2)
    futures = [batcher.submit(model, touchy, t) for t in texts]
    with pytest.raises(ValueError, match="cannot read 'boom'"):
        futures[1].result(timeout=60)
    same(ref[0], futures[0].result(timeout=60))
    same(ref[1], futures[2].result(timeout=60))
    assert batcher.batches == [3]  # the three ran as one batch


@pytest.mark.fallback
@pytest.mark.parametrize("stage", ["_join", "_step"])
def test_a_model_that_breaks_the_batch_fails_only_the_request_that_breaks_it(tiny, monkeypatch, stage, caplog):
    """When the padded pass itself raises (the encoder pass of an arriving group, or a decoding step),
    each request in it runs alone and only the guilty one fails."""
    model, tok = tiny
    import transformer.serving.running_batch as running_batch

    real = running_batch.analyse

    def fragile(model, tokenizer, text, beam_size=1, options=CallOptions(), *, alpha):
        if "birds" in text:
            raise RuntimeError("out of memory on 'birds'")
        return real(model, tokenizer, text, beam_size, options, alpha=alpha)

    def broken(*args, **kwargs):
        raise RuntimeError("the padded pass failed")

    monkeypatch.setattr(running_batch, "analyse", fragile)
    monkeypatch.setattr(running_batch.RunningBatch, stage, broken)
    before = running_batch.fallbacks()
    with torch.inference_mode(), caplog.at_level("WARNING", logger=running_batch.__name__):
        got = analyse_batch(model, tok, TEXTS, 1)
    assert [type(g).__name__ for g in got] == ["Analysis", "Analysis", "RuntimeError", "Analysis"]
    assert str(got[2]) == "out of memory on 'birds'"
    # the fallback is never silent: counted once (one padded pass failed) and logged with its cause
    assert running_batch.fallbacks() == before + 1
    assert "the padded pass failed" in caplog.text and "each is analysed alone" in caplog.text


class Spy:
    """analyse_batch, recording every batch it is given."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], int, CallOptions, float]] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, model, tokenizer, texts, beam, options, *, alpha):
        self.gate.wait(30)
        self.calls.append((list(texts), beam, options, alpha))
        return analyse_batch(model, tokenizer, texts, beam, options, alpha=alpha)


def test_requests_that_arrive_together_run_as_one_batch_and_the_same_sentence_once(tiny):
    model, tok = tiny
    spy = Spy()
    batcher = Batcher(window_s=0.3, run=spy)
    results: dict[int, Analysis] = {}

    def session(i: int, text: str) -> None:
        results[i] = batcher.analyse(model, tok, text)

    texts = [TEXTS[0], TEXTS[1], TEXTS[0], TEXTS[2], TEXTS[3]]
    threads = [threading.Thread(target=session, args=(i, t)) for i, t in enumerate(texts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [sorted(c[0]) for c in spy.calls] == [sorted(set(texts))]  # one batch, TEXTS[0] once
    ref = reference(model, tok, texts, 1)
    for i in range(len(texts)):
        same(ref[i], results[i])
    assert results[0] is results[2]


def test_different_models_beams_and_options_go_to_different_batches(tiny, shipped):
    model, tok = tiny
    spy = Spy()
    spy.gate.clear()  # hold the worker so that everything queues
    batcher = Batcher(window_s=0.05, run=spy)
    off = CallOptions(head_mask=HeadMask.without(model.config, [("cross", 0, 1)]))
    futures = [
        batcher.submit(model, tok, TEXTS[0]),
        batcher.submit(model, tok, TEXTS[1], 4),
        batcher.submit(shipped[0], shipped[1], SHIPPED[0]),
        batcher.submit(model, tok, TEXTS[2], 1, off),
        batcher.submit(model, tok, TEXTS[3]),
        batcher.submit(model, tok, TEXTS[0], 4),
        batcher.submit(model, tok, TEXTS[0], 4, alpha=3.0),  # another checkpoint's length penalty: not shared
    ]
    time.sleep(0.2)
    spy.gate.set()
    for f in futures:
        assert isinstance(f.result(timeout=120), Analysis)
    assert futures[-1] is not futures[-2]
    groups = sorted((sorted(texts), beam, opts == off, alpha) for texts, beam, opts, alpha in spy.calls)
    expected = [
        ([TEXTS[0], TEXTS[3]], 1, False, 0.6),
        ([TEXTS[0], TEXTS[1]], 4, False, 0.6),
        ([TEXTS[0]], 4, False, 3.0),
        ([SHIPPED[0]], 1, False, 0.6),
        ([TEXTS[2]], 1, True, 0.6),
    ]
    assert groups == sorted((sorted(texts), *rest) for texts, *rest in expected)


def test_a_batch_is_capped_in_sentences_and_in_pieces(tiny):
    model, tok = tiny
    spy = Spy()
    spy.gate.clear()
    batcher = Batcher(window_s=0.05, max_sentences=3, run=spy)
    texts = [f"the cat sat {'on the mat ' * (i % 3)}{i}" for i in range(7)]
    futures = [batcher.submit(model, tok, t) for t in texts]
    spy.gate.set()
    for f in futures:
        f.result(timeout=60)
    assert [len(c[0]) for c in spy.calls] == [3, 3, 1]

    longest = max(len(tok.source_ids(t)) for t in texts)
    spy2 = Spy()
    spy2.gate.clear()
    capped = Batcher(window_s=0.05, max_pieces=4 * 2 * longest, run=spy2)  # 2 sentences × beam 4
    futures = [capped.submit(model, tok, t, 4) for t in texts]
    spy2.gate.set()
    for f in futures:
        f.result(timeout=120)
    assert all(4 * len(c[0]) * max(len(tok.source_ids(t)) for t in c[0]) <= 8 * longest for c in spy2.calls)
    assert sum(len(c[0]) for c in spy2.calls) == len(texts)
    long_one = Batcher(max_pieces=1)  # a request over the cap still runs, alone
    assert long_one.analyse(model, tok, texts[0]).translation == reference(model, tok, texts[:1], 1)[0].translation


def test_a_session_that_leaves_blocks_nobody(tiny):
    """A caller that never reads its result (its session has gone) does not hold up the next ones."""
    model, tok = tiny
    batcher = Batcher(window_s=0.01)
    batcher.submit(model, tok, TEXTS[1], 4)  # nobody ever waits for this one
    left = threading.Thread(target=lambda: batcher.submit(model, tok, TEXTS[2]))
    left.start()
    left.join()
    got = batcher.analyse(model, tok, TEXTS[3])
    same(reference(model, tok, TEXTS[3:], 1)[0], got)


def test_the_serving_package_does_not_import_streamlit_or_ray():
    code = (
        "import sys, transformer.serving as s; s.Batcher(); s.backend_from_env();"
        "print('streamlit' in sys.modules, 'ray' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), cwd=str(ROOT), timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.slow
def test_five_sessions_through_the_protocol_get_the_serial_answers_through_the_batcher():
    """bench_load at N=5 with the batcher on: each session sees its own serial translation, and no other."""
    code = (
        "import sys; sys.path.insert(0, 'bench'); import bench_load as b;"
        "ref = b.reference(5);"  # serial, unbatched, on a server of its own: the measured one starts cold
        "r = b.run(5, env={'TRANSFORMER_BATCH': '1', 'TRANSFORMER_BATCH_WINDOW_MS': '20'}, expected=ref);"
        "print(r.correct, r.crosstalk)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), cwd=str(ROOT), timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-2:] == ["5", "0"]


def test_a_session_waiting_for_the_batcher_lends_its_work_slot(monkeypatch):
    """With every work slot taken by sessions that wait for the model, another session still runs:
    so more requests than there are slots can meet in one batch."""
    import pages._ui.slots as slots

    monkeypatch.setattr(slots, "_slots", threading.BoundedSemaphore(1))
    inside, done = threading.Event(), threading.Event()

    def waiting_session() -> None:
        with slots.work_slot(), slots.released():
            inside.set()
            done.wait(10)

    t = threading.Thread(target=waiting_session)
    t.start()
    inside.wait(10)
    got = slots._slots.acquire(timeout=5)  # the slot is free while the first session waits
    assert got
    slots._slots.release()
    done.set()
    t.join(10)
    assert slots._slots.acquire(timeout=1)  # and given back once it is done
    slots._slots.release()


def test_the_translation_goes_out_before_the_slot_is_taken_back(monkeypatch):
    """cache.analyse's first (the page's notes and translation) runs while the session's work slot is
    lent, so a batch's sessions show their translations together instead of one slot after another."""
    import pages._ui.slots as slots
    from pages._ui import cache

    monkeypatch.setattr(slots, "_slots", threading.BoundedSemaphore(1))

    seen = []

    class Elsewhere:  # a backend computing in another thread, as the batcher does
        elsewhere = True

        def analyse(self, ckpt, text, beam, options):
            return analyse(ckpt.model, ckpt.tokenizer, text, beam, options)

        def wait_idle(self, timeout_s):
            seen.append(("wait_idle", slots._slots._value))

    monkeypatch.setattr(cache, "_backend", Elsewhere)

    def first(a) -> None:
        free = slots._slots.acquire(blocking=False)
        if free:
            slots._slots.release()
        seen.append((a.translation, free))

    with slots.work_slot():
        a = cache.analyse(str(DEFAULT_CHECKPOINT), "The slot test's own sentence.", 1, first=first)
        assert not slots._slots.acquire(blocking=False)  # the page holds its slot again afterwards
    # the translation first, then (slot still lent) the page waits for the model's other sentences
    assert seen == [(a.translation, True), ("wait_idle", 1)]


def test_the_environment_chooses_the_backend(monkeypatch):
    from transformer.serving import BatcherBackend, Direct, backend_from_env

    monkeypatch.delenv("TRANSFORMER_RAY_ADDRESS", raising=False)
    monkeypatch.setenv("TRANSFORMER_BATCH", "0")
    direct = backend_from_env()
    monkeypatch.setenv("TRANSFORMER_BATCH", "1")
    batched = backend_from_env()
    assert isinstance(direct, Direct) and isinstance(batched, BatcherBackend)
    assert (direct.elsewhere, batched.elsewhere) == (False, True)
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    same(direct.analyse(ckpt, SHIPPED[1], 4), batched.analyse(ckpt, SHIPPED[1], 4))


@pytest.mark.parametrize("beam", [1, 4])
def test_a_marian_shaped_model_that_starts_with_its_pad_id_batches_the_same(beam):
    """opus-mt starts the decoder with its pad id (and uses swish and an output bias): the padded
    decoder inputs then begin with the very id they are padded with."""
    tok = Tokenizer.train(CORPUS, vocab_size=60)
    torch.manual_seed(1)
    config = TransformerConfig.preset(
        "tiny", vocab_size=tok.vocab_size, dropout=0.0, bos_id=0, activation="swish", output_bias=True
    )
    model = Transformer(config).eval()
    with torch.no_grad():
        model.generator.bias.normal_()
    ref = reference(model, tok, TEXTS, beam)
    assert all(a.decoder_ids[0] == config.pad_id for a in ref)
    with torch.inference_mode():
        got = analyse_batch(model, tok, TEXTS, beam)
    for a, b in zip(ref, got):
        same(a, b)


def test_the_worker_runs_with_its_own_thread_count_one_for_a_batch_of_one_and_the_callers_keep_theirs(tiny):
    model, tok = tiny
    seen = []

    def spy(model, tokenizer, texts, beam, options, *, alpha):
        seen.append(torch.get_num_threads())
        return [f"ok {t}" for t in texts]

    before = torch.get_num_threads()
    batcher = Batcher(window_s=0.05, run=spy, threads=2)
    futures = [batcher.submit(model, tok, t) for t in TEXTS[:3]]  # together: one batch of three
    assert [f.result() for f in futures] == [f"ok {t}" for t in TEXTS[:3]] and batcher.batches == [3]
    assert batcher.analyse(model, tok, TEXTS[3]) == f"ok {TEXTS[3]}"  # alone: a batch of one
    assert seen == [2, 1] and Batcher(threads=0).threads == 1  # a batch of one runs on one thread
    assert torch.get_num_threads() == before


def test_the_worker_uses_every_core_by_default_up_to_a_cap(monkeypatch):
    import os

    from transformer.serving.batcher import BATCH_THREADS

    monkeypatch.delenv("TRANSFORMER_BATCH_THREADS", raising=False)
    for cores, expected in ((1, 1), (2, 2), (64, BATCH_THREADS)):
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        assert Batcher.from_env().threads == expected
    monkeypatch.setenv("TRANSFORMER_BATCH_THREADS", "1")
    assert Batcher.from_env().threads == 1
    monkeypatch.delenv("TRANSFORMER_BATCH_SINGLE_THREADS", raising=False)
    assert Batcher.from_env().single_threads == 1  # a batch of one: one thread unless told otherwise
    monkeypatch.setenv("TRANSFORMER_BATCH_SINGLE_THREADS", "2")
    assert Batcher.from_env().single_threads == 2


JOINING = [*SHIPPED, "The selected file is saved in the current folder.", "Click the button."]


@pytest.mark.parametrize("beam", [1, 4])
def test_sentences_that_join_a_decoding_batch_get_the_unbatched_answers(shipped, tiny, beam):
    """Continuous batching: sentences added in two groups before the first step, then after 2, 3 and 8
    steps (longer and shorter sources than the running ones, so the cache's rows have empty first slots
    and the source axis widens) each get exactly what they get alone, and each result is there as soon
    as its sentence ends."""
    from transformer.serving import RunningBatch

    for model, tok, texts in ((*shipped, JOINING), (*tiny, TEXTS)):
        ref = reference(model, tok, texts, beam)
        run = RunningBatch(model, tok, beam)
        got, ended = {}, {}
        plan = {0: [texts[:1], texts[1:2]], 2: [texts[2:3]], 3: [texts[3:4]], 8: [texts[4:]]}
        handles, step = [], 0
        with torch.inference_mode():
            while step in plan or run.active or step < max(plan):
                for group in plan.get(step, []):
                    handles += run.add(group)
                run.step()
                step += 1
                for h, a in run.done().items():
                    got[h], ended[h] = a, step
        assert len(got) == len(texts)
        assert not run.sentences and not run.decoding.hyps  # nothing kept once answered
        for h, a in zip(handles, ref):
            same(a, got[h])
        if model is shipped[0]:
            # the second sentence ("It is red.") ends long before the first one does
            assert ended[handles[1]] < ended[handles[0]]


class HeldStep:
    """RunningBatch.step, held at its second call until the test lets it go: requests queue meanwhile."""

    def __init__(self, monkeypatch) -> None:
        import transformer.serving.running_batch as running_batch

        self.reached, self.go, self.calls, self.active = threading.Event(), threading.Event(), 0, []
        real = running_batch.RunningBatch.step

        def step(run) -> None:
            self.calls += 1
            self.active.append(run.active)
            if self.calls == 2:
                self.reached.set()
                self.go.wait(30)
            real(run)

        monkeypatch.setattr(running_batch.RunningBatch, "step", step)


def test_a_request_that_arrives_while_a_batch_decodes_joins_it(shipped, monkeypatch):
    model, tok = shipped
    held = HeldStep(monkeypatch)
    batcher = Batcher(window_s=0.0)
    first = batcher.submit(model, tok, SHIPPED[0])
    assert held.reached.wait(30)  # the first batch is decoding
    later = batcher.submit(model, tok, SHIPPED[1])
    held.go.set()
    got = [first.result(timeout=60), later.result(timeout=60)]
    assert batcher.batches == [2]  # one batch served both
    for a, b in zip(reference(model, tok, SHIPPED[:2], 1), got):
        same(a, b)


def test_a_request_of_another_kind_waiting_stops_a_batch_taking_more(shipped, monkeypatch):
    """A beam-4 request queued before a greedy one: the running greedy batch takes neither, the beam-4
    one runs next, then the greedy one (first come, first served across kinds); caps hold for joiners."""
    model, tok = shipped
    held = HeldStep(monkeypatch)
    batcher = Batcher(window_s=0.0)
    futures = [batcher.submit(model, tok, SHIPPED[0])]
    assert held.reached.wait(30)
    futures += [batcher.submit(model, tok, SHIPPED[1], 4), batcher.submit(model, tok, SHIPPED[2])]
    held.go.set()
    got = [f.result(timeout=120) for f in futures]
    assert batcher.batches == [1, 1, 1]
    ref = [*reference(model, tok, SHIPPED[:1], 1), *reference(model, tok, SHIPPED[1:2], 4)]
    ref += reference(model, tok, SHIPPED[2:3], 1)
    for a, b in zip(ref, got):
        same(a, b)

    held = HeldStep(monkeypatch)
    capped = Batcher(window_s=0.0, max_sentences=2)
    futures = [capped.submit(model, tok, SHIPPED[0])]
    assert held.reached.wait(30)
    futures += [capped.submit(model, tok, t) for t in SHIPPED[1:3]]
    held.go.set()
    for a, f in zip(reference(model, tok, SHIPPED[:3], 1), futures):
        same(a, f.result(timeout=60))
    # the second joined at once; the third only when a place was free: never more than two decoding
    assert capped.batches == [3] and max(held.active) == 2 and held.active[2] == 2


def test_a_new_batch_waits_for_the_requests_on_their_way_and_a_lone_one_does_not(tiny):
    """arriving (the app: page runs not yet at the model) holds a new batch until they have asked."""
    model, tok = tiny
    spy, on_the_way = Spy(), [1]
    batcher = Batcher(window_s=0.0, run=spy, arriving=lambda: on_the_way[0], arriving_s=30)

    def second() -> None:
        time.sleep(0.2)
        batcher.submit(model, tok, TEXTS[1])
        on_the_way[0] = 0

    t = threading.Thread(target=second)
    t.start()
    assert isinstance(batcher.analyse(model, tok, TEXTS[0]), Analysis)
    t.join(10)
    assert [c[0] for c in spy.calls] == [[TEXTS[0], TEXTS[1]]]  # one batch, though 0.2 s apart
    assert isinstance(batcher.submit(model, tok, TEXTS[2]).result(timeout=10), Analysis)  # nobody on the way


def test_pages_on_their_way_to_the_model_are_counted_until_they_wait_for_it():
    import pages._ui.slots as slots

    before = slots.arriving()
    with slots.work_slot():
        assert slots.arriving() == before + 1  # started: on its way
        with slots.released():
            assert slots.arriving() == before  # waiting for the model: arrived
        assert slots.arriving() == before  # drawing its result is not on the way again
    with slots.work_slot():  # a page that never asks for the model
        assert slots.arriving() == before + 1
    assert slots.arriving() == before


def test_the_batcher_says_when_it_is_idle(shipped, monkeypatch):
    model, tok = shipped
    held = HeldStep(monkeypatch)
    batcher = Batcher(window_s=0.0)
    assert batcher.wait_idle(0)
    future = batcher.submit(model, tok, SHIPPED[0])
    assert held.reached.wait(30)
    assert not batcher.wait_idle(0.05)  # decoding
    held.go.set()
    future.result(timeout=60)
    assert batcher.wait_idle(30)


def test_the_continuous_batcher_decodes_through_beam_batch(tiny, monkeypatch):
    """RunningBatch adds maps around BeamBatch's steps; it has no stepping of its own."""
    from transformer.decoding import BeamBatch
    from transformer.serving import analyse_batch

    model, tok = tiny
    calls = []
    real = BeamBatch.step

    def counted(self, capture=None):
        calls.append(len(self.live))
        return real(self, capture)

    monkeypatch.setattr(BeamBatch, "step", counted)
    got = analyse_batch(model, tok, ["The dog is red.", "It is red."], 1)
    assert all(type(g).__name__ == "Analysis" for g in got)
    assert calls and calls[0] == 2


def test_a_page_waits_for_a_work_slot_a_bounded_time_and_says_so(monkeypatch):
    """Issue 60, fault 4: _slots.acquire() waited without a bound; with every slot held, a page now gives up after
    SLOT_WAIT_S with ServerBusy (the app shows common.server_busy), and the slots are all free afterwards."""
    import threading

    from pages._ui import slots

    monkeypatch.setattr(slots, "SLOT_WAIT_S", 0.05)
    monkeypatch.setattr(slots, "_slots", threading.BoundedSemaphore(1))
    hold, done = threading.Event(), threading.Event()

    def holder():
        with slots.work_slot():
            hold.set()
            done.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    hold.wait(5)
    with pytest.raises(slots.ServerBusy):
        with slots.work_slot():
            pass
    assert slots.arriving() == 1  # the holder alone: the refused page is not counted as on its way
    done.set()
    t.join()
    with slots.work_slot():  # free again
        pass
