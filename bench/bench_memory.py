"""Server memory over many distinct sentences in one session (is anything growing besides the caches?).

    python bench/bench_memory.py [--sentences 2000] [--every 100]

Starts a real server, drives one session through N distinct sentences over Streamlit's
websocket protocol and prints the server's resident memory every `every` sentences, then
the growth over the last quarter (the caches are full long before that: 2,048 analyses).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import _run_once, _ws_url, rss_mb  # noqa: E402
from browser import machine, server  # noqa: E402

NOUNS = ["dog", "cat", "cow", "goat", "horse", "fox", "pig", "wolf", "hen", "bird", "duck", "owl", "frog", "bee"]
PLACES = ["road", "street", "bridge", "river", "field", "path", "valley", "tunnel", "canal", "avenue"]
ADJECTIVES = ["tired", "scared", "lazy", "hungry", "weak", "shy", "nervous", "sleepy", "wide", "narrow", "long"]
CONNECTIVES = ["because", "since", "as"]


def sentences(n: int) -> list[str]:
    combos = itertools.product(NOUNS, PLACES, ADJECTIVES, CONNECTIVES)
    return [f"The {a} didn't cross the {p} {c} it was too {j}." for a, p, j, c in itertools.islice(combos, n)]


async def drive(url: str, pid: int, texts: list[str], every: int) -> list[tuple[int, float]]:
    import websockets

    samples = [(0, rss_mb(pid))]
    async with websockets.connect(_ws_url(url), subprotocols=["streamlit"], max_size=None) as ws:
        ids: dict[str, str] = {}

        def find(el) -> None:
            if el.WhichOneof("type") == "text_area":
                ids["text"] = el.text_area.id

        await _run_once(ws, None, find)
        for i, text in enumerate(texts, start=1):
            await _run_once(ws, {ids["text"]: text}, lambda el: None)
            if i % every == 0:
                samples.append((i, rss_mb(pid)))
                print(f"{i:5d} sentences: server {samples[-1][1]:7.1f} MB", flush=True)
    return samples


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--every", type=int, default=100)
    args = ap.parse_args()
    print(f"machine: {machine()}")
    texts = sentences(args.sentences)
    with server(ROOT) as (url, proc):
        samples = asyncio.run(drive(url, proc.pid, texts, args.every))
    quarter = [mb for i, mb in samples if i >= 0.75 * args.sentences]
    growth = (quarter[-1] - quarter[0]) / quarter[0] if len(quarter) > 1 else float("nan")
    print(
        f"{args.sentences} sentences: {samples[0][1]:.0f} -> {samples[-1][1]:.0f} MB; "
        f"growth over the last quarter {growth:+.1%}"
    )


if __name__ == "__main__":
    main()
