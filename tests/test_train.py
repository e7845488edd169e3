from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading

import pytest
import torch
from conftest import ROOT, run_cli, stopped_run, subprocess_env

from transformer.checkpoint import load_checkpoint
from transformer.training import (
    PRESETS,
    CheckpointKind,
    JsonlLogger,
    TrainCallback,
    Trainer,
    TrainingError,
    load_optimizer_state,
    loop,
    noam_lr,
    optimizer_state,
    read_metrics,
)

TINY = dataclasses.replace(PRESETS["tiny"], steps=20)


def test_noam_schedule_warms_up_then_decays():
    lrs = [noam_lr(s, 512, 4000) for s in (1, 2000, 4000, 8000, 16000)]
    assert lrs[0] < lrs[1] < lrs[2] and lrs[2] > lrs[3] > lrs[4]
    assert abs(lrs[2] - 512**-0.5 * 4000**-0.5) < 1e-12


class Recorder(TrainCallback):
    def __init__(self):
        self.steps, self.checkpoints, self.started, self.ended = [], [], False, None

    def on_start(self, trainer):
        self.started = True

    def on_step(self, event):
        self.steps.append(event)

    def on_checkpoint(self, step, path, kind):
        self.checkpoints.append((step, kind))

    def on_end(self, trainer, result):
        self.ended = result


@pytest.mark.slow  # trains or re-measures
def test_callbacks_metrics_log_and_snapshots(tmp_path):
    rec = Recorder()
    out = tmp_path / "run"
    Trainer(TINY, out, [rec, JsonlLogger(out / "metrics.jsonl", every=5)]).train()
    assert rec.started and rec.ended["step"] == 20
    assert [e.step for e in rec.steps] == list(range(1, 21))
    assert rec.steps[-1].loss < rec.steps[0].loss
    assert all(0.0 <= e.accuracy <= 1.0 for e in rec.steps) and rec.steps[-1].accuracy > rec.steps[0].accuracy
    assert all(e.tokens_per_s > 0 for e in rec.steps)
    logged = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in logged] == [5, 10, 15, 20] and "loss" in logged[0]
    assert (0, CheckpointKind.SNAPSHOT) in rec.checkpoints and (10, CheckpointKind.SNAPSHOT) in rec.checkpoints
    assert rec.checkpoints[-1] == (20, CheckpointKind.FINAL)
    log = read_metrics(out / "metrics.jsonl")
    assert [r["step"] for r in log.steps] == [5, 10, 15, 20] and log.probes == []
    assert [r["loss"] for r in log.steps] == [e.loss for e in rec.steps[4::5]]  # the events, as logged
    assert load_checkpoint(out / "snapshots" / "step-000010").card["step"] == 10
    final = load_checkpoint(out)
    assert final.card["step"] == 20 and final.card["train_config"]["steps"] == 20
    assert not (out / "last").exists()


@pytest.mark.slow  # trains or re-measures
def test_existing_checkpoint_needs_overwrite(tmp_path):
    out = tmp_path / "run"
    Trainer(dataclasses.replace(TINY, steps=3), out).train()
    with pytest.raises(TrainingError, match="--overwrite"):
        Trainer(dataclasses.replace(TINY, steps=3), out).train()
    Trainer(dataclasses.replace(TINY, steps=4), out, overwrite=True).train()
    assert load_checkpoint(out).card["step"] == 4


@pytest.mark.slow  # trains or re-measures
def test_interrupted_run_resumes_exactly(tmp_path):
    straight = tmp_path / "straight"
    Trainer(TINY, straight).train()
    out = tmp_path / "interrupted"
    result = stopped_run(TINY, out, 13)
    assert result["stopped"] and result["step"] == 13 and (out / "last").exists()
    assert not (out / "config.json").exists()
    rec = Recorder()
    Trainer(TINY, out, [rec]).train()  # resumes from out/last
    assert rec.steps[0].step == 14
    a, b = load_checkpoint(straight).model.state_dict(), load_checkpoint(out).model.state_dict()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)


def test_training_leaves_the_callers_random_state_alone(tmp_path):
    torch.manual_seed(1234)
    before = torch.get_rng_state()
    Trainer(dataclasses.replace(TINY, steps=2), tmp_path / "run").train()
    assert torch.equal(torch.get_rng_state(), before)


def test_optimizer_state_is_keyed_by_parameter_name(tmp_path):
    from transformer import Transformer, TransformerConfig

    torch.manual_seed(0)
    model = Transformer(TransformerConfig.preset("tiny", vocab_size=30))
    opt = torch.optim.Adam(model.parameters())
    src = torch.randint(4, 30, (2, 5))
    model(src, src).logits.sum().backward()
    opt.step()
    saved = optimizer_state(model, opt)
    assert "encoder_layers.0.self_attn.w_q.weight.exp_avg" in saved

    # the same parameters registered in another order: moments follow the names, not the positions
    class Reordered(Transformer):
        def __init__(self, config):
            super().__init__(config)
            layers = list(self.encoder_layers)
            del self.encoder_layers
            self.encoder_layers = torch.nn.ModuleList(layers)  # now registered after the decoder

    torch.manual_seed(0)
    other = Reordered(model.config)
    other.load_state_dict(model.state_dict())
    assert [n for n, _ in other.named_parameters()] != [n for n, _ in model.named_parameters()]
    opt2 = torch.optim.Adam(other.parameters())
    load_optimizer_state(other, opt2, saved, torch.device("cpu"))
    named = dict(other.named_parameters())
    for name, p in model.named_parameters():
        torch.testing.assert_close(opt2.state[named[name]]["exp_avg"], opt.state[p]["exp_avg"], rtol=0, atol=0)

    # a saved state that does not fit the model fails loudly
    bad = dict(saved)
    bad["encoder_layers.9.norm_1.weight.exp_avg"] = bad.pop("encoder_layers.0.norm_1.weight.exp_avg")
    with pytest.raises(TrainingError, match="lacks"):
        load_optimizer_state(other, torch.optim.Adam(other.parameters()), bad, torch.device("cpu"))
    wrong_shape = dict(saved)
    wrong_shape["src_embed.weight.exp_avg"] = torch.zeros(3)
    wrong_shape.setdefault("src_embed.weight.exp_avg_sq", torch.zeros(3))
    wrong_shape.setdefault("src_embed.weight.step", torch.zeros(1))
    with pytest.raises(TrainingError, match="shape"):
        load_optimizer_state(other, torch.optim.Adam(other.parameters()), wrong_shape, torch.device("cpu"))


@pytest.mark.slow
def test_killed_cli_run_resumes_from_its_last_checkpoint(tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "transformer",
            "train",
            "--preset",
            "tiny",
            "--steps",
            "100000",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=str(ROOT),
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    state = out / "last" / "trainer_state.json"
    try:
        for _ in range(600):
            if state.exists():
                break
            threading.Event().wait(0.1)
        assert state.exists(), "no resume checkpoint was written"
    finally:
        proc.kill()
        proc.wait()
    saved = json.loads(state.read_text())["step"]
    done = run_cli("train", "--preset", "tiny", "--steps", str(saved + 5), "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert load_checkpoint(out).card["step"] == saved + 5
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps[-1] == saved + 5


def test_two_runs_into_one_folder_are_refused(tmp_path):
    out = tmp_path / "run"
    started, release = threading.Event(), threading.Event()

    class Hold(TrainCallback):
        def on_step(self, event):
            started.set()
            release.wait(30)

    t = threading.Thread(target=lambda: Trainer(dataclasses.replace(TINY, steps=2), out, [Hold()]).train())
    t.start()
    try:
        assert started.wait(60)
        with pytest.raises(TrainingError, match="another training run"):
            Trainer(dataclasses.replace(TINY, steps=2), out).train()
    finally:
        release.set()
        t.join()


@pytest.mark.slow
def test_bring_your_own_corpus_and_malformed_lines(tmp_path):
    data = tmp_path / "mine.tsv"
    data.write_text("hello world\tbonjour le monde\nthe cat\tle chat\n" * 20, encoding="utf-8")
    ok = run_cli(
        "train", "--preset", "tiny", "--steps", "3", "--data", str(data), "--out", str(tmp_path / "m"), "--quiet"
    )
    assert ok.returncode == 0, ok.stderr
    bad = tmp_path / "bad.tsv"
    bad.write_text("hello\tbonjour\nthis line has no tab\n", encoding="utf-8")
    res = run_cli(
        "train", "--preset", "tiny", "--steps", "3", "--data", str(bad), "--out", str(tmp_path / "b"), "--quiet"
    )
    assert res.returncode == 2
    assert "line 2" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
def test_torchrun_two_processes_keep_replicas_equal(tmp_path):
    out = tmp_path / "ddp"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            "-m",
            "transformer",
            "train",
            "--preset",
            "tiny",
            "--steps",
            "6",
            "--out",
            str(out),
            "--quiet",
            "--job-lock",  # as the app's runs have: the main rank holds it, the other ranks do not wait on it
            str(tmp_path / "job" / "lock"),
        ],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=str(ROOT),
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    card = load_checkpoint(out).card
    assert card["world_size"] == 2 and card["replicas_equal"] is True and card["step"] == 6


def test_a_step_reports_a_step_result(tmp_path):
    from transformer.training import StepResult

    trainer = Trainer(dataclasses.replace(TINY, steps=1), tmp_path / "run")
    assert trainer.model is None and trainer.optimizer is None  # every attribute exists before train()
    trainer.train()
    idx = trainer.batches.next()
    result = trainer.train_step(idx)
    assert isinstance(result, StepResult)
    _, _, tgt_out = trainer.data.collate(idx)
    assert result.n_tokens == int((tgt_out != trainer.model.config.pad_id).sum()) > 0
    assert 0.0 <= result.accuracy <= 1.0 and result.loss > 0 and result.grad_norm > 0


def test_the_metrics_log_has_one_reader(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(
        '{"step": 10, "loss": 2.5}\n{"step": 10, "probe": {"encoder/pronoun": 0.5}}\n[1, 2]\n{"step": 20, "lo',
        encoding="utf-8",
    )
    log = read_metrics(path)
    assert log.steps == [{"step": 10, "loss": 2.5}]  # the half-written last line is skipped
    assert log.probes == [{"step": 10, "probe": {"encoder/pronoun": 0.5}}]
    assert read_metrics(tmp_path / "missing.jsonl").steps == []


def test_mixed_precision_trains_in_bfloat16_and_keeps_float32_weights(tmp_path, monkeypatch):
    """bfloat16 autocast (the real-coref preset) on a machine that runs it fast: the same loss as float32
    to bf16's precision, float32 weights, optimizer state and checkpoint, and on a CPU attention takes the
    math kernel (its fused one runs its bfloat16 backward several times slower)."""
    monkeypatch.setattr(loop, "bfloat16_is_fast", lambda device: True)  # whatever CPU runs the tests
    config = dataclasses.replace(TINY, steps=1, mixed_precision=True)
    trainer = Trainer(config, tmp_path / "bf16")
    trainer.train()
    idx = trainer.batches.next()
    src, tgt_in, _ = trainer.data.collate(idx)
    seen = []
    original = torch.nn.functional.scaled_dot_product_attention

    def spy(q, *args, **kwargs):
        seen.append(q.dtype)
        return original(q, *args, **kwargs)

    trainer.model.eval()  # no dropout: the two precisions see the same network
    with torch.no_grad():
        exact = trainer.model(src, tgt_in).logits
        with torch.autocast("cpu", dtype=torch.bfloat16), trainer._attention_kernel():
            torch.nn.functional.scaled_dot_product_attention = spy
            try:
                low = trainer.model(src, tgt_in).logits
            finally:
                torch.nn.functional.scaled_dot_product_attention = original
    assert low.dtype == torch.bfloat16 and set(seen) == {torch.bfloat16}
    torch.testing.assert_close(low.float(), exact, atol=0.1, rtol=0.05)
    trainer.model.train()
    result = trainer.train_step(idx)
    assert torch.isfinite(torch.tensor(result.loss)) and result.grad_norm > 0
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())
    assert all(v.dtype == torch.float32 for s in trainer.optimizer.state.values() for v in s.values() if v.dim())
    saved = load_checkpoint(tmp_path / "bf16")
    assert all(p.dtype == torch.float32 for p in saved.model.parameters())
    assert saved.card["train_config"]["mixed_precision"] is True
    assert saved.card["precision"] == "bfloat16 autocast"
    with trainer._attention_kernel():  # a CPU run: the fused kernel is off, the math one on
        assert not torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.math_sdp_enabled()
    assert torch.backends.cuda.flash_sdp_enabled()  # and back on after the step


def test_mixed_precision_stays_float32_where_bfloat16_is_emulated(tmp_path, monkeypatch, capsys):
    """A CPU without AVX512-BF16 or AMX emulates bfloat16 (a real-kde-align step measured 20 s against
    1.4 s in float32 on an AVX2 EPYC), so a mixed-precision preset trains there in float32, with the fused
    attention kernel, and its card says so; the CLI tells the user why."""
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert not loop.bfloat16_is_fast(torch.device("cpu"))
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert loop.bfloat16_is_fast(torch.device("cpu"))
    monkeypatch.setattr(loop, "bfloat16_is_fast", lambda device: False)
    trainer = Trainer(dataclasses.replace(TINY, steps=1, mixed_precision=True), tmp_path / "emulated")
    trainer.train()
    seen = []
    original = torch.nn.functional.scaled_dot_product_attention

    def spy(q, *args, **kwargs):
        seen.append(q.dtype)
        return original(q, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(torch.nn.functional, "scaled_dot_product_attention", spy)
        trainer.train_step(trainer.batches.next())
    assert seen and set(seen) == {torch.float32}
    with trainer._attention_kernel():
        assert torch.backends.cuda.flash_sdp_enabled()
    card = load_checkpoint(tmp_path / "emulated").card
    assert card["train_config"]["mixed_precision"] is True and card["precision"] == "float32"
    from transformer import cli

    monkeypatch.setitem(PRESETS, "tiny", dataclasses.replace(TINY, mixed_precision=True))
    out = tmp_path / "cli"
    assert cli.main(["train", "--preset", "tiny", "--steps", "1", "--out", str(out), "--quiet", "--no-evaluate"]) == 0
    assert "bfloat16 autocast is off" in capsys.readouterr().err
    assert load_checkpoint(out).card["precision"] == "float32"


@pytest.mark.slow  # trains or re-measures
def test_a_time_limit_ends_the_run_complete(tmp_path, monkeypatch):
    """With time_limit_s the loop ends once that much time has passed, and the run is final, not resumable."""
    import transformer.training.loop as loop

    clock = iter(range(10**6))  # a clock that advances one second at every reading
    monkeypatch.setattr(loop.time, "perf_counter", lambda: float(next(clock)))
    out = tmp_path / "run"
    result = Trainer(dataclasses.replace(TINY, time_limit_s=6.0), out).train()
    assert result["time_limited"] and 1 < result["step"] < TINY.steps
    assert (out / "config.json").exists() and not (out / "last").exists()
    card = load_checkpoint(out).card
    assert card["step"] == result["step"] and card["time_limited"] is True
    assert card["train_config"]["time_limit_s"] == 6.0
    # without a limit the same run goes to its steps
    assert "time_limited" not in Trainer(TINY, tmp_path / "full").train()


def test_every_start_and_stop_of_a_resumed_run_is_in_the_card(tmp_path):
    """Issue 61: a run resumed across sessions says in its card when each part ran, from which step to which."""
    import dataclasses

    from conftest import stopped_run

    from transformer.checkpoint import load_checkpoint
    from transformer.training import PRESETS, Trainer

    cfg = dataclasses.replace(PRESETS["tiny"], steps=6, snapshot_steps=(), checkpoint_every=100)
    out = tmp_path / "run"
    assert stopped_run(cfg, out, 3)["stopped"]
    Trainer(cfg, out).train()
    runs = load_checkpoint(out).card["runs"]
    assert [(r["from_step"], r["to_step"]) for r in runs] == [(0, 3), (3, 6)]
    assert all(r["started"] <= r["stopped"] and r["wall_s"] >= 0 and r["device"] == "cpu" for r in runs)
