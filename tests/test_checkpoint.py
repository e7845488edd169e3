from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys

import pytest
import torch
from conftest import ROOT

from transformer.checkpoint import CheckpointError, load_checkpoint, save_checkpoint


def test_round_trip_is_bit_exact(trained_checkpoint, tmp_path):
    ckpt = load_checkpoint(trained_checkpoint)
    out = save_checkpoint(tmp_path / "copy", ckpt.model, ckpt.tokenizer, ckpt.card)
    again = load_checkpoint(out)
    a, b = ckpt.model.state_dict(), again.model.state_dict()
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
    assert again.config == ckpt.config and again.card == ckpt.card
    assert again.tokenizer.model_bytes == ckpt.tokenizer.model_bytes
    assert again.model.generator.weight is again.model.src_embed.weight


def test_existing_checkpoint_is_not_overwritten(trained_checkpoint, tmp_path):
    ckpt = load_checkpoint(trained_checkpoint)
    save_checkpoint(tmp_path / "c", ckpt.model, ckpt.tokenizer, {"v": 1})
    with pytest.raises(CheckpointError, match="already exists"):
        save_checkpoint(tmp_path / "c", ckpt.model, ckpt.tokenizer, {"v": 2})
    save_checkpoint(tmp_path / "c", ckpt.model, ckpt.tokenizer, {"v": 2}, overwrite=True)
    assert load_checkpoint(tmp_path / "c").card == {"v": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["c"]  # no temporary folders left behind


def _copy(src, dst):
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("snapshots", "*.jsonl", ".train.lock"))
    return dst


def test_corrupt_weights_give_a_clear_error(trained_checkpoint, tmp_path):
    bad = _copy(trained_checkpoint, tmp_path / "bad")
    data = (bad / "model.safetensors").read_bytes()
    (bad / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        load_checkpoint(bad)
    (bad / "model.safetensors").write_bytes(b"\x00" * 3)
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(bad)


def test_config_that_does_not_match_the_weights(trained_checkpoint, tmp_path):
    bad = _copy(trained_checkpoint, tmp_path / "bad")
    cfg = json.loads((bad / "config.json").read_text())
    cfg["d_ff"] *= 2
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="do not match config.json"):
        load_checkpoint(bad)
    cfg["d_ff"] //= 2
    cfg["surprise"] = 1
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="unknown config field"):
        load_checkpoint(bad)
    (bad / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(bad)
    (bad / "config.json").write_text('{"d_model": ' + "9" * 5000 + "}")  # more digits than Python reads
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(bad)


class _Boom:
    def __reduce__(self):
        return (open, ("PICKLE_RAN_MARKER", "w"))


def test_a_pickle_disguised_as_a_checkpoint_never_runs(trained_checkpoint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = _copy(trained_checkpoint, tmp_path / "bad")
    payload = pickle.dumps({"state": _Boom()})
    (bad / "model.safetensors").write_bytes(payload)
    with pytest.raises(CheckpointError, match="not a safetensors file"):
        load_checkpoint(bad)
    # a torch.save zip renamed, too
    torch.save({"x": _Boom()}, bad / "model.safetensors")
    with pytest.raises(CheckpointError):
        load_checkpoint(bad)
    (bad / "tokenizer.model").write_bytes(payload)
    with pytest.raises(CheckpointError):
        load_checkpoint(bad)
    assert not (tmp_path / "PICKLE_RAN_MARKER").exists()


def test_missing_files_and_bad_tokenizer(trained_checkpoint, tmp_path):
    bad = _copy(trained_checkpoint, tmp_path / "bad")
    (bad / "card.json").unlink()
    with pytest.raises(CheckpointError, match="missing card.json"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="not a checkpoint directory"):
        load_checkpoint(tmp_path / "nowhere")


@pytest.mark.slow
def test_package_imports_without_streamlit_or_plotly():
    import pkgutil

    import transformer

    modules = [m.name for m in pkgutil.walk_packages(transformer.__path__, "transformer.") if "__main__" not in m.name]
    assert "transformer.inspection.maps" in modules and "transformer.cli" in modules
    code = (
        "import importlib, sys\n"
        "sys.modules['streamlit'] = None; sys.modules['plotly'] = None\n"  # importing either now fails
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "assert not any(m.split('.')[0] in ('streamlit', 'plotly') for m in sys.modules if sys.modules[m])\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(ROOT))


def test_a_hostile_config_is_refused_before_anything_is_allocated(trained_checkpoint, tmp_path):
    bad = _copy(trained_checkpoint, tmp_path / "bad")
    cfg = json.loads((bad / "config.json").read_text())
    cfg["d_ff"] = 10**9  # would be hundreds of gigabytes if the model were built first
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="do not match config.json"):
        load_checkpoint(bad)


def test_weights_of_the_wrong_dtype_are_refused(trained_checkpoint, tmp_path):
    from safetensors.torch import load_file, save_file

    bad = _copy(trained_checkpoint, tmp_path / "bad")
    state = load_file(str(bad / "model.safetensors"))
    save_file({k: v.double() for k, v in state.items()}, str(bad / "model.safetensors"))
    with pytest.raises(CheckpointError, match="dtype"):
        load_checkpoint(bad)
    # half precision is a float16 snapshot (TrainConfig.snapshot_dtype): read back into the float32 model
    save_file({k: v.half() for k, v in state.items()}, str(bad / "model.safetensors"))
    half = load_checkpoint(bad).model.state_dict()
    assert all(half[k].dtype == torch.float32 and torch.equal(half[k], v.half().float()) for k, v in state.items())
    state = {k: v.clone() for k, v in state.items()}
    next(iter(state.values())).view(-1)[0] = float("nan")
    save_file(state, str(bad / "model.safetensors"))
    with pytest.raises(CheckpointError, match="NaN"):
        load_checkpoint(bad)


def test_the_card_chooses_the_beam_length_penalty(trained_checkpoint, tmp_path):
    """card["decoding"]["alpha"] (scripts/sweep_length_penalty.py --write) is what a beam search uses; without
    one, the paper's 0.6."""
    from transformer.beams import PAPER_ALPHA
    from transformer.checkpoint import update_card

    path = _copy(trained_checkpoint, tmp_path / "c")
    assert "decoding" not in load_checkpoint(path).card and load_checkpoint(path).alpha == PAPER_ALPHA == 0.6
    update_card(path, {"decoding": {"alpha": 3, "beam_size": 4}})
    assert load_checkpoint(path).alpha == 3.0


@pytest.mark.parametrize(
    "entry", [{"alpha": -1}, {"alpha": 11}, {"alpha": "3"}, {"alpha": True}, {"alpha": None}, {}, [3.0], 3.0]
)
def test_a_card_with_an_unusable_length_penalty_is_refused_with_its_name(trained_checkpoint, tmp_path, entry):
    from transformer.checkpoint import update_card

    path = _copy(trained_checkpoint, tmp_path / "c")
    update_card(path, {"decoding": entry})
    with pytest.raises(CheckpointError, match="decoding.alpha"):
        load_checkpoint(path)
    card = json.loads((path / "card.json").read_text(encoding="utf-8"))
    card["decoding"] = {"alpha": float("nan")}  # json writes NaN, and reads it back
    (path / "card.json").write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(CheckpointError, match="decoding.alpha"):
        load_checkpoint(path)
