"""No leaked processes, files nor memory (issue 35, fault 11): a training job's process is reaped when it
ends and its log is closed when it cannot start; a checkpoint loads without a random model first."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from transformer import jobs


def _state(pid: int) -> str | None:
    """The process's state letter in /proc (Z: a zombie, never reaped), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


@pytest.mark.timeout(60)
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_an_ended_job_is_reaped(tmp_path, monkeypatch):
    real = subprocess.Popen

    def quick(command, **kwargs):  # the job's process, with a short body instead of a training run
        return real([sys.executable, "-c", "import time; time.sleep(0.3)"], **kwargs)

    monkeypatch.setattr(jobs.subprocess, "Popen", quick)
    answers = iter([False])  # no job before; then as if this one took the lock at once
    monkeypatch.setattr(jobs, "running", lambda root: next(answers, True))
    job = jobs.start(tmp_path, "run", ["--preset", "tiny"], 10)
    while _state(job.pid) not in (None, "Z"):
        time.sleep(0.05)
    while _state(job.pid) == "Z":  # a zombie until someone waits for it (before the fix: for ever)
        time.sleep(0.05)
    assert _state(job.pid) is None


def test_a_job_that_cannot_start_closes_its_log(tmp_path, monkeypatch):
    handed = []

    def failing(command, stdout=None, **kwargs):
        handed.append(stdout)
        raise OSError("no such interpreter")

    monkeypatch.setattr(jobs.subprocess, "Popen", failing)
    with pytest.raises(jobs.JobError, match="no such interpreter"):
        jobs.start(tmp_path, "run", ["--preset", "tiny"], 10)
    assert handed and handed[0].closed
    assert not (jobs.job_dir(tmp_path) / "job.json").exists()


def test_loading_builds_no_random_model_first(trained_checkpoint, monkeypatch):
    """The model is made on the meta device and the weights assigned (half the memory of a random
    model plus a copy); every check still runs."""
    from transformer import checkpoint as ckpt_module

    made = []
    real_init = torch.nn.init.normal_

    def spy(tensor, *args, **kwargs):
        made.append(tensor.device.type)
        return real_init(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.nn.init, "normal_", spy)
    monkeypatch.setattr(torch.nn.init, "xavier_uniform_", lambda t, *a, **k: made.append(t.device.type) or t)
    loaded = ckpt_module.load_checkpoint(trained_checkpoint)
    assert "cpu" not in made  # no parameter initialised in memory
    assert all(p.device.type == "cpu" and not p.is_meta for p in loaded.model.parameters())
    assert loaded.model.generator.weight is loaded.model.src_embed.weight or not loaded.config.tie_embeddings
    assert not loaded.model.training
    buffers = dict(loaded.model.named_buffers())
    assert all(not b.is_meta for b in buffers.values())
    # the same numbers as a model built the old way
    again = ckpt_module.Transformer(loaded.config)
    again.load_state_dict(ckpt_module.read_safetensors(trained_checkpoint / "model.safetensors"), strict=False)
    for name, t in again.state_dict().items():
        assert torch.equal(t, loaded.model.state_dict()[name]), name
