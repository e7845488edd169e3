"""Every tensor a function builds lives on the model's device (a GPU run must not meet a CPU tensor).

There is no second device here, so the meta device stands in for "not the model's": the default
device is set to meta, so a tensor built without naming the model's device lands on meta, and a
torch-function mode records every op that returns a meta tensor. The model lives on the CPU; the
functions must give the same results as without the patch, and no op may produce a meta tensor.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from transformer.corpus import generate_test
from transformer.decoding import beam_search, greedy_decode, greedy_decode_batch, translate_ids
from transformer.evaluate import coreference_probe, translate_batch
from transformer.training import PRESETS, CheckpointKind, ProbeAtSnapshots, Trainer


class ForeignTensors(TorchFunctionMode):
    """Records the ops that return a tensor on the meta device (the stand-in for a wrong device)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if any(isinstance(t, torch.Tensor) and t.is_meta for t in tree_flatten(out)[0]):
            self.ops.append(getattr(func, "__name__", str(func)))
        return out


def on_a_foreign_default_device(fn):
    """fn() with meta as the default device: (its result, the ops that built meta tensors)."""
    watch = ForeignTensors()
    try:
        with torch.device("meta"), watch:
            result = fn()
    except (RuntimeError, NotImplementedError) as exc:  # a meta tensor met a CPU one, or was read
        pytest.fail(f"a tensor was built off the model's device: {exc} (ops so far: {watch.ops[:5]})")
    return result, watch.ops


@pytest.fixture(scope="module")
def trainer(tmp_path_factory) -> Trainer:
    cfg = dataclasses.replace(PRESETS["tiny"], steps=3, snapshot_steps=(), align_pronoun=1.0)
    t = Trainer(cfg, tmp_path_factory.mktemp("device") / "run")
    t.train()
    return t


@pytest.fixture(scope="module")
def examples(trainer):
    return generate_test(trainer.config.corpus)[:12]


def same(fn):
    """fn() normally and on a foreign default device: the results must agree and no op may go astray."""
    expected = fn()
    got, ops = on_a_foreign_default_device(fn)
    assert ops == []
    return expected, got


def test_decoding_builds_on_the_models_device(trainer, examples):
    model, tok = trainer.model.eval(), trainer.tokenizer
    ids = [tok.source_ids(ex.src) for ex in examples[:4]]
    expected, got = same(lambda: greedy_decode_batch(model, ids, max_new_tokens=8))
    assert got == expected and len(got) == 4
    for beam in (1, 3):
        expected, got = same(lambda b=beam: translate_ids(model, ids[0], beam_size=b, max_new_tokens=8))
        assert got.tokens == expected.tokens and got.decoder_input == expected.decoder_input
        assert not got.log_probs.is_meta
    src = torch.tensor([ids[1]])  # a caller's CPU tensor: the decoders move it to the model
    expected, got = same(lambda: greedy_decode(model, src, 8).tokens)
    assert got == expected
    expected, got = same(lambda: beam_search(model, src, 2, 8).tokens)
    assert got == expected


def test_evaluation_and_the_probe_build_on_the_models_device(trainer, examples):
    model, tok = trainer.model.eval(), trainer.tokenizer
    expected, got = same(lambda: translate_batch(model, tok, [ex.src for ex in examples[:4]], batch_size=2))
    assert got == expected
    expected, got = same(lambda: coreference_probe(model, tok, examples, batch_size=5))
    assert got.n_sentences == expected.n_sentences > 0
    for q, arr in expected.scores.items():
        np.testing.assert_allclose(got.scores[q], arr)


def test_a_training_step_and_the_snapshot_probe_build_on_the_models_device(trainer, tmp_path):
    trainer.model.train()
    idx = trainer.batches.next()
    assert any(trainer.data.alignments[i] for i in idx) or any(trainer.data.alignments)
    state = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    result, ops = on_a_foreign_default_device(lambda: trainer.train_step(idx))
    assert ops == [] and result.n_tokens > 0 and np.isfinite(result.loss)
    assert any(not torch.equal(state[k], v) for k, v in trainer.model.state_dict().items())  # it did step
    # the probe a run started from the app (always --probe) runs at each snapshot
    probe = ProbeAtSnapshots(tmp_path / "metrics.jsonl", n_sentences=8)
    probe.on_start(trainer)
    _, ops = on_a_foreign_default_device(lambda: probe.on_checkpoint(3, tmp_path, CheckpointKind.SNAPSHOT))
    assert ops == [] and '"probe"' in (tmp_path / "metrics.jsonl").read_text()
