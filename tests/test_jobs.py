"""The job table's lock: asking "is a job running?" must never make a job that starts at that moment fail."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from conftest import ROOT

from transformer import jobs
from transformer.cli import JOB_LOCK_WAIT_S
from transformer.training.lock import RunLock, TrainingError, is_locked

# What a training job's process does with the job lock (cli.job_lock), with a trivial body instead of a
# run. The lock module is loaded by path: it imports nothing of the package, so a child starts in
# milliseconds instead of importing torch.
CHILD = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("lock", sys.argv[1])
lock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lock)
path, wait_s = sys.argv[2], float(sys.argv[3])
try:
    with lock.RunLock(path.rsplit("/", 1)[0], path.rsplit("/", 1)[1], busy="another job", wait_s=wait_s):
        time.sleep(0.005)
except lock.TrainingError:
    sys.exit(3)
"""


def test_probing_never_takes_the_lock(tmp_path):
    path = jobs.lock_path(tmp_path)
    assert not jobs.running(tmp_path) and not path.exists()  # no job yet: nothing is created by asking
    with RunLock(path.parent, path.name):
        assert jobs.running(tmp_path) and is_locked(path)
        # a second holder in this very process is refused, as one in another process is
        try:
            with RunLock(path.parent, path.name):
                raise AssertionError("the lock was taken twice")
        except TrainingError as exc:
            assert "another training run" in str(exc)
    assert not jobs.running(tmp_path)


@pytest.mark.slow
def test_a_child_started_while_others_probe_is_never_refused(tmp_path):
    path = jobs.lock_path(tmp_path)
    path.parent.mkdir(parents=True)
    stop, probes, seen_running = threading.Event(), [0], [0]

    def probe() -> None:  # other sessions' pages, asking as fast as they can
        while not stop.is_set():
            seen_running[0] += jobs.running(tmp_path)
            probes[0] += 1

    # Four probing threads: with the take-and-release probe this test replaces, they refused 6 to 8
    # of the 50 children (three runs on the 2-core machine); one thread refused 0 to 3.
    threads = [threading.Thread(target=probe) for _ in range(4)]
    for thread in threads:
        thread.start()
    lock_module = ROOT / "transformer" / "training" / "lock.py"
    codes = []
    try:
        for _ in range(50):
            child = [sys.executable, "-c", CHILD, str(lock_module), str(path), str(JOB_LOCK_WAIT_S)]
            codes.append(subprocess.run(child, timeout=60).returncode)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert codes == [0] * 50, f"{codes.count(3)} of 50 jobs refused while {probes[0]} probes ran"
    assert probes[0] > 500 and seen_running[0] > 0  # the probe did run, and saw the children hold the lock
    assert not jobs.running(tmp_path)


def test_a_held_lock_is_still_refused_after_the_retries(tmp_path):
    path = jobs.lock_path(tmp_path)
    lock_module = ROOT / "transformer" / "training" / "lock.py"
    with RunLock(path.parent, path.name):
        child = [sys.executable, "-c", CHILD, str(lock_module), str(path), "0.2"]
        assert subprocess.run(child, timeout=60).returncode == 3
