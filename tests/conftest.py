from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
torch.set_num_threads(min(2, os.cpu_count() or 1))

from transformer import Transformer, TransformerConfig  # noqa: E402


@pytest.fixture(autouse=True)
def no_silent_fallback(request):
    """A batched pass that falls back to one sentence at a time is a bug in the batched path: fail the test
    (unless it is marked `fallback`, provoking one on purpose)."""
    from transformer.serving import fallbacks

    before = fallbacks()
    yield
    if request.node.get_closest_marker("fallback") is None:
        assert fallbacks() == before, "a padded pass fell back to one sentence at a time (see the warning logged)"


def subprocess_env(**extra: str) -> dict[str, str]:
    """The one environment for the subprocesses tests start (CLI runs, servers)."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **extra}


def run_cli(*args: str, timeout: int = 600, **kw) -> subprocess.CompletedProcess:
    """python -m transformer ARGS, from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "transformer", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=str(ROOT),
        timeout=timeout,
        **kw,
    )


@pytest.fixture
def tiny_config() -> TransformerConfig:
    return TransformerConfig.preset("tiny", vocab_size=40, dropout=0.0)


@pytest.fixture
def tiny_model(tiny_config) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config).eval()


@pytest.fixture(scope="session")
def trained_checkpoint(tmp_path_factory) -> Path:
    """A small model trained by the project's own trainer on the generated corpus (seconds)."""
    from transformer.training import PRESETS, Trainer

    out = tmp_path_factory.mktemp("ckpt") / "tiny"
    cfg = dataclasses.replace(PRESETS["tiny"], steps=60)
    Trainer(cfg, out).train()
    return out


@pytest.fixture(scope="session")
def tiny_marian_root(tmp_path_factory):
    """A checkpoints root holding "tiny-marian": a tiny random Hugging Face Marian model, imported once."""
    from marian_fixture import make_marian_folder

    from transformer.cli import main

    src = make_marian_folder(tmp_path_factory.mktemp("hf") / "tiny-marian")
    root = tmp_path_factory.mktemp("root")
    assert main(["import-marian", str(src), "--out", str(root / "tiny-marian")]) == 0
    return root


def stopped_run(cfg, out: Path, step: int) -> dict:
    """Train ``cfg`` into ``out`` and stop it after ``step`` (as the app's Stop does): the stopped run's result."""
    from transformer.training import TrainCallback, Trainer

    stop = threading.Event()

    class StopAt(TrainCallback):
        def on_step(self, event):
            if event.step == step:
                stop.set()

    return Trainer(cfg, out, [StopAt()], stop_event=stop).train()
