"""What a user feels, in a real browser (Debian's chromium, Playwright): three medians.

    python bench/bench_browser.py [--ref GIT_REV] [--repeat N]

1. A new sentence, from pressing Ctrl+Enter until the page has redrawn (script done,
   nothing stale, the new translation shown, the heatmaps drawn with the new pieces).
2. A warm visit: a second browser tab (same browser, so its HTTP cache; a new session) on a
   running server, until the first heatmap is drawn.
3. A tab switch of the explorer (Heads -> All heads) until its heatmap is drawn.

With --ref, the same is measured for that commit (checked out in a temporary git
worktree) in the same run, on the same machine, so the two can be compared.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import SENTENCES  # noqa: E402
from browser import REDRAWN, launch, machine, server  # noqa: E402

FLAGSHIP = "The animal didn't cross the street because it was too tired."


def expected_translations() -> dict[str, str]:
    import torch

    from transformer.analysis import analyse
    from transformer.checkpoint import load_checkpoint
    from transformer.layout import DEFAULT_CHECKPOINT

    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    with torch.inference_mode():
        return {s: analyse(ckpt.model, ckpt.tokenizer, s).translation for s in SENTENCES[:8] + [FLAGSHIP]}


def marker_of(sentence: str) -> str:
    return "▁" + sentence.split()[1]  # the first noun's piece


def measure(url: str, translations: dict[str, str], repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"new sentence": [], "warm visit": [], "tab switch": []}
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_function(REDRAWN, arg=[translations[FLAGSHIP], None, 3], timeout=120_000)
        box = page.get_by_label("Sentence (English)")
        for i in range(repeat):
            sentence = SENTENCES[i % 8]
            box.fill(sentence)
            t = time.perf_counter()
            box.press("Control+Enter")
            page.wait_for_function(REDRAWN, arg=[translations[sentence], marker_of(sentence), 3], polling="raf")
            times["new sentence"].append(time.perf_counter() - t)
        box.fill(FLAGSHIP)
        box.press("Control+Enter")
        page.wait_for_function(REDRAWN, arg=[translations[FLAGSHIP], "▁animal", 3], timeout=60_000)
        for _ in range(repeat):
            for name, charts in (("All heads", 2), ("Heads", 3)):
                t = time.perf_counter()
                page.get_by_role("tab", name=name, exact=True).click()
                page.wait_for_function(REDRAWN, arg=[None, None, charts], polling="raf")
                if name == "All heads":
                    times["tab switch"].append(time.perf_counter() - t)
        # a second browser tab: the same browser (its HTTP cache), a new Streamlit session
        ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
        first = ctx.new_page()
        first.goto(url, wait_until="commit")
        first.wait_for_selector(".js-plotly-plot .heatmaplayer image", timeout=120_000)
        for _ in range(repeat):
            visit = ctx.new_page()
            t = time.perf_counter()
            visit.goto(url, wait_until="commit")
            visit.wait_for_selector(".js-plotly-plot .heatmaplayer image", timeout=120_000)
            times["warm visit"].append(time.perf_counter() - t)
            visit.close()
        ctx.close()
        browser.close()
    return times


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", str(where), rev], cwd=ROOT, check=True, capture_output=True)
    return where


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", help="also measure this commit (e.g. the one before a change)")
    ap.add_argument("--repeat", type=int, default=8)
    args = ap.parse_args()
    translations = expected_translations()
    apps = [("this tree", ROOT)]
    tmp = None
    if args.ref:
        tmp = Path(tempfile.mkdtemp(prefix="bench-ref-"))
        apps.insert(0, (f"ref {args.ref}", worktree(args.ref, tmp / "ref")))
    print(f"machine: {machine()}")
    try:
        for name, app_dir in apps:
            with server(app_dir) as (url, _):
                times = measure(url, translations, args.repeat)
            summary = "   ".join(f"{k}: median {statistics.median(v) * 1e3:6.0f} ms" for k, v in times.items())
            print(f"{name:24s} {summary}")
    finally:
        if tmp is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(tmp / "ref")], cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    main()
