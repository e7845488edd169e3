"""The batcher's faults (issue 35): no wait without a bound, no silent fallback, no idle references."""

from __future__ import annotations

import gc
import threading
import weakref
from types import SimpleNamespace

import pytest
import torch

from transformer import Transformer, TransformerConfig
from transformer.analysis import Analysis
from transformer.serving import (
    RESULT_TIMEOUT_ENV,
    AnalysisTimeout,
    Batcher,
    BatcherBackend,
    fallbacks,
    result_timeout_s,
)
from transformer.tokenizer import Tokenizer

CORPUS = ["the cat sat on the mat", "a dog ran in the park today", "birds fly over the river"] * 5


def tiny() -> tuple[Transformer, Tokenizer]:
    torch.manual_seed(0)
    tok = Tokenizer.train(CORPUS, vocab_size=60)
    return Transformer(TransformerConfig.preset("tiny", vocab_size=tok.vocab_size, dropout=0.0)).eval(), tok


class Stalled:
    """A whole-batch computation that never answers until released (a stalled worker)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, model, tokenizer, texts, beam, options, *, alpha):
        self.release.wait(30)
        raise RuntimeError("released")


def test_a_stalled_batcher_gives_a_clear_timeout_not_a_hang():
    model, tok = tiny()
    stalled = Stalled()
    batcher = Batcher(window_s=0.0, run=stalled)
    try:
        with pytest.raises(AnalysisTimeout, match=r"the batcher gave no analysis of 'the cat sat' within 0.05 s"):
            batcher.analyse(model, tok, "the cat sat", timeout_s=0.05)
    finally:
        stalled.release.set()


def test_the_backend_bound_comes_from_the_environment(monkeypatch):
    model, tok = tiny()
    stalled = Stalled()
    backend = BatcherBackend(Batcher(window_s=0.0, run=stalled))
    ckpt = SimpleNamespace(model=model, tokenizer=tok, alpha=0.6)
    monkeypatch.setenv(RESULT_TIMEOUT_ENV, "0.05")
    try:
        with pytest.raises(AnalysisTimeout, match=RESULT_TIMEOUT_ENV):
            backend.analyse(ckpt, "a dog ran")
    finally:
        stalled.release.set()


def test_the_timeout_setting_is_checked(monkeypatch):
    monkeypatch.delenv(RESULT_TIMEOUT_ENV, raising=False)
    assert result_timeout_s() == 120
    monkeypatch.setenv(RESULT_TIMEOUT_ENV, "2.5")
    assert result_timeout_s() == 2.5
    for bad in ("soon", "0", "-1"):
        monkeypatch.setenv(RESULT_TIMEOUT_ENV, bad)
        with pytest.raises(ValueError, match=RESULT_TIMEOUT_ENV):
            result_timeout_s()


@pytest.mark.parametrize("beam", [1, 2])
def test_an_idle_batcher_holds_no_model_nor_result(beam):
    """Once idle, the worker keeps no reference to its last batch: the model and the analysis can be freed."""
    model, tok = tiny()
    batcher = Batcher(window_s=0.0)
    before = fallbacks()
    result = batcher.analyse(model, tok, "the cat sat on the mat", beam, timeout_s=60)
    assert isinstance(result, Analysis)
    assert batcher.wait_idle(60)
    assert fallbacks() == before  # it ran batched
    refs = weakref.ref(model), weakref.ref(tok), weakref.ref(result)
    del model, tok, result
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_the_deployment_refuses_a_path_outside_the_root_and_reloads_a_changed_card(tmp_path, monkeypatch):
    """Issue 60, fault 5: the deployment loaded any path a client sent, and knew a checkpoint by its weights'
    mtime alone, so a card changed in place (its α) was never read again."""
    import json
    import shutil

    from transformer.layout import CARD_FILE, DEFAULT_CHECKPOINT, checkpoint_stamp
    from transformer.serving.ray_serve import Analyser, OutsideRoot

    root = tmp_path / "root"
    shutil.copytree(DEFAULT_CHECKPOINT, root / "m", ignore=shutil.ignore_patterns("snapshots"))
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(root))
    worker = Analyser.func_or_class()
    with pytest.raises(OutsideRoot, match="not inside the checkpoints folder"):
        worker._checkpoint(str(DEFAULT_CHECKPOINT), checkpoint_stamp(DEFAULT_CHECKPOINT))
    path = str(root / "m")
    first = worker._checkpoint(path, checkpoint_stamp(path))
    card = json.loads((root / "m" / CARD_FILE).read_text())
    card.setdefault("decoding", {})["alpha"] = 7.5
    (root / "m" / CARD_FILE).write_text(json.dumps(card))
    again = worker._checkpoint(path, checkpoint_stamp(path))
    assert again is not first and again.alpha == 7.5
