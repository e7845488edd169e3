"""Where checkpoints live and what a checkpoint directory holds: the one place that knows.

<root>/                      $TRANSFORMER_CHECKPOINTS, else checkpoints/ of the repository
  coref-en-fr/               a checkpoint directory
    model.safetensors        weights (tied matrices stored once)
    config.json              TransformerConfig
    tokenizer.model          sentencepiece model (a protobuf, not a pickle)
                             or, for an imported opus-mt (Marian) model, instead:
                             source.spm, target.spm (sentencepiece) + vocab.json (piece -> id),
                             + target_vocab.json for separate source and target vocabularies
    card.json                how it was trained and what it scores
    metrics.jsonl            the training log, one JSON object per logged step
    snapshots/step-000100/   checkpoints kept during training (to watch heads form)
    last/                    the rolling checkpoint a killed run resumes from
                             (+ optimizer.safetensors, trainer_state.json)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MODEL_FILE, CONFIG_FILE, TOKENIZER_FILE, CARD_FILE = "model.safetensors", "config.json", "tokenizer.model", "card.json"
SOURCE_SPM, TARGET_SPM, VOCAB_FILE, TARGET_VOCAB = "source.spm", "target.spm", "vocab.json", "target_vocab.json"
MARIAN_TOKENIZER_FILES = (SOURCE_SPM, TARGET_SPM, VOCAB_FILE)
MARIAN_SEPARATE_FILES = MARIAN_TOKENIZER_FILES + (TARGET_VOCAB,)  # source and target vocabularies of their own
# one of them, by the files present (the longer Marian set first: it holds the shorter one)
TOKENIZER_SETS = ((TOKENIZER_FILE,), MARIAN_SEPARATE_FILES, MARIAN_TOKENIZER_FILES)
REQUIRED_FILES = (MODEL_FILE, CONFIG_FILE, CARD_FILE)  # plus one tokenizer set
METRICS_FILE = "metrics.jsonl"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_STATE = "trainer_state.json"
RESUME_DIR = "last"
SNAPSHOT_DIR = "snapshots"
AVERAGE_DIR = "average"  # a run's weights kept every TrainConfig.average_every steps, for averaging
AVERAGED_DIR = "averaged"  # the checkpoint averaged from them and the final weights
AVERAGED_FROM = "averaged_from"  # card.json of averaged weights: [{"name": folder, "step": step}, ...], oldest first
ENV_ROOT = "TRANSFORMER_CHECKPOINTS"

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_ROOT = REPO_ROOT / "checkpoints"
DEFAULT_NAME = "en-fr"
DEFAULT_CHECKPOINT = SHIPPED_ROOT / DEFAULT_NAME

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def checkpoints_root() -> Path:
    """The folder the app lists and the training page writes into: $TRANSFORMER_CHECKPOINTS or checkpoints/."""
    return Path(os.environ.get(ENV_ROOT) or SHIPPED_ROOT)


def check_name(name: str) -> str:
    """A new checkpoint's name: letters, digits, '.', '_', '-'; no separators, no '..', not hidden.

    Raises ValueError with the reason.
    """
    if not isinstance(name, str) or not name:
        raise ValueError("a name is needed")
    if "/" in name or "\\" in name or os.sep in name:
        raise ValueError("a name may not contain a path separator")
    if ".." in name:
        raise ValueError("a name may not contain '..'")
    if not _NAME.fullmatch(name):
        raise ValueError("use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    return name


def inside(root: Path, path: Path) -> bool:
    """True when path, with every symlink resolved, lies inside root (or is root)."""
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def checkpoint_stamp(path: str | Path) -> tuple:
    """What identifies a checkpoint's files on disk: (name, mtime_ns, size) of each file it is read from, the
    weights, the card, the config and the tokenizer files (a missing one counts as absent), so that a checkpoint
    rewritten in place or its card updated (α) is loaded again."""
    folder = Path(path)
    names = (MODEL_FILE, CARD_FILE, CONFIG_FILE, *(tokenizer_files(folder) or (TOKENIZER_FILE,)))
    out = []
    for name in names:
        try:
            st_ = (folder / name).stat()
        except OSError:
            out.append((name, None, None))
        else:
            out.append((name, st_.st_mtime_ns, st_.st_size))
    return tuple(out)


def snapshot_dir(run: Path, step: int) -> Path:
    return run / SNAPSHOT_DIR / f"step-{step:06d}"


def snapshots(run: Path) -> list[tuple[int, Path]]:
    """(step, directory) of a run's snapshots, in step order. Links (a linked snapshots/ folder or a linked
    snapshot) are never listed, wherever they lead."""
    folder = run / SNAPSHOT_DIR
    if folder.is_symlink() or not folder.is_dir():
        return []
    found = []
    for p in folder.glob("step-*"):
        if p.is_symlink() or not p.is_dir():
            continue
        try:
            found.append((int(p.name.split("-", 1)[1]), p))
        except ValueError:
            continue
    return sorted(found)


def tokenizer_files(path: Path) -> tuple[str, ...] | None:
    """The tokenizer set a checkpoint directory holds (ours or Marian's), or None when it holds none."""
    return next((names for names in TOKENIZER_SETS if all((path / f).is_file() for f in names)), None)


def checkpoint_files(path: Path) -> tuple[str, ...] | None:
    """Every file a checkpoint directory must hold, or None when it lacks one."""
    names = tokenizer_files(path)
    if names is None or not all((path / f).is_file() for f in REQUIRED_FILES):
        return None
    return REQUIRED_FILES + names


def is_checkpoint_dir(path: str | Path) -> bool:
    """Cheap test: a directory holding every required file (loading still validates)."""
    path = Path(path)
    return path.is_dir() and checkpoint_files(path) is not None


def list_checkpoints(root: str | Path | None = None) -> list[Path]:
    """Checkpoint directories under root (snapshots included), sorted; hidden folders, resume folders and
    anything whose real path leaves the root (a symlink pointing out) are skipped."""
    root = Path(root) if root is not None else checkpoints_root()
    if not root.is_dir():
        return []
    found = []
    for config in root.rglob(CONFIG_FILE):
        path = config.parent
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p == RESUME_DIR for p in parts):
            continue
        files = checkpoint_files(path)
        if files is not None and all(inside(root, path / f) for f in files):
            found.append(path)
    return sorted(found)


def tree_signature(root: str | Path | None = None) -> tuple[tuple[str, int], ...]:
    """(folder, mtime_ns) of root and of every folder below it, links not followed: what list_checkpoints and
    outside_links read changes one of these when a checkpoint (or one of its files, or a link) appears, goes
    or is renamed. ~0.4 ms for the shipped tree, against ~12 ms for the scans themselves."""
    root = Path(root) if root is not None else checkpoints_root()
    out = []
    for dirpath, dirnames, _ in os.walk(root):
        try:
            out.append((dirpath, os.stat(dirpath).st_mtime_ns))
        except OSError:
            continue
        dirnames.sort()
    return tuple(out)


def outside_links(root: str | Path | None = None, limit: int = 20) -> list[str]:
    """Entries under root (relative names) that are symlinks leading out of it: never listed nor read."""
    root = Path(root) if root is not None else checkpoints_root()
    if not root.is_dir():
        return []
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink() and not inside(root, path):
                found.append(str(path.relative_to(root)))
                if len(found) >= limit:
                    return found
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink() and not d.startswith(".")]
    return sorted(found)
