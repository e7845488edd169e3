"""Two versions of the code on the same checkpoint, interleaved in one run: each one's medians and the ratio new/old.

    python bench/bench_versions.py [--old 4bbcc18] [--new WORKTREE] [--checkpoint checkpoints/real-kde-align]
                                   [--level class|batch|both] [--rounds 3] [--sessions 30] [--beam 1 4]
                                   [--batch-threads N]

The issue 60 check (fault 8), the class bench on real-kde-align, this working tree against 4bbcc18:

    python bench/bench_versions.py --old 4bbcc18 --checkpoint checkpoints/real-kde-align --level class --rounds 6

and, on 2 cores that another job keeps busy (see --batch-threads):

    nice -n -10 python bench/bench_versions.py --old 4bbcc18 --level class --rounds 6 --batch-threads 1

--old, --new: git revisions (anything `git rev-parse` knows), WORKTREE for this working tree as it is (uncommitted
changes included; the default of --new), or the path of a folder that holds a copy of the app (app.py), to try a
patch without committing it. A revision is extracted with `git archive` into a temporary folder (checkpoints/ left
out), so the repository, its index and its worktrees are never touched.
--checkpoint: served by both, copied (snapshots left out) into a checkpoints folder of each version's own, under the
name that version opens by default ($TRANSFORMER_CHECKPOINTS; a version's own checkpoints are never read).
--level class: bench_load.py's class, with the batcher on: for each version a real server of its own code (its
app.py and pages), N sessions connect, then type their sentences at the same moment; the figures are the median
time until a session's translation arrives, until its whole page has, and the server's CPU seconds (every thread,
user + system) while the sessions wait. Each version's serial reference (every sentence alone, on a server without
the batcher) is computed once, first. One round serves each version once, in alternating order (old, new, then
new, old, ...), so a load that drifts (another process on the cores) falls on both.
--level batch: the model-level work alone, in one process per version (PYTHONPATH=that version), interleaved
call by call: analyse_batch of the class's sentences (the batcher's whole-batch analysis, maps returned) and the
same sentences through that version's Batcher (continuous batching), per beam size; wall and CPU seconds. One
torch thread in those processes (torch.set_num_threads(1), as the app's pages); the batcher's worker sets its own.
--batch-threads N: $TRANSFORMER_BATCH_THREADS of both servers (default: the app's own, every core up to 4). On 2
cores that a training run keeps busy, a batch's two OpenMP threads wait on each other: the class's translation
medians fell either at 0.6-1.2 s or at 6-11 s (the server's CPU seconds as high as the wall time), against
0.35-0.8 s with 1 thread, the same for both versions. `nice -n -10` on this command (never on the other job)
steadies the figures too.
Prints every measurement, then per figure: the median of each version (over rounds, never the best) and the
ratio new/old (below 1: new is faster).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKTREE = "WORKTREE"


# --- the versions -------------------------------------------------------------------------------------


def materialise(rev: str, into: Path) -> Path:
    """The code of rev, as a folder: this working tree itself for WORKTREE, else `git archive` of rev (checkpoints/
    left out) extracted into `into`."""
    if rev == WORKTREE:
        return ROOT
    if (Path(rev) / "app.py").is_file():
        return Path(rev).resolve()
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", sha, "--", ".", ":(exclude)checkpoints"],
        check=True,
        capture_output=True,
    ).stdout
    into.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def default_name(tree: Path) -> str:
    """The checkpoint name tree's app opens by default (its layout.DEFAULT_NAME)."""
    code = "from transformer.layout import DEFAULT_NAME; print(DEFAULT_NAME)"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def checkpoints_for(tree: Path, checkpoint: Path, root: Path) -> Path:
    """A checkpoints folder holding checkpoint under the name tree opens by default. Returns the folder."""
    root.mkdir(parents=True)
    shutil.copytree(
        checkpoint, root / default_name(tree), ignore=shutil.ignore_patterns("snapshots", "optimizer*", "last")
    )
    return root


def order(labels: list[str], r: int) -> list[str]:
    """Round r's order: alternating, so that neither version always goes first."""
    return labels if r % 2 == 0 else labels[::-1]


def summary(title: str, values: dict[str, list[float]], unit: str = "s") -> None:
    old, new = statistics.median(values["old"]), statistics.median(values["new"])
    print(
        f"{title}: old median {old:.3f} {unit}, new median {new:.3f} {unit}, ratio new/old {new / old:.3f} "
        f"(old {[round(v, 3) for v in values['old']]}, new {[round(v, 3) for v in values['new']]})",
        flush=True,
    )


# --- the class (bench_load.py's sessions against each version's server) ------------------------------------


def class_level(trees: dict[str, Path], roots: dict[str, Path], args) -> None:
    sys.path.insert(0, str(HERE))
    import bench_load
    from browser import server

    query = {b: (f"beam={b}" if b != 1 else "") for b in args.beam}

    def env(label: str, batch: str) -> dict[str, str]:
        threads = {} if args.batch_threads is None else {"TRANSFORMER_BATCH_THREADS": str(args.batch_threads)}
        return {"TRANSFORMER_CHECKPOINTS": str(roots[label]), "TRANSFORMER_BATCH": batch, **threads}

    sentences = sorted(set(bench_load.distinct_sentences(args.sessions)))
    expected: dict[tuple[str, int], dict[str, str]] = {}
    for label in trees:
        for beam in args.beam:
            with server(trees[label], env=env(label, "0")) as (url, _):
                expected[label, beam] = reference(bench_load, url, sentences, query[beam])
    for beam in args.beam:
        if expected["old", beam] != expected["new", beam]:
            differ = [s for s in sentences if expected["old", beam].get(s) != expected["new", beam].get(s)]
            print(f"beam {beam}: the versions translate {len(differ)} sentence(s) differently, e.g. {differ[:2]}")
    translation = {b: {"old": [], "new": []} for b in args.beam}
    page = {b: {"old": [], "new": []} for b in args.beam}
    cpu = {b: {"old": [], "new": []} for b in args.beam}
    for r in range(args.rounds):
        for beam in args.beam:
            for label in order(list(trees), r):
                with server(trees[label], env=env(label, "1")) as (url, proc):
                    rep, seconds = asyncio.run(
                        _class(bench_load, url, proc.pid, args.sessions, expected[label, beam], query[beam])
                    )
                translation[beam][label].append(rep.translation_median_s)
                page[beam][label].append(rep.done_median_s)
                cpu[beam][label].append(seconds)
                print(
                    f"round {r + 1}, beam {beam}, {label}: {args.sessions} sessions, correct {rep.correct}, "
                    f"cross-talk {rep.crosstalk}; translation median {rep.translation_median_s:.2f} s, max "
                    f"{rep.translation_max_s:.2f} s; whole page median {rep.done_median_s:.2f} s; server CPU "
                    f"{seconds:.2f} s; load average {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    for beam in args.beam:
        summary(f"class of {args.sessions}, beam {beam}, translation", translation[beam])
        summary(f"class of {args.sessions}, beam {beam}, whole page", page[beam])
        summary(f"class of {args.sessions}, beam {beam}, server CPU", cpu[beam])


def reference(bench_load, url: str, sentences: list[str], query: str) -> dict[str, str]:
    """bench_load's serial reference, asked again for a sentence whose translation it did not catch."""
    out = asyncio.run(bench_load._serial(url, sentences, query))
    for _ in range(3):
        missing = [s for s in sentences if s not in out]
        if not missing:
            break
        out.update(asyncio.run(bench_load._serial(url, missing, query)))
    return out


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU seconds, every thread's (those that have ended included)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _class(bench_load, url: str, pid: int, n: int, expected: dict[str, str], query: str):
    """bench_load's class (its _load), with the server's CPU seconds from the moment every session is ready."""
    sessions = [bench_load.Session(s) for s in bench_load.distinct_sentences(n)]
    go, ready = asyncio.Event(), []
    tasks = [asyncio.create_task(bench_load._session(url, s, go, ready, expected, query)) for s in sessions]
    while len(ready) < n:
        await asyncio.sleep(0.05)
        for t in tasks:
            if t.done() and t.exception():
                raise t.exception()
    await asyncio.sleep(0.3)  # the first visits' last page runs end
    before = cpu_seconds(pid)
    go.set()
    await asyncio.gather(*tasks)
    seconds = cpu_seconds(pid) - before
    times = [s.translation_s for s in sessions if s.translation_s == s.translation_s] or [float("nan")]
    others = set(expected.values())
    report = bench_load.Report(
        n,
        sum(s.translation_s == s.translation_s for s in sessions),
        sum(any(t in others and t != expected[s.sentence] for t in s.seen_texts) for s in sessions),
        statistics.median(times),
        max(times),
        statistics.median(s.done_s for s in sessions),
        max(s.done_s for s in sessions),
        statistics.median(s.first_visit_s for s in sessions),
        max(s.first_visit_s for s in sessions),
        float("nan"),
        float("nan"),
    )
    return report, seconds


# --- the model-level work (one process per version) --------------------------------------------------------

# Runs in a process whose PYTHONPATH is one version: reads {"kind", "beam"} lines, answers {"s", "cpu", "out"}.
WORKER = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
from transformer.analysis import analyse
from transformer.checkpoint import load_checkpoint
try:
    from transformer.serving.running_batch import analyse_batch
except ImportError:  # before the module's rename
    from transformer.serving.batched import analyse_batch
from transformer.serving.batcher import Batcher

ckpt = load_checkpoint(sys.argv[1])
model, tokenizer, alpha = ckpt.model, ckpt.tokenizer, ckpt.alpha
texts = json.loads(sys.argv[2])
batcher = Batcher.from_env()


def work(kind, beam):
    if kind == "batch":
        with torch.inference_mode():
            return analyse_batch(model, tokenizer, texts, beam, alpha=alpha)
    if kind == "batcher":
        futures = [batcher.submit(model, tokenizer, t, beam, alpha=alpha) for t in texts]
        return [f.result() for f in futures]
    with torch.inference_mode():
        return [analyse(model, tokenizer, t, beam, alpha=alpha) for t in texts]


for line in sys.stdin:
    cmd = json.loads(line)
    t, c = time.perf_counter(), time.process_time()
    results = work(cmd["kind"], cmd["beam"])
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    out = [a.translation if hasattr(a, "translation") else repr(a) for a in results]
    print(json.dumps({"s": wall, "cpu": cpu, "out": out}), flush=True)
"""


def batch_level(trees: dict[str, Path], roots: dict[str, Path], args) -> None:
    texts = _sentences(args.sessions)
    procs = {}
    for label, tree in trees.items():
        ckpt = roots[label] / default_name(tree)
        env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
        procs[label] = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ckpt), json.dumps(texts)],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(label: str, kind: str, beam: int) -> dict:
        p = procs[label]
        p.stdin.write(json.dumps({"kind": kind, "beam": beam}) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"the {label} version's worker stopped")
        return json.loads(line)

    figures = [(kind, beam) for kind in ("batch", "batcher") for beam in args.beam]
    try:
        for kind, beam in figures:  # warm-up, and the same translations from both
            outs = {label: ask(label, kind, beam)["out"] for label in trees}
            if outs["old"] != outs["new"]:
                print(f"{kind}, beam {beam}: the versions' translations differ")
        wall = {f: {"old": [], "new": []} for f in figures}
        cpu = {f: {"old": [], "new": []} for f in figures}
        for r in range(args.rounds):
            for f in figures:
                for label in order(list(trees), r):
                    res = ask(label, *f)
                    wall[f][label].append(res["s"])
                    cpu[f][label].append(res["cpu"])
            print(f"round {r + 1} of {args.rounds} done; load average {os.getloadavg()[0]:.2f}", flush=True)
        for kind, beam in figures:
            what = "analyse_batch" if kind == "batch" else "Batcher"
            summary(f"{what} of {len(texts)} sentences, beam {beam}, wall", wall[kind, beam])
            summary(f"{what} of {len(texts)} sentences, beam {beam}, CPU", cpu[kind, beam])
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait()


def _sentences(n: int) -> list[str]:
    """bench_load.py's sentences, read without importing it (it puts this tree first on sys.path)."""
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import json, bench_load; "
    code += f"print(json.dumps(bench_load.distinct_sentences({n})))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True).stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", default="4bbcc18", help="a git revision, or WORKTREE")
    ap.add_argument("--new", default=WORKTREE, help="a git revision, or WORKTREE (default: this working tree)")
    ap.add_argument("--checkpoint", type=Path, default=ROOT / "checkpoints" / "real-kde-align")
    ap.add_argument("--level", choices=["class", "batch", "both"], default="class")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=30, help="the class's size (and the batch level's sentences)")
    ap.add_argument("--beam", type=int, nargs="+", default=[1])
    ap.add_argument("--batch-threads", type=int, help="$TRANSFORMER_BATCH_THREADS of both servers (default: the app's)")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from browser import machine

    print(f"machine: {machine()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-versions-") as tmp:
        trees = {label: materialise(rev, Path(tmp) / label) for label, rev in (("old", args.old), ("new", args.new))}
        roots = {
            label: checkpoints_for(tree, args.checkpoint.resolve(), Path(tmp) / f"ckpt-{label}")
            for label, tree in trees.items()
        }
        print(f"old: {args.old} ({trees['old']}), new: {args.new} ({trees['new']}), checkpoint {args.checkpoint}")
        started = time.perf_counter()
        if args.level in ("batch", "both"):
            batch_level(trees, roots, args)
        if args.level in ("class", "both"):
            class_level(trees, roots, args)
        print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
