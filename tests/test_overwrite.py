"""--overwrite replaces only a folder of ours (a checkpoint, an exported model), written completely first
(issue 35, fault 1): `export-marian CKPT --out . --overwrite` once deleted the current directory."""

from __future__ import annotations

import json

import pytest
from marian_fixture import make_marian_folder

from transformer import marian
from transformer.atomic import EXPORT_MARKER
from transformer.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from transformer.cli import main


def _precious(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "thesis.tex").write_text("years of work")
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "corpus.txt").write_text("more work")
    return folder


def _intact(folder):
    assert (folder / "thesis.tex").read_text() == "years of work"
    assert (folder / "data" / "corpus.txt").read_text() == "more work"


def test_export_to_the_working_directory_is_refused(trained_checkpoint, tmp_path, monkeypatch, capsys):
    here = _precious(tmp_path / "work")
    monkeypatch.chdir(here)
    assert main(["export-marian", str(trained_checkpoint), "--out", ".", "--overwrite"]) == 2
    assert "refusing to replace" in capsys.readouterr().err
    _intact(here)
    assert sorted(p.name for p in here.iterdir()) == ["data", "thesis.tex"]


def test_export_over_a_foreign_folder_is_refused(trained_checkpoint, tmp_path, capsys):
    out = _precious(tmp_path / "mine")
    assert main(["export-marian", str(trained_checkpoint), "--out", str(out), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "refusing to replace" in err and EXPORT_MARKER in err
    _intact(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]  # no temporary folder left


def test_export_replaces_its_own_export_only(trained_checkpoint, tmp_path, capsys):
    out = tmp_path / "exported"
    assert main(["export-marian", str(trained_checkpoint), "--out", str(out)]) == 0
    marker = json.loads((out / EXPORT_MARKER).read_text())
    assert marker["checkpoint"] == trained_checkpoint.name
    assert main(["export-marian", str(trained_checkpoint), "--out", str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exported"]
    # a file the user added makes it theirs: refused, nothing deleted
    (out / "notes.txt").write_text("keep me")
    assert main(["export-marian", str(trained_checkpoint), "--out", str(out), "--overwrite"]) == 2
    assert "notes.txt" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "keep me" and (out / "model.safetensors").is_file()


def test_a_failed_export_leaves_the_old_one_whole(trained_checkpoint, tmp_path, monkeypatch):
    out = tmp_path / "exported"
    marian.export_marian(trained_checkpoint, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(marian.exporting, "save_file", boom)
    with pytest.raises(OSError, match="disk full"):
        marian.export_marian(trained_checkpoint, out, overwrite=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exported"]


def test_import_over_a_foreign_folder_is_refused(tmp_path, capsys):
    src = make_marian_folder(tmp_path / "hf" / "tiny-marian")
    out = _precious(tmp_path / "models")
    assert main(["import-marian", str(src), "--out", str(out), "--overwrite"]) == 2
    assert "refusing to replace" in capsys.readouterr().err
    _intact(out)
    assert main(["import-marian", str(src), "--out", str(tmp_path / "ok")]) == 0
    assert main(["import-marian", str(src), "--out", str(tmp_path / "ok"), "--overwrite"]) == 0  # ours: replaced


def test_save_checkpoint_replaces_checkpoints_only(trained_checkpoint, tmp_path):
    ckpt = load_checkpoint(trained_checkpoint)
    out = _precious(tmp_path / "c")
    with pytest.raises(CheckpointError, match="refusing to replace"):
        save_checkpoint(out, ckpt.model, ckpt.tokenizer, {"v": 1}, overwrite=True)
    _intact(out)
    link = tmp_path / "link"
    link.symlink_to(out, target_is_directory=True)
    with pytest.raises(CheckpointError, match="link"):
        save_checkpoint(link, ckpt.model, ckpt.tokenizer, {"v": 1}, overwrite=True)
    _intact(out)
    good = tmp_path / "good"
    save_checkpoint(good, ckpt.model, ckpt.tokenizer, {"v": 1})
    (good / "README.md").write_text("a card")  # what a checkpoint may hold besides its files
    save_checkpoint(good, ckpt.model, ckpt.tokenizer, {"v": 2}, overwrite=True)
    assert load_checkpoint(good).card == {"v": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "good", "link"]


def test_training_over_a_foreign_folder_is_refused_before_it_trains(tmp_path):
    import dataclasses

    from transformer.training import PRESETS, Trainer
    from transformer.training.lock import TrainingError

    out = _precious(tmp_path / "mine")
    with pytest.raises(TrainingError, match="refusing to replace"):
        Trainer(dataclasses.replace(PRESETS["tiny"], steps=2), out, overwrite=True).train()
    _intact(out)
    assert not (out / "snapshots").exists() and not (out / "metrics.jsonl").exists()


def _tiny_tsv(path):
    path.write_text("".join(f"the cat {i}\tle chat {i}\n" for i in range(20)), encoding="utf-8")
    return path


TINY_TRAIN = [
    "--steps",
    "1",
    "--d-model",
    "16",
    "--heads",
    "2",
    "--d-ff",
    "32",
    "--encoder-layers",
    "1",
    "--decoder-layers",
    "1",
    "--no-evaluate",
    "--quiet",
]


@pytest.mark.parametrize("overwrite", [False, True])
def test_train_out_never_deletes_a_users_average_folder(tmp_path, monkeypatch, capsys, overwrite):
    """Issue 60, fault 1 (reproduced): notes/ holding README.md and average/photo.jpg looked like a run folder
    (only .md files and a folder named average/), and the run removed notes/average."""
    monkeypatch.chdir(tmp_path)
    data = _tiny_tsv(tmp_path / "tiny.tsv")
    notes = tmp_path / "notes"
    (notes / "average").mkdir(parents=True)
    (notes / "README.md").write_text("mine")
    (notes / "average" / "photo.jpg").write_text("precious")
    argv = ["train", "--data", str(data), "--out", "notes", *TINY_TRAIN] + (["--overwrite"] if overwrite else [])
    assert main(argv) == 2
    assert "refusing" in capsys.readouterr().err
    assert (notes / "average" / "photo.jpg").read_text() == "precious"
    assert (notes / "README.md").read_text() == "mine"
    assert sorted(p.name for p in notes.iterdir()) == ["README.md", "average"]


def test_train_out_refuses_a_folder_of_notes(tmp_path, monkeypatch, capsys):
    """A folder of a user's own .md / .json files is no run folder: no checkpoint is written among them."""
    monkeypatch.chdir(tmp_path)
    data = _tiny_tsv(tmp_path / "tiny.tsv")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "README.md").write_text("mine")
    (notes / "settings.json").write_text("{}")
    assert main(["train", "--data", str(data), "--out", "notes", *TINY_TRAIN]) == 2
    assert "no training run wrote" in capsys.readouterr().err
    assert sorted(p.name for p in notes.iterdir()) == ["README.md", "settings.json"]


def test_a_run_folder_of_ours_is_still_resumed_and_replaced(tmp_path, monkeypatch):
    """The fix keeps what the check is for: an empty folder trains, and a finished run is replaced with
    --overwrite (its snapshots/ and average/ hold only our step folders)."""
    monkeypatch.chdir(tmp_path)
    data = _tiny_tsv(tmp_path / "tiny.tsv")
    (tmp_path / "run").mkdir()
    base = ["train", "--data", str(data), "--out", "run", *TINY_TRAIN, "--snapshots", "0,1"]
    assert main(base) == 0
    assert main([*base, "--average-every", "1", "--steps", "3", "--overwrite"]) == 0
    assert (tmp_path / "run" / "config.json").is_file()


def test_is_our_checkpoint_looks_inside_its_folders(tmp_path):
    from transformer.atomic import is_our_checkpoint

    run = tmp_path / "run"
    (run / "snapshots" / "step-000001").mkdir(parents=True)
    assert "snapshots/step-000001" in is_our_checkpoint(run, run_folder=True)
    (run / "snapshots" / "step-000001").rmdir()
    (run / "snapshots" / "holiday").mkdir()
    assert "not a step folder" in is_our_checkpoint(run, run_folder=True)
    (run / "snapshots" / "holiday").rmdir()
    assert is_our_checkpoint(run, run_folder=True) is None  # an empty snapshots/: a run that wrote none yet


def test_a_runs_own_folders_are_removed_only_when_they_hold_only_what_a_run_writes(tmp_path):
    from transformer.atomic import OverwriteError, remove_run_part

    run = tmp_path / "run"
    run.mkdir()
    remove_run_part(run / "average")  # not there: nothing to do
    kept = run / "average" / "step-000500"
    kept.parent.mkdir()
    (run / "average" / "photo.jpg").write_text("precious")  # a user's file put in meanwhile
    with pytest.raises(OverwriteError):
        remove_run_part(run / "average")
    assert (run / "average" / "photo.jpg").read_text() == "precious"
    (run / "average" / "photo.jpg").unlink()
    remove_run_part(run / "average")  # only what a run writes (here: nothing left)
    assert not (run / "average").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "last").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OverwriteError):
        remove_run_part(run / "last")  # a link is never followed nor removed
    assert elsewhere.exists() and (run / "last").is_symlink()
