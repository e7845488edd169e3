"""What a user feels, in a real browser (Debian's chromium, Playwright): four medians, and where the time goes.

    python bench/bench_browser.py [--ref GIT_REV] [--repeat N] [--runs N] [--cold N]

1. A new sentence, from pressing Ctrl+Enter until the page has redrawn (script done,
   nothing stale, the new translation shown, the heatmaps drawn with the new pieces).
2. A warm visit: a second browser tab (same browser, so its HTTP cache; a new session) on a
   running server, until the first heatmap is drawn.
3. A tab switch of the explorer (Heads -> All heads) until its heatmap is drawn.
4. A cold start: from starting the server process (the browser already open) until the
   first heatmap of a first visit is drawn.

Where the time went is printed too, on the page's own clock (hooks installed before the
app's scripts, see browser.PROFILE_HOOKS). A new sentence: the key until the rerun request
leaves, the server (request sent until the run's last websocket message arrives: the script
and its transport), the browser after that message until the redraw; over the whole redraw,
the time spent drawing charts (inside Plotly.react/newPlot, and the app's canvas heatmap), the
main thread's long tasks, the bytes received, and
the CPU time the server's and chromium's processes spent (from /proc: on a shared machine,
time spent waiting for a core shows in the timings only). A warm visit: the page and its
scripts until the first websocket message leaves, the server's first run, the browser after.

With --ref, the same is measured for that commit (checked out in a temporary git
worktree) in the same run, on the same machine, so the two can be compared; with --runs,
the whole measurement is repeated (the apps alternating) and every run is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import SENTENCES  # noqa: E402
from browser import PROFILE_HOOKS, cpu_seconds, descendants, launch, machine, server, wait_redrawn  # noqa: E402

FLAGSHIP = "The animal didn't cross the street because it was too tired."
HEATMAP = ".js-plotly-plot .heatmaplayer image, .attn-heatmap[data-drawn]"
HEATMAP_NOTED = f"""() => {{
  const ok = !!document.querySelector('{HEATMAP}');
  if (ok) window.__prof.done = performance.now();
  return ok;
}}"""
VIEWPORT = {"width": 1500, "height": 1100}
PARTS = ("key", "server", "browser", "charts", "long tasks", "calls", "kB in", "server CPU", "chromium CPU")


class Expected(NamedTuple):
    """What the page shows once a sentence is redrawn: its translation, and its source pieces as the model's
    tokenizer cuts them (joined by spaces: what a chart's axis shows; "trophy" is "▁troph y", so a word is
    no marker)."""

    translation: str
    pieces: str


def expected_translations() -> dict[str, Expected]:
    import torch

    from transformer.analysis import analyse
    from transformer.checkpoint import load_checkpoint
    from transformer.layout import DEFAULT_CHECKPOINT

    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    out = {}
    with torch.inference_mode():
        for s in SENTENCES[:8] + [FLAGSHIP]:
            a = analyse(ckpt.model, ckpt.tokenizer, s)
            out[s] = Expected(a.translation, " ".join(a.source_pieces[:-1]))  # </s> last
    return out


def charts(p: dict) -> list[tuple[float, float]]:
    """(start, end) of every chart drawn: Plotly.react/newPlot calls and the app's canvas heatmaps."""
    return [(start, end) for _, start, end in p["plotly"]] + [tuple(c) for c in p.get("charts", [])]


def breakdown(page) -> dict[str, float]:
    """Where the last new sentence's time went (ms on the page's clock; see the module's docstring)."""
    p = page.evaluate(
        "() => { const p = window.__prof, copy = JSON.parse(JSON.stringify(p));"
        " for (const k of ['ws', 'plotly', 'charts', 'long', 'keys']) p[k].length = 0; return copy; }"
    )
    key = max(t for k, t in p["keys"] if k == "Enter")
    done = p["done"]
    sent = min((t for d, t, _ in p["ws"] if d == "out" and t >= key), default=key)
    received = [(t, n) for d, t, n in p["ws"] if d == "in" and sent <= t <= done]
    last = max((t for t, _ in received), default=sent)
    drawn = charts(p)
    return {
        "key": sent - key,
        "server": last - sent,
        "browser": done - last,
        "charts": sum(end - start for start, end in drawn if key <= start <= done),
        "long tasks": sum(d for start, d in p["long"] if key <= start <= done),
        "calls": sum(1 for start, _ in drawn if key <= start <= done),
        "kB in": sum(n for _, n in received) / 1e3,
    }


def visit_breakdown(page) -> dict[str, float]:
    """Where a warm visit's time went (ms on the page's clock, from the navigation's start): the page and
    its scripts until the first websocket message goes out, the server's first run (until the last message
    before the heatmap), and the browser after that until the heatmap is drawn."""
    p = page.evaluate("() => window.__prof")
    sent = min(t for d, t, _ in p["ws"] if d == "out")
    last = max((t for d, t, _ in p["ws"] if d == "in" and t <= p["done"]), default=sent)
    drawn = sum(end - start for start, end in charts(p) if start <= p["done"])
    return {"page": sent, "server": last - sent, "browser": p["done"] - last, "charts": drawn}


def measure(url: str, server_pid: int, translations: dict[str, Expected], repeat: int):
    """The three timings of the module's docstring, and the profile of each new sentence."""
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"new sentence": [], "warm visit": [], "tab switch": []}
    parts, visits = [], []
    with sync_playwright() as p:
        server_pids = descendants(server_pid)
        before = descendants(os.getpid()) - server_pids
        browser = launch(p)
        page = browser.new_page(viewport=VIEWPORT)
        page.add_init_script(PROFILE_HOOKS)
        page.goto(url, wait_until="domcontentloaded")
        flagship = translations[FLAGSHIP]
        wait_redrawn(page, sentence=FLAGSHIP, expected=flagship.translation, marker=None, min_charts=3,
                     timeout_ms=120_000, polling=100)
        box = page.get_by_label("Sentence (English)")
        for i in range(repeat):
            sentence = SENTENCES[i % 8]
            box.fill(sentence)
            chromium = descendants(os.getpid()) - server_pids - before  # every chromium process, renderers too
            cpu = cpu_seconds(server_pids), cpu_seconds(chromium)
            t = time.perf_counter()
            box.press("Control+Enter")
            new = translations[sentence]
            wait_redrawn(page, sentence=sentence, expected=new.translation, marker=new.pieces, min_charts=3, note=True)
            times["new sentence"].append(time.perf_counter() - t)
            cpu = cpu_seconds(server_pids) - cpu[0], cpu_seconds(chromium) - cpu[1]
            parts.append({**breakdown(page), "server CPU": cpu[0] * 1e3, "chromium CPU": cpu[1] * 1e3})
        box.fill(FLAGSHIP)
        box.press("Control+Enter")
        wait_redrawn(page, sentence=FLAGSHIP, expected=flagship.translation, marker=flagship.pieces, min_charts=3,
                     timeout_ms=60_000)
        for _ in range(repeat):
            for name, charts in (("All heads", 2), ("Heads", 3)):
                t = time.perf_counter()
                page.get_by_role("tab", name=name, exact=True).click()
                wait_redrawn(page, sentence=None, expected=None, marker=None, min_charts=charts)
                if name == "All heads":
                    times["tab switch"].append(time.perf_counter() - t)
        # a second browser tab: the same browser (its HTTP cache), a new Streamlit session
        ctx = browser.new_context(viewport=VIEWPORT)
        ctx.add_init_script(PROFILE_HOOKS)
        first = ctx.new_page()
        first.goto(url, wait_until="commit")
        first.wait_for_selector(HEATMAP, timeout=120_000)
        for _ in range(repeat):
            visit = ctx.new_page()
            t = time.perf_counter()
            visit.goto(url, wait_until="commit")
            visit.wait_for_function(HEATMAP_NOTED, timeout=120_000, polling="raf")
            times["warm visit"].append(time.perf_counter() - t)
            visits.append(visit_breakdown(visit))
            visit.close()
        ctx.close()
        browser.close()
    return times, parts, visits


def cold_start(app_dir: Path) -> float:
    """Seconds from starting the server process (chromium already running) until a first visit's heatmap."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport=VIEWPORT)
        t = time.perf_counter()
        with server(app_dir) as (url, _):
            page.goto(url, wait_until="commit")
            page.wait_for_selector(HEATMAP, timeout=180_000)
            elapsed = time.perf_counter() - t
        browser.close()
    return elapsed


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", str(where), rev], cwd=ROOT, check=True, capture_output=True)
    return where


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:6.0f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", help="also measure this commit (e.g. the one before a change)")
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--runs", type=int, default=1, help="repeat the whole measurement, the apps alternating")
    ap.add_argument("--cold", type=int, default=1, help="cold starts per app and run (each a new server)")
    args = ap.parse_args()
    translations = expected_translations()
    apps = [("this tree", ROOT)]
    tmp = None
    if args.ref:
        tmp = Path(tempfile.mkdtemp(prefix="bench-ref-"))
        apps.insert(0, (f"ref {args.ref}", worktree(args.ref, tmp / "ref")))
    print(f"machine: {machine()}")
    medians: dict[str, dict[str, list[float]]] = {name: {} for name, _ in apps}
    try:
        for run in range(1, args.runs + 1):
            for name, app_dir in apps:
                cold = [cold_start(app_dir) for _ in range(args.cold)]
                with server(app_dir) as (url, proc):
                    times, parts, visits = measure(url, proc.pid, translations, args.repeat)
                times["cold start"] = cold
                for k, v in times.items():
                    medians[name].setdefault(k, []).append(statistics.median(v))
                summary = "   ".join(f"{k}: {ms(v)}" for k, v in times.items())
                print(f"run {run}  {name:16s} {summary}")
                split = "  ".join(f"{k} {statistics.median(d[k] for d in parts):.0f}" for k in PARTS)
                print(f"       new sentence, medians (ms unless named): {split}")
                split = "  ".join(f"{k} {statistics.median(d[k] for d in visits):.0f}" for k in visits[0])
                print(f"       warm visit, medians (ms): {split}", flush=True)
        if args.runs > 1:
            for name, by_kind in medians.items():
                summary = "   ".join(f"{k}: {ms(v)}" for k, v in by_kind.items())
                print(f"median of {args.runs} runs  {name:16s} {summary}")
    finally:
        if tmp is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(tmp / "ref")], cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    main()
