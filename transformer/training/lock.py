"""One writer at a time: an exclusive lock on a file, held for a whole run and released on exit or crash.

The lock is an open-file-description lock (Linux's ``F_OFD_SETLK``): it belongs to the open file,
so two locks in one process (two threads, two runs) exclude each other as two processes do, and
it can be *tested* without being taken (``F_OFD_GETLK``). A probe therefore never makes a run that
starts at that moment fail, which a take-and-release probe would. Where the platform has no OFD
locks, ``flock`` stands in and the probe has to take the lock for an instant.

This module imports neither torch nor the rest of the package: the app's job table uses it as is.
"""

from __future__ import annotations

import fcntl
import os
import struct
import time
from pathlib import Path

_OFD = hasattr(fcntl, "F_OFD_SETLK")
_FLOCK = "hhqqi4x"  # struct flock: l_type, l_whence, l_start, l_len (0 = to the end), l_pid


class TrainingError(RuntimeError):
    """A run that cannot start: an existing checkpoint, a bad corpus, another run in the same folder."""


def _flock_struct(kind: int) -> bytes:
    return struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0)


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock without waiting; False when someone else holds it."""
    try:
        if _OFD:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock_struct(fcntl.F_WRLCK))
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    return True


def _unlock(fd: int) -> None:
    if _OFD:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock_struct(fcntl.F_UNLCK))
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)


def is_locked(path: str | Path) -> bool:
    """True while some open file (this process's or another's) holds the lock on path. Never takes it."""
    try:
        fd = os.open(path, os.O_RDONLY if _OFD else os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        if _OFD:
            # F_GETLK needs a lock type the file was opened for; a read lock conflicts with the writer's lock
            answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _flock_struct(fcntl.F_RDLCK))
            return struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK
        if not _try_lock(fd):
            return True
        _unlock(fd)
        return False
    finally:
        os.close(fd)


class RunLock:
    """One training run per output folder: an exclusive lock on ``out/name``.

    Args:
        out: the folder the lock file goes into (created if missing).
        name: the lock file's name.
        busy: the TrainingError's message when another run holds the lock.
        wait_s: how long to keep trying before giving up (0: one try).
    """

    def __init__(self, out: str | Path, name: str = ".train.lock", busy: str | None = None, wait_s: float = 0.0):
        self.path = Path(out) / name
        self.busy = busy or f"another training run is writing to {self.path.parent}; wait for it or pick --out"
        self.wait_s = wait_s
        self.fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.wait_s
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                os.close(fd)
                raise TrainingError(self.busy)
            time.sleep(0.02)
        self.fd = fd
        return self

    def held_elsewhere(self) -> bool:
        """True when another open file holds this lock (a test; the lock is not taken)."""
        return self.fd is None and is_locked(self.path)

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            _unlock(self.fd)
            os.close(self.fd)
            self.fd = None
