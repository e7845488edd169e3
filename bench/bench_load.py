"""A class on one server: N sessions at once, at the protocol level (no browser shares the CPU).

    python bench/bench_load.py [--sessions 30] [--url URL] [--size default|base] [--batch on|off|both] [--runs 2]
                               [--batch-threads 1 2] [--checkpoint checkpoints/NAME] [--beam 4]

--size base serves a random-weight checkpoint of the paper's base size (6+6 layers, d_model 512,
Table 3), made on the fly in a temporary folder (never committed), with the shipped tokenizer.
--batch: the server's analyses through the batcher (transformer/serving, the default), each
session alone ($TRANSFORMER_BATCH=0), or both, one after the other in the same run.
--beam K: every session (and the serial reference) opens the app's share link with beam=K (default 1,
greedy, the app's default); a beam search uses the checkpoint's own length penalty (Checkpoint.alpha).

Starts a real server (unless --url is given), then:
1. serially, one session translates every sentence alone (the reference), on a server of its own
   so that the measured one computes every sentence while the sessions wait;
2. N sessions connect at the same moment (first visit: time until the first heatmap arrives);
3. each types its own sentence at the same moment (time until its translation arrives, and until
   the page's whole run, every heatmap, has arrived).
Prints correctness against the serial run, cross-talk (a session shown another's
translation), the median and maximum times, and the server's memory before and after.
Sessions speak Streamlit's own websocket protocol (BackMsg/ForwardMsg protobufs).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SENTENCES = [
    "The cow didn't cross the road because it was too scared.",
    "The dogs didn't cross the bridge because they were too tired.",
    "The horse stopped at the river since it was too flooded.",
    "The goat avoided the bridges because they were too dangerous.",
    "The cat didn't reach the field because it was too lazy.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "The wolf avoided the valley because it was too icy.",
    "The hen didn't cross the path because it was too narrow.",
    "The rabbit stopped at the stream because it was too hungry.",
    "The frogs didn't reach the canal because they were too weak.",
    "The donkey didn't cross the avenue as it was too busy.",
    "The owl avoided the tunnel since it was too nervous.",
    "The book didn't fit in the drawer because it was too large.",
    "The pig stopped at the highway because it was too crowded.",
    "The turtle didn't cross the square because it was too sleepy.",
    "The bees avoided the corridor because they were too shy.",
]


_EN = __import__("pages._ui.i18n", fromlist=["Translator"]).Translator("en")
# the caption above the translation: plain, or marked as a guess (a sentence with words the model never saw)
CAPTIONS = (_EN("sentence.translation"), _EN("sentence.translation_guess"))


def distinct_sentences(n: int) -> list[str]:
    """n different sentences the model knows every word of: the list above, then generated ones."""
    nouns = ["dog", "cat", "cow", "goat", "horse", "fox", "pig", "wolf", "hen", "bird", "duck", "owl"]
    places = ["road", "street", "bridge", "river", "field", "path", "valley", "tunnel"]
    adjectives = ["tired", "scared", "lazy", "hungry", "weak", "shy", "nervous", "sleepy", "wide", "narrow"]
    extra = (
        f"The {a} didn't cross the {p} because it was too {j}."
        for a, p, j in itertools.product(nouns, places, adjectives)
    )
    return (SENTENCES + list(itertools.islice(extra, max(0, n - len(SENTENCES)))))[:n]


@dataclass
class Session:
    sentence: str
    first_visit_s: float = float("nan")
    translation_s: float = float("nan")
    done_s: float = float("nan")  # until the page's whole run (every heatmap) has arrived
    seen_texts: list[str] = field(default_factory=list)


def _rerun(widgets: dict[str, str] | None = None, page: str = "", query: str = ""):
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    msg.rerun_script.query_string = query  # a session's first run applies it (the app's share link)
    msg.rerun_script.page_name = page
    for wid, value in (widgets or {}).items():
        w = msg.rerun_script.widget_states.widgets.add()
        w.id = wid
        w.string_value = value
    return msg.SerializeToString()


async def _run_once(ws, widgets, on_delta, query: str = "") -> None:
    """Send a rerun and read until the script finishes, calling on_delta(element) for each new element."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    await ws.send(_rerun(widgets, query=query))
    started = False
    while True:
        msg = ForwardMsg.FromString(await ws.recv())
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            on_delta(msg.delta.new_element)
        elif kind == "session_status_changed":
            started = started or msg.session_status_changed.script_is_running
        elif kind == "script_finished" and started:
            return


def _ws_url(url: str) -> str:
    return url.replace("http://", "ws://").rstrip("/") + "/_stcore/stream"


async def _session(
    url: str, s: Session, go: asyncio.Event, ready: list, expected: dict[str, str], query: str = ""
) -> None:
    import websockets

    text_id: dict[str, str] = {}

    def first(el) -> None:
        if el.WhichOneof("type") == "text_area":
            text_id["id"] = el.text_area.id
        if el.WhichOneof("type") in ("plotly_chart", "bidi_component") and s.first_visit_s != s.first_visit_s:
            s.first_visit_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    async with websockets.connect(_ws_url(url), subprotocols=["streamlit"], max_size=None) as ws:
        await _run_once(ws, None, first, query)
        ready.append(s)
        await go.wait()
        t1 = time.perf_counter()

        def second(el) -> None:
            if el.WhichOneof("type") == "text":
                s.seen_texts.append(el.text.body)
                if el.text.body == expected[s.sentence] and s.translation_s != s.translation_s:
                    s.translation_s = time.perf_counter() - t1

        await _run_once(ws, {text_id["id"]: s.sentence}, second)
        s.done_s = time.perf_counter() - t1


async def _serial(url: str, sentences: list[str], query: str = "") -> dict[str, str]:
    """Each sentence alone, in one session: the translation shown under the 'Translation' caption."""
    import websockets

    out: dict[str, str] = {}
    async with websockets.connect(_ws_url(url), subprotocols=["streamlit"], max_size=None) as ws:
        ids: dict[str, str] = {}
        elements: list = []

        def collect(el) -> None:
            if el.WhichOneof("type") == "text_area":
                ids["text"] = el.text_area.id
            elements.append(el)

        await _run_once(ws, None, collect, query)
        for sentence in sentences:
            elements.clear()
            await _run_once(ws, {ids["text"]: sentence}, collect)
            # the st.text right after the "Translation" caption (a markdown element)
            for before, after in zip(elements, elements[1:]):
                if before.WhichOneof("type") == "markdown" and before.markdown.body in CAPTIONS:
                    out[sentence] = after.text.body
                    break
    return out


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Report:
    n: int
    correct: int
    crosstalk: int
    translation_median_s: float
    translation_max_s: float
    done_median_s: float
    done_max_s: float
    first_visit_median_s: float
    first_visit_max_s: float
    rss_before_mb: float
    rss_after_mb: float


async def _load(
    url: str, n: int, pid: int | None, expected: dict[str, str] | None = None, query: str = ""
) -> Report:
    sentences = distinct_sentences(n)
    if expected is None:
        expected = await _serial(url, sorted(set(sentences)), query)
    rss_before = rss_mb(pid) if pid else float("nan")
    sessions = [Session(s) for s in sentences]
    go, ready = asyncio.Event(), []
    tasks = [asyncio.create_task(_session(url, s, go, ready, expected, query)) for s in sessions]
    while len(ready) < n:
        await asyncio.sleep(0.05)
        for t in tasks:
            if t.done() and t.exception():
                raise t.exception()
    go.set()
    await asyncio.gather(*tasks)
    others = {v for v in expected.values()}
    correct = sum(s.translation_s == s.translation_s for s in sessions)
    crosstalk = sum(any(t in others and t != expected[s.sentence] for t in s.seen_texts) for s in sessions)
    times = [s.translation_s for s in sessions if s.translation_s == s.translation_s] or [float("nan")]
    visits = [s.first_visit_s for s in sessions]
    done = [s.done_s for s in sessions]
    return Report(
        n,
        correct,
        crosstalk,
        statistics.median(times),
        max(times),
        statistics.median(done),
        max(done),
        statistics.median(visits),
        max(visits),
        rss_before,
        rss_mb(pid) if pid else float("nan"),
    )


def base_checkpoint(root: Path, seed: int = 0) -> Path:
    """A random-weight model of the paper's base size in root/<default name>, with the shipped tokenizer
    and card (so the app lists it first and knows its words). Returns root."""
    import dataclasses

    import torch

    from transformer import Transformer, TransformerConfig
    from transformer.checkpoint import load_checkpoint, save_checkpoint
    from transformer.layout import DEFAULT_CHECKPOINT, DEFAULT_NAME

    shipped = load_checkpoint(DEFAULT_CHECKPOINT)
    keep = {k: getattr(shipped.config, k) for k in ("vocab_size", "max_len", "pad_id", "bos_id", "eos_id")}
    config = dataclasses.replace(TransformerConfig.preset("base", **keep), dropout=0.0)
    torch.manual_seed(seed)
    model = Transformer(config).eval()
    card = {**shipped.card, "note": "random weights of the base size, made by bench_load.py --size base"}
    save_checkpoint(root / DEFAULT_NAME, model, shipped.tokenizer, card)
    return root


def copied_checkpoint(path: Path, root: Path) -> Path:
    """A copy of the checkpoint at path (snapshots left out) as root/<default name>, so that every session
    opens on it. Returns root."""
    import shutil

    from transformer.layout import DEFAULT_NAME

    shutil.copytree(path, root / DEFAULT_NAME, ignore=shutil.ignore_patterns("snapshots", "optimizer*"))
    return root


def reference(n: int, env: dict[str, str] | None = None, query: str = "") -> dict[str, str]:
    """The translation of each of the n sentences, one at a time in one session, on a server of its own
    without the batcher (so that the measured server starts with an empty cache)."""
    from browser import server

    with server(ROOT, env={**(env or {}), "TRANSFORMER_BATCH": "0"}) as (started, _):
        return asyncio.run(_serial(started, sorted(set(distinct_sentences(n))), query))


def run(
    n: int,
    url: str | None = None,
    env: dict[str, str] | None = None,
    expected: dict[str, str] | None = None,
    query: str = "",
) -> Report:
    """Measure n simultaneous sessions against url, or against a server started here.

    expected: the serial answers (see reference); without it they are computed first on the same
    server, which then answers the sessions from its cache.
    """
    if url is not None:
        return asyncio.run(_load(url, n, None, expected, query))
    from browser import server

    with server(ROOT, env=env) as (started, proc):
        return asyncio.run(_load(started, n, proc.pid, expected, query))


MODES = {"on": "1", "off": "0"}


def main() -> None:
    import tempfile

    from browser import machine

    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, nargs="+", default=[30])
    ap.add_argument("--url")
    ap.add_argument("--size", choices=["default", "base"], default="default")
    ap.add_argument("--checkpoint", type=Path, help="serve this checkpoint (copied, snapshots left out) as the default")
    ap.add_argument("--batch", choices=["on", "off", "both"], default="both")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--beam", type=int, default=1, help="the sessions' beam size (the share link's beam=)")
    ap.add_argument(
        "--batch-threads",
        nargs="+",
        default=["default"],
        help="TRANSFORMER_BATCH_THREADS values to compare (e.g. 1 2; default: the app's own, every core up to 4)",
    )
    args = ap.parse_args()
    print(f"machine: {machine()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-base-") as tmp:
        env: dict[str, str] = {}
        if args.size == "base":
            env["TRANSFORMER_CHECKPOINTS"] = str(base_checkpoint(Path(tmp)))
        elif args.checkpoint is not None:
            env["TRANSFORMER_CHECKPOINTS"] = str(copied_checkpoint(args.checkpoint, Path(tmp)))
        modes = ["on", "off"] if args.batch == "both" else [args.batch]
        query = f"beam={args.beam}" if args.beam != 1 else ""
        expected = {n: reference(n, env, query) for n in args.sessions} if args.url is None else {}
        variants = [(m, t) for m in modes for t in (args.batch_threads if m == "on" else ["default"])]
        for i in range(args.runs):
            for mode, threads in variants:
                for n in args.sessions:
                    run_env = {**env, "TRANSFORMER_BATCH": MODES[mode]}
                    if threads != "default":
                        run_env["TRANSFORMER_BATCH_THREADS"] = threads
                    r = run(n, args.url, run_env, expected.get(n), query)
                    label = f"{mode}, {threads} threads" if mode == "on" else mode
                    size = args.checkpoint.name if args.checkpoint else args.size
                    print(
                        f"size {size}, beam {args.beam}, batcher {label}, run {i + 1}: {n:3d} sessions: "
                        f"correct {r.correct}/{n}, "
                        f"cross-talk {r.crosstalk}; translation median {r.translation_median_s:.2f} s, max "
                        f"{r.translation_max_s:.2f} s; whole page median {r.done_median_s:.2f} s, max "
                        f"{r.done_max_s:.2f} s; first visit median {r.first_visit_median_s:.2f} s, max "
                        f"{r.first_visit_max_s:.2f} s; server memory {r.rss_before_mb:.0f} -> {r.rss_after_mb:.0f} MB; "
                        f"load average {os.getloadavg()[0]:.2f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
