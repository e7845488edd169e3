"""The one writer of folders (checkpoints, exported Marian models): complete first, then swapped in.

:func:`write_folder` fills a temporary sibling of the destination, syncs it, and only then renames
it into place. With ``overwrite`` it replaces an existing folder only when that folder is itself one
of ours, recognised by its files (:func:`is_our_checkpoint`, :func:`is_our_export`), holds nothing
else, and is neither a link nor the working directory or one of its parents. Anything else is
refused with the reason and nothing is deleted: ``export-marian CKPT --out . --overwrite`` is an
error, not an ``rm -rf``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from .layout import (
    AVERAGE_DIR,
    AVERAGED_DIR,
    MARIAN_SEPARATE_FILES,
    METRICS_FILE,
    RESUME_DIR,
    SNAPSHOT_DIR,
    checkpoint_files,
    inside,
)

EXPORT_MARKER = "transformer_export.json"  # what export-marian writes so that --overwrite may replace it
# everything an exported folder of ours holds (export_marian writes these and nothing else)
EXPORT_FILES = frozenset(
    {
        EXPORT_MARKER,
        "model.safetensors",
        "config.json",
        "generation_config.json",
        "tokenizer_config.json",
        "README.md",
        *MARIAN_SEPARATE_FILES,
    }
)
# what a checkpoint folder may hold besides its required files: extra JSON / safetensors (resume state),
# training logs, its card's README, the training lock, and the snapshots/, last/, average/ and averaged/ folders
CHECKPOINT_SUFFIXES = (".json", ".jsonl", ".safetensors", ".model", ".spm", ".md")
CHECKPOINT_DIRS = frozenset({SNAPSHOT_DIR, RESUME_DIR, AVERAGE_DIR, AVERAGED_DIR})
CHECKPOINT_HIDDEN = frozenset({".train.lock"})
STEP_DIR = re.compile(r"step-\d{6}")  # a snapshot or a kept average: snapshot_dir's names


class OverwriteError(ValueError):
    """A destination that exists and may not be replaced (or replaced without --overwrite)."""


def _strangers(path: Path, allowed: Callable[[os.DirEntry], bool]) -> list[str]:
    with os.scandir(path) as it:
        return sorted(e.name for e in it if not allowed(e))


def is_our_checkpoint(path: Path, *, run_folder: bool = False) -> str | None:
    """None when path is a checkpoint folder holding only what a checkpoint holds, else why it is not.

    Its folders are looked into too: last/ and averaged/ must be checkpoints of ours, snapshots/ and average/
    hold only step-NNNNNN checkpoints of ours, so that a user's ``average/photo.jpg`` is never taken for ours.

    run_folder: a training run's folder before its first final checkpoint is ours too, when it holds what only a
    run writes (metrics.jsonl, or one of those folders) or nothing at all; a folder of a user's notes is not.
    """
    files = checkpoint_files(path)
    if not run_folder and (files is None or not all(inside(path, path / f) for f in files)):
        return "it is not a checkpoint folder (no model.safetensors, config.json, card.json and tokenizer)"

    inner: list[str] = []  # why a folder named like ours is not

    def allowed(e: os.DirEntry) -> bool:
        if e.is_symlink():
            return False
        if e.is_dir():
            reason = _our_subfolder(Path(e.path)) if e.name in CHECKPOINT_DIRS else "other"
            if reason not in (None, "other"):
                inner.append(reason)
            return reason is None
        return e.name in CHECKPOINT_HIDDEN or (not e.name.startswith(".") and e.name.endswith(CHECKPOINT_SUFFIXES))

    others = _strangers(path, allowed)
    if others:
        why = f" ({'; '.join(inner[:3])})" if inner else ""
        return f"it holds files a checkpoint does not: {', '.join(others[:5])}{why}"
    if files is None:  # a run folder: something only a run writes, or nothing but the run's own lock
        with os.scandir(path) as it:
            names = {e.name for e in it} - CHECKPOINT_HIDDEN
        if names and not names & (CHECKPOINT_DIRS | {METRICS_FILE}):
            return f"it holds files no training run wrote: {', '.join(sorted(names)[:5])}"
    return None


def _our_subfolder(path: Path) -> str | None:
    """None when a checkpoint's folder (last/, averaged/, snapshots/, average/) holds only what ours do."""
    if path.name in (RESUME_DIR, AVERAGED_DIR):
        return is_our_checkpoint(path)
    with os.scandir(path) as it:
        for e in it:
            if e.is_symlink() or not e.is_dir() or not STEP_DIR.fullmatch(e.name):
                return f"{path.name}/{e.name} is not a step folder"
            reason = is_our_checkpoint(Path(e.path))
            if reason is not None:
                return f"{path.name}/{e.name}: {reason}"
    return None


def is_our_export(path: Path) -> str | None:
    """None when path is a folder export-marian wrote (its marker, and only the files it writes), else why not."""
    marker = path / EXPORT_MARKER
    if not marker.is_file() or marker.is_symlink():
        return f"it is not a model exported by this project (no {EXPORT_MARKER})"
    others = _strangers(path, lambda e: e.name in EXPORT_FILES and e.is_file(follow_symlinks=False))
    return f"it holds files an export does not: {', '.join(others[:5])}" if others else None


def check_replaceable(path: Path, recognise: Callable[[Path], str | None], what: str) -> None:
    """Raise OverwriteError unless path may be replaced by a new folder of the kind recognise knows."""
    if path.is_symlink():
        raise OverwriteError(f"{path} is a link; refusing to replace it (nothing was deleted)")
    if not path.is_dir():
        raise OverwriteError(f"{path} exists and is not a folder; refusing to replace it (nothing was deleted)")
    here = Path.cwd().resolve()
    real = path.resolve()
    if real == here or real in here.parents or real == Path(real.anchor):
        raise OverwriteError(
            f"refusing to replace {path}: it is the working directory or one of its parents (nothing was deleted)"
        )
    reason = recognise(path)
    if reason is not None:
        raise OverwriteError(
            f"refusing to replace {path} with {what}: {reason}. --overwrite only replaces {what} written by this "
            "project; choose a new --out (nothing was deleted)"
        )


def remove_folder(path: Path, recognise: Callable[[Path], str | None], what: str) -> None:
    """Delete path, only after check_replaceable found it to be a folder of the kind recognise knows."""
    check_replaceable(path, recognise, what)
    shutil.rmtree(path)


def remove_run_part(path: Path) -> None:
    """Delete a folder a training run writes inside its out folder (last/, average/, averaged/, snapshots/ or one
    of their step folders) when it is there, only after check_replaceable found in it nothing a run does not write:
    a user's file put there meanwhile stops the run with the reason instead of being deleted."""
    if path.exists() or path.is_symlink():
        recognise = _our_subfolder if path.name in CHECKPOINT_DIRS else is_our_checkpoint
        remove_folder(path, recognise, "a training run's own folder")


def write_folder(
    path: str | Path,
    fill: Callable[[Path], None],
    *,
    overwrite: bool,
    recognise: Callable[[Path], str | None],
    what: str,
    keep_other_files: bool = False,
) -> Path:
    """Write a folder atomically: fill(tmp) writes every file into a temporary sibling, which is synced and
    renamed to path. An existing path is replaced only with overwrite and when recognise(path) is None (see
    check_replaceable); the old folder is removed only after the new one is in place.

    keep_other_files: carry entries of the old folder that fill did not write into the new one.
    Raises OverwriteError; on any error the temporary folder is removed and path is left as it was.
    """
    path = Path(path)
    if path.name in ("", ".", ".."):
        path = path.resolve()
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise OverwriteError(f"{path} already exists; pass --overwrite (overwrite=True) to replace it")
        check_replaceable(path, recognise, what)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    old: Path | None = None
    moved: list[str] = []
    try:
        fill(tmp)
        for f in tmp.iterdir():
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        if path.exists():
            if keep_other_files:
                for entry in path.iterdir():
                    if not (tmp / entry.name).exists():
                        os.replace(entry, tmp / entry.name)
                        moved.append(entry.name)
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
            os.replace(path, old / path.name)
        os.replace(tmp, path)
    except BaseException:
        if old is not None and not path.exists():  # put the old folder back as it was
            os.replace(old / path.name, path)
            old.rmdir()
        for name in moved:
            if path.is_dir() and (tmp / name).exists():
                os.replace(tmp / name, path / name)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return path
