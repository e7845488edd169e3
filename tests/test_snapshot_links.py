"""Snapshot links are never listed nor read (issue 35, fault 2): layout.snapshots skips symlinks, and the head
lab's "across training" tab reads only snapshots inside the checkpoints root."""

from __future__ import annotations

from pathlib import Path

from transformer.layout import snapshot_dir, snapshots


def _snap(run: Path, step: int) -> Path:
    path = snapshot_dir(run, step)
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    return path


def test_snapshot_links_are_not_listed(tmp_path):
    run, elsewhere = tmp_path / "root" / "run", tmp_path / "elsewhere"
    real = _snap(run, 100)
    outside = _snap(elsewhere, 200)
    (run / "snapshots" / "step-000200").symlink_to(outside, target_is_directory=True)
    (run / "snapshots" / "step-000300").symlink_to(real, target_is_directory=True)  # even one that stays inside
    assert snapshots(run) == [(100, real)]


def test_a_linked_snapshots_folder_is_not_listed(tmp_path):
    run, elsewhere = tmp_path / "root" / "run", tmp_path / "elsewhere"
    run.mkdir(parents=True)
    _snap(elsewhere, 100)
    (run / "snapshots").symlink_to(elsewhere / "snapshots", target_is_directory=True)
    assert snapshots(run) == []


def test_the_training_tab_reads_only_snapshots_inside_the_root(tmp_path, monkeypatch):
    import pages.headlab as headlab
    from pages._ui import folder

    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    inside, outside = _snap(root / "run", 100), _snap(elsewhere, 200)
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(root))
    folder.refresh_choices()
    # as if a listing had let one through (a link made between the listing and the read, say)
    monkeypatch.setattr(headlab, "snapshots", lambda run: [(100, inside), (200, outside)])
    assert headlab.readable_snapshots(root / "run") == [(100, inside)]
