"""Training jobs started from the app: one per server, each its own `python -m transformer train` process.

The job's files live in a hidden folder of the checkpoints root, so they survive a server
restart and the picker does not list them:

    <root>/.training/lock          held by the running training process for its whole run
    <root>/.training/job.json      the last job: name, output folder, command, pid, start time
    <root>/.training/<name>.log    what the process printed
    <root>/.training/<name>.tsv    an uploaded corpus

The process holds the lock itself, so "is a job running?" has one answer for every session
and after a restart; :func:`running` tests the lock without taking it, so asking never makes
a job that starts at that moment fail. The process reacts to SIGTERM by stopping after the
current step and keeping what was saved (snapshots and the resume checkpoint).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from .atomic import OverwriteError, is_our_checkpoint, remove_folder
from .corpus import CorpusFormatError, decode_tsv, parse_tsv
from .layout import CONFIG_FILE, METRICS_FILE, REPO_ROOT, RESUME_DIR, check_name, snapshots
from .training.lock import is_locked
from .training.metrics import read_metrics

JOB_DIR = ".training"
MAX_TSV_BYTES = 5 * 2**20
_start_lock = threading.Lock()


class JobError(RuntimeError):
    """A job that cannot start (bad name, existing folder, another job running)."""


@dataclass
class Job:
    name: str
    out: str
    command: list[str]
    pid: int
    started: float
    total_steps: int


class JobState(StrEnum):
    """Where the last job stands; the catalogue's train.state.<value> says it in words."""

    STARTING = "starting"  # launched less than a few seconds ago, the lock not yet taken
    RUNNING = "running"  # its process holds the lock
    FINISHED = "finished"  # the final checkpoint is written
    STOPPED = "stopped"  # ended early, with a resume checkpoint or snapshots kept
    FAILED = "failed"  # ended without writing anything (its log tail says why)


@dataclass
class JobStatus:
    job: Job
    state: JobState
    step: int
    total_steps: int
    elapsed_s: float
    eta_s: float | None
    metrics: list[dict[str, Any]]  # the step records
    probes: list[dict[str, Any]]  # {"step", "probe": {...}} records
    log_tail: str

    @property
    def progress(self) -> float:
        return min(self.step / max(self.total_steps, 1), 1.0)


def job_dir(root: Path) -> Path:
    return Path(root) / JOB_DIR


def lock_path(root: Path) -> Path:
    return job_dir(root) / "lock"


def running(root: Path) -> bool:
    """True while a training process holds this root's job lock (tested, never taken)."""
    return is_locked(lock_path(root))


def validate_tsv(data: bytes, max_bytes: int = MAX_TSV_BYTES, max_errors: int = 20) -> tuple[int, list[str]]:
    """(number of pairs, problems) of an uploaded source<TAB>target corpus; each problem names its line.
    The line rule is the trainer's own (:func:`transformer.corpus.parse_tsv`)."""
    if len(data) > max_bytes:
        return 0, [f"the file has {len(data):,} bytes; the limit is {max_bytes:,}"]
    try:
        text = decode_tsv(data)
    except CorpusFormatError as exc:
        return 0, [str(exc)]
    pairs, problems = parse_tsv(text, max_problems=max_errors)
    if len(problems) >= max_errors:
        problems.append("… (stopped after the first problems)")
    return len(pairs), problems


def start(root: Path, name: str, args: list[str], total_steps: int, tsv: bytes | None = None) -> Job:
    """Start `python -m transformer train ARGS --out <root>/<name>` in its own process (one job per root)."""
    root = Path(root)
    check_name(name)
    out = root / name
    with _start_lock:
        if running(root):
            raise JobError("another training job is running on this server")
        if out.exists():
            raise JobError(f"{name!r} already exists; choose another name")
        folder = job_dir(root)
        folder.mkdir(parents=True, exist_ok=True)
        if tsv is not None:
            _, problems = validate_tsv(tsv)
            if problems:
                raise CorpusFormatError("; ".join(problems))
            data = folder / f"{name}.tsv"
            data.write_bytes(tsv)
            args = [*args, "--data", str(data)]
        command = [sys.executable, "-m", "transformer", "train", *args, "--out", str(out)]
        command += ["--job-lock", str(lock_path(root)), "--quiet", "--probe"]
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONUNBUFFERED": "1"}
        with open(folder / f"{name}.log", "w", encoding="utf-8") as log:  # the child keeps its own handle
            try:
                proc = subprocess.Popen(
                    command, cwd=str(REPO_ROOT), stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            except OSError as exc:
                raise JobError(f"the training process could not start: {exc}") from None
        # reaped as soon as it ends (no zombie while the server runs); its state is read from its files
        threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
        job = Job(name, str(out), command, proc.pid, time.time(), total_steps)
        (folder / "job.json").write_text(json.dumps(asdict(job)), encoding="utf-8")
        for _ in range(100):  # until the process holds the lock (or has already ended)
            if running(root) or proc.poll() is not None:
                break
            time.sleep(0.05)
        return job


def last_job(root: Path) -> Job | None:
    path = job_dir(root) / "job.json"
    try:
        return Job(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def status(root: Path) -> JobStatus | None:
    """The state of the last job started under root, read from its files (any session, after a restart)."""
    job = last_job(root)
    if job is None:
        return None
    out = Path(job.out)
    log = read_metrics(out / METRICS_FILE)
    try:
        log_tail = (job_dir(root) / f"{job.name}.log").read_text(encoding="utf-8", errors="replace")[-2000:]
    except OSError:
        log_tail = ""
    if running(root):
        state = JobState.RUNNING
    elif (out / CONFIG_FILE).exists():
        state = JobState.FINISHED
    elif (out / RESUME_DIR).exists() or snapshots(out):
        state = JobState.STOPPED
    elif time.time() - job.started < 5 and _alive(job.pid):
        state = JobState.STARTING
    else:
        state = JobState.FAILED
    last = log.steps[-1] if log.steps else {}
    step, elapsed = int(last.get("step", 0)), float(last.get("elapsed_s", 0.0))
    total = int(last.get("total_steps", job.total_steps))
    eta = elapsed / step * (total - step) if step and state is JobState.RUNNING else None
    return JobStatus(job, state, step, total, elapsed, eta, log.steps, log.probes, log_tail)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def delete(root: Path) -> bool:
    """Delete the last job, when it no longer runs: its output folder (only when it holds nothing but what a
    training run writes: atomic.is_our_checkpoint), its log, its uploaded corpus and its record.
    False if there is none or it runs; JobError (nothing deleted) if its folder holds anything else."""
    root = Path(root)
    job = last_job(root)
    if job is None or running(root):
        return False
    check_name(job.name)
    out = root / job.name
    with _start_lock:
        if out.exists() or out.is_symlink():
            try:
                remove_folder(out, lambda p: is_our_checkpoint(p, run_folder=True), "a training run")
            except OverwriteError as exc:
                raise JobError(f"{job.name!r} was not deleted: {exc}") from None
        folder = job_dir(root)
        for name in (f"{job.name}.log", f"{job.name}.tsv", "job.json"):
            (folder / name).unlink(missing_ok=True)
    return True


def stop(root: Path) -> bool:
    """Ask the running job to stop after its current step (it keeps what it saved). False if none runs."""
    job = last_job(root)
    if job is None or not running(root) or not _alive(job.pid):
        return False
    os.kill(job.pid, signal.SIGTERM)
    return True
