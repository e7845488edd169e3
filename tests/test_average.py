"""Checkpoint averaging (transformer/training/average.py; the paper's §6.1): the mean of one model's weights at
different steps, written as a checkpoint that records what was averaged; inputs of different models, too few
inputs or a corrupt one are refused and nothing is written."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from transformer.checkpoint import CheckpointError, _unique_state, load_checkpoint, save_checkpoint
from transformer.cli import main
from transformer.training.average import AVERAGED_FROM, average_checkpoints


def _later(src, dst, step: int, shift: float, dtype=torch.float32):
    """src's model with every weight moved by shift (as if trained on), card step `step`, stored in dtype."""
    ckpt = load_checkpoint(src)
    save_checkpoint(dst, ckpt.model, ckpt.tokenizer, {**ckpt.card, "step": step})
    state = {k: (v + shift).to(dtype) for k, v in _unique_state(ckpt.model).items()}
    save_file(state, str(dst / "model.safetensors"), metadata={"format": "pt"})
    return dst


def test_the_average_is_the_mean_of_each_weight_and_the_card_says_of_what(trained_checkpoint, tmp_path):
    a = _later(trained_checkpoint, tmp_path / "a", 60, 0.0)
    b = _later(trained_checkpoint, tmp_path / "b", 80, 0.5)
    c = _later(trained_checkpoint, tmp_path / "c", 100, 1.0)
    out = average_checkpoints([a, b, c], tmp_path / "avg")
    avg, first, third = (load_file(str(p / "model.safetensors")) for p in (out, a, c))
    for name, tensor in avg.items():
        assert tensor.dtype == torch.float32
        torch.testing.assert_close(tensor, (first[name] + 0.5 * (third[name] - first[name])), atol=1e-6, rtol=0)
    ckpt = load_checkpoint(out)  # a checkpoint like any other: it loads and translates
    assert ckpt.card[AVERAGED_FROM] == [
        {"name": "a", "step": 60},
        {"name": "b", "step": 80},
        {"name": "c", "step": 100},
    ]
    assert ckpt.card["step"] == 100 and ckpt.config == load_checkpoint(c).config
    for name in ("config.json", "tokenizer.model"):
        assert (out / name).read_bytes() == (c / name).read_bytes()


def test_float16_weights_stay_float16_and_a_shipped_folder_keeps_its_other_files(trained_checkpoint, tmp_path):
    a = _later(trained_checkpoint, tmp_path / "a", 60, 0.0, torch.float16)
    b = _later(trained_checkpoint, tmp_path / "b", 80, 0.25, torch.float16)
    (b / "README.md").write_text("the card", encoding="utf-8")
    before = load_file(str(b / "model.safetensors"))
    with pytest.raises(CheckpointError, match="already exists"):
        average_checkpoints([a, b], b)
    assert load_file(str(b / "model.safetensors"))["src_embed.weight"].equal(before["src_embed.weight"])
    average_checkpoints([a, b], b, overwrite=True, keep_other_files=True)  # in place, like checkpoints/en-fr
    avg = load_file(str(b / "model.safetensors"))
    assert all(t.dtype == torch.float16 for t in avg.values())
    torch.testing.assert_close(
        avg["src_embed.weight"].float(), before["src_embed.weight"].float() - 0.125, atol=2e-3, rtol=0
    )
    assert (b / "README.md").read_text(encoding="utf-8") == "the card"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temporary folder left behind


def test_weights_of_different_models_or_one_input_or_a_corrupt_one_are_refused(
    trained_checkpoint, tiny_model, tmp_path
):
    a = _later(trained_checkpoint, tmp_path / "a", 60, 0.0)
    other = save_checkpoint(tmp_path / "other", tiny_model, load_checkpoint(a).tokenizer, {"step": 5})
    with pytest.raises(CheckpointError, match="differ in config.json"):
        average_checkpoints([other, a], tmp_path / "out")
    with pytest.raises(CheckpointError, match="at least two"):
        average_checkpoints([a], tmp_path / "out")
    bad = shutil.copytree(a, tmp_path / "bad")
    data = (bad / "model.safetensors").read_bytes()
    (bad / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        average_checkpoints([bad, a], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_command_line_averages_an_imported_opus_mt_model(tiny_marian_root, tmp_path, capsys):
    """An imported opus-mt model (Marian's source.spm, target.spm, vocab.json): its tokenizer files are compared and
    copied; a folder that is not a checkpoint is an error, not a traceback."""
    src = tiny_marian_root / "tiny-marian"
    b = shutil.copytree(src, tmp_path / "b")
    state = {k: v * 3 for k, v in load_file(str(src / "model.safetensors")).items()}
    save_file(state, str(b / "model.safetensors"), metadata={"format": "pt"})
    assert main(["average", str(src), str(b), "--out", str(tmp_path / "avg")]) == 0
    assert json.loads(capsys.readouterr().out)["out"] == str(tmp_path / "avg")
    avg, one = (load_file(str(p / "model.safetensors")) for p in (tmp_path / "avg", src))
    for name, tensor in one.items():
        torch.testing.assert_close(avg[name], tensor * 2)
    for name in ("source.spm", "target.spm", "vocab.json"):
        assert (tmp_path / "avg" / name).read_bytes() == (src / name).read_bytes()
    assert main(["average", str(src), str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2


def test_a_run_keeps_its_latest_weights_and_writes_their_average(tmp_path):
    """TrainConfig.average_every: the trainer keeps the weights every N steps (the latest average_last - 1), and the
    end of the run writes averaged/, the mean of them and the final weights; the run's own checkpoint stays its
    final weights, and the folder is still one the trainer may overwrite (without the old run's weights)."""
    import dataclasses

    from transformer.training import PRESETS, Trainer
    from transformer.training.average import average_state

    cfg = dataclasses.replace(PRESETS["tiny"], steps=50, average_every=10, average_last=3, snapshot_steps=())
    run = tmp_path / "run"
    Trainer(cfg, run).train()
    kept = sorted((run / "average").iterdir())
    assert [k.name for k in kept] == ["step-000030", "step-000040"]
    averaged = load_checkpoint(run / "averaged")
    steps = [a["step"] for a in averaged.card[AVERAGED_FROM]]
    assert steps == [30, 40, 50] and load_checkpoint(run).card["step"] == 50
    mean, _ = average_state([*kept, run])
    for name, tensor in _unique_state(averaged.model).items():
        torch.testing.assert_close(tensor, mean[name])
    final = _unique_state(load_checkpoint(run).model)
    assert not torch.equal(final["src_embed.weight"], mean["src_embed.weight"])
    # the folder is still ours to overwrite, and a new run over it averages only its own weights
    Trainer(dataclasses.replace(cfg, steps=20), run, overwrite=True).train()
    assert [k.name for k in (run / "average").iterdir()] == ["step-000010"]
    assert [a["step"] for a in load_checkpoint(run / "averaged").card[AVERAGED_FROM]] == [10, 20]
