"""A lecture in real Chromium pages: one teacher and N students on one server of this machine.

    python bench/bench_lecture.py --students 30 --changes 6 [--students 60 ...] [--pages K] [--checkpoint NAME]

The teacher opens a lecture (/?teacher=KEY, then "Open a lecture"); every student opens the join link in a browser
context of their own (their own cookies, their own Streamlit session). Then, for each change, the teacher picks
another layer in the explorer's overview (a view the class has computed) or types another sentence (the model
runs), and the bench records, on each student's page clock (Date.now(), the machine's clock), when the student's
page first showed the new class view whole: the view marker the app draws after the page (lecture.marker), the
script finished, nothing stale. The latency of a student is that moment minus the moment the teacher's click was
sent. Then the teacher asks "which word does this token attend to most?", every student clicks a word, and the
teacher's count must equal N exactly; the teacher reveals, and every student must show the model's answer.

The browsers run on the same cores as the server, as they would not in a class (each student has a device):
the figures are an upper bound for this server. With --pages K, only K students are Chromium pages; the others
speak Streamlit's websocket protocol (as bench_load.py's sessions do): the server runs their sessions in full (the
push reruns them, each draws the class view), but no page is drawn for them on these cores, as on a class's own
devices. A protocol student's moment is when the run that drew the new view's marker finished; the K pages give
what a student sees, drawn. The question round is then answered by the K pages (the count must be K, of N
connected). Printed as JSON lines, one per change, then a summary.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import os  # noqa: E402

from browser import cpu_seconds, descendants, launch, machine, server, wait_redrawn  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from pages._ui.i18n import Translator  # noqa: E402

EN = Translator("en")
MARKER = re.compile(re.escape(EN("lecture.view", version=12345)).replace("12345", r"(\d+)"))
KEY = "bench-teacher-key-0123456789"
# On each student's page: when each class view's marker first stood on a finished, fresh page (Date.now()).
VIEWS = """(() => {
  window.__views = {};
  const look = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') === 'running') return;
    if (document.querySelector('[data-testid="stElementContainer"][data-stale="true"]')) return;
    for (const el of document.querySelectorAll('[class*="st-key-lecture_view_"]')) {
      const m = el.className.match(/st-key-lecture_view_(\\d+)/);
      if (m && !(m[1] in window.__views)) window.__views[m[1]] = Date.now();
    }
  };
  const start = () => {
    if (!document.body) return setTimeout(start, 10);
    new MutationObserver(look).observe(document.body,
      {subtree: true, childList: true, attributes: true, attributeFilter: ['data-test-script-state', 'data-stale']});
  };
  start();
})();"""
STATE = """() => ({
  views: window.__views,
  script: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state'),
  stale: document.querySelectorAll('[data-testid="stElementContainer"][data-stale="true"]').length,
  markers: [...document.querySelectorAll('[class*="st-key-lecture_view_"]')].map(e => e.className),
  sidebar: document.querySelector('.st-key-lecture_sidebar')?.innerText,
  main: document.querySelector('[data-testid="stMain"]')?.innerText.slice(0, 600),
})"""
SENTENCES = [
    "The dog didn't cross the road because it was too tired.",
    "The cat didn't climb the tree because it was too tall.",
    "The horse didn't jump the fence because it was too high.",
    "The bird didn't leave the nest because it was too cold.",
]


def code_of(teacher) -> str:
    text = teacher.locator(".st-key-lecture_code_shown").inner_text(timeout=120_000)
    return text.rsplit(" ", 1)[-1].strip("*").strip()


def open_teacher(browser, url: str, timeout_ms: float = 180_000):
    """The teacher's page, signed in, on the explorer's overview tab, with a lecture open; (page, join code)."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(f"{url}/?teacher={KEY}", wait_until="domcontentloaded")
    page.locator(".st-key-lecture_open button").click(timeout=timeout_ms)
    expect(page.locator(".st-key-lecture_code_shown")).to_be_visible(timeout=timeout_ms)
    assert "teacher=" not in page.url, "the key stays in the address bar"
    page.get_by_role("tab", name=EN("explorer.tab.overview"), exact=True).click(timeout=timeout_ms)
    expect(page.get_by_label(EN("common.layer")).first).to_be_visible(timeout=timeout_ms)
    return page, code_of(page)


def open_students(browser, url: str, code: str, n: int, timeout_ms: float = 300_000) -> list:
    """n students, each in a browser context of its own, following the class from its join link."""
    pages = []
    for _ in range(n):
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        page.add_init_script(VIEWS)
        page.goto(f"{url}/?join={code}", wait_until="commit")
        pages.append(page)
    for page in pages:
        page.locator('[class*="st-key-lecture_view_"]').first.wait_for(timeout=timeout_ms)
    return pages


class ProtocolStudents:
    """Students without a page: each a websocket session of Streamlit's protocol, joined by the link's query
    string, that records when each run drawing a class view's marker finished (time.time() in ms, as the pages'
    Date.now()). They run on an event loop of their own thread; Playwright keeps the main one."""

    def __init__(self, url: str, code: str, n: int, timeout_s: float = 300) -> None:
        from bench_load import _ws_url

        self.views: list[dict[str, float]] = [{} for _ in range(n)]
        self._url, self._code, self._ready = _ws_url(url), code, threading.Semaphore(0)
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        threading.Thread(target=self._loop.run_until_complete, args=(self._main(n),), daemon=True).start()
        deadline = time.time() + timeout_s
        for _ in range(n):
            if not self._ready.acquire(timeout=max(0.1, deadline - time.time())):
                raise TimeoutError("a protocol student never drew the class view")

    async def _main(self, n: int) -> None:
        self._stop = asyncio.Event()
        await asyncio.gather(*(self._student(i) for i in range(n)))

    async def _student(self, i: int) -> None:
        import websockets
        from bench_load import _rerun
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        async with websockets.connect(self._url, subprotocols=["streamlit"], max_size=None) as ws:
            await ws.send(_rerun(query=f"join={self._code}"))
            markers: set[str] = set()
            while not self._stop.is_set():
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
                except TimeoutError:
                    continue
                msg = ForwardMsg.FromString(raw)
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    markers = set()
                elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                    el = msg.delta.new_element
                    if el.WhichOneof("type") == "markdown" and (m := MARKER.fullmatch(el.markdown.body)):
                        markers.add(m.group(1))
                elif kind == "script_finished" and markers:
                    now = time.time() * 1000
                    first = not self.views[i]
                    for v in markers:
                        self.views[i].setdefault(v, now)
                    if first:
                        self._ready.release()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)


def views_of(student) -> dict[str, float]:
    """A student's class views and when each was first drawn (ms): a page's, or a protocol student's."""
    if isinstance(student, tuple):
        group, i = student
        return dict(group.views[i])
    return student.evaluate("window.__views || {}")


def pick_layer(teacher, layer: int, timeout_s: float = 90):
    """Open the overview's layer picker; the change: choose `layer` (the head picker the class follows).

    The picker is opened once the page is idle, and again if a rerun closed its list before the option showed
    (after a reload the page reruns as the lecture comes back, and a rerun redraws the picker closed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    option = teacher.get_by_role("option", name=str(layer), exact=True)
    deadline = time.time() + timeout_s
    while True:
        wait_redrawn(teacher, sentence=None, expected=None, marker=None, min_charts=0, timeout_ms=timeout_s * 1000)
        teacher.get_by_label(EN("common.layer")).first.click()
        try:
            option.wait_for(timeout=5_000)
            return option.click
        except PlaywrightTimeout:
            if time.time() > deadline:
                raise
            teacher.keyboard.press("Escape")


def type_sentence(teacher, text: str):
    """Type a sentence in the sidebar; the change: send it (Ctrl+Enter)."""
    box = teacher.get_by_label(EN("sidebar.sentence"))
    box.fill(text)
    return lambda: box.press("Control+Enter")


def wait_views(students: list, seen: set[str], timeout_s: float = 120) -> dict[int, str]:
    """Wait until every student's page shows a class view newer than `seen`; each one's (view, time in ms)."""
    deadline = time.time() + timeout_s
    out: dict[int, tuple[str, float]] = {}
    while len(out) < len(students) and time.time() < deadline:
        for i, page in enumerate(students):
            if i in out:
                continue
            views = views_of(page)
            new = {v: t for v, t in views.items() if v not in seen}
            if new:
                v = max(new, key=int)
                out[i] = (v, new[v])
        time.sleep(0.05)
    if len(out) < len(students):
        missing = [i for i in range(len(students)) if i not in out]
        first = students[missing[0]]
        state = views_of(first) if isinstance(first, tuple) else first.evaluate(STATE)
        raise TimeoutError(
            f"{len(missing)} of {len(students)} students never showed the new view; the first of them: {state}"
        )
    return out


def change(teacher, students: list, server_pid: int, action, *args) -> dict:
    """One change of the teacher's; each student's latency (s) from the click to their new view, and the CPU
    seconds the server and the browsers spent meanwhile."""
    seen = {v for page in students for v in views_of(page)}
    send = action(teacher, *args)  # everything before the teacher's last click or key is not timed
    server_pids = descendants(server_pid)
    browser_pids = descendants(os.getpid()) - server_pids - {os.getpid()}
    cpu0 = cpu_seconds(server_pids), cpu_seconds(browser_pids)
    t0 = time.time() * 1000
    send()
    got = wait_views(students, seen)
    lat = sorted((t - t0) / 1000 for _, t in got.values())
    drawn = sorted((t - t0) / 1000 for i, (_, t) in got.items() if not isinstance(students[i], tuple))
    wall = time.time() - t0 / 1000
    cpu = cpu_seconds(server_pids) - cpu0[0], cpu_seconds(browser_pids) - cpu0[1]
    return {
        "wall_s": round(wall, 2),
        "server_cpu_s": round(cpu[0], 2),
        "browsers_cpu_s": round(cpu[1], 2),
        "action": action.__name__,
        "students": len(students),
        "median_s": round(statistics.median(lat), 3),
        "max_s": round(lat[-1], 3),
        **(
            {"pages_median_s": round(statistics.median(drawn), 3), "pages_max_s": round(drawn[-1], 3)}
            if drawn and len(drawn) < len(lat)
            else {}
        ),
        "views": sorted({v for v, _ in got.values()}),
    }


def idle_cpu(server_pid: int, seconds: float = 10.0, settle_s: float = 20.0) -> dict:
    """CPU the server and the browsers spend per second while the class only watches (each page polls its
    room's signal), settle_s after the last page showed the class's view."""
    time.sleep(settle_s)
    server_pids = descendants(server_pid)
    browser_pids = descendants(os.getpid()) - server_pids - {os.getpid()}
    cpu0 = cpu_seconds(server_pids), cpu_seconds(browser_pids)
    time.sleep(seconds)
    return {
        "idle_server_cpu_per_s": round((cpu_seconds(server_pids) - cpu0[0]) / seconds, 3),
        "idle_browsers_cpu_per_s": round((cpu_seconds(browser_pids) - cpu0[1]) / seconds, 3),
    }


def question_round(teacher, students: list, connected: int | None = None, timeout_ms: float = 120_000) -> dict:
    """The teacher asks which word the view's token attends to most; every student page clicks a word (each their
    own pick, spread over the options); the teacher's count must be exactly the pages, of `connected` (default the
    pages); then the reveal."""
    from playwright.sync_api import expect

    teacher.locator(".st-key-lecture_ask_attends button").click()
    t0 = time.time()
    for i, page in enumerate(students):
        options = page.locator(".st-key-lecture_student_question button")
        options.first.wait_for(timeout=timeout_ms)
        options.nth(i % options.count()).click()
    n = len(students)
    expect(teacher.locator(".st-key-lecture_answers")).to_contain_text(
        EN("lecture.answered", n=n, connected=connected or n), timeout=timeout_ms
    )
    counted = time.time() - t0
    teacher.locator(".st-key-lecture_reveal button").click()
    answer = EN("lecture.answer", option="", value=0.0).split("**")[0].strip()
    for page in students:
        expect(page.locator(".st-key-lecture_student_question")).to_contain_text(answer, timeout=timeout_ms)
    return {"answers": n, "counted_exactly": True, "all_counted_after_s": round(counted, 2)}


def run(url: str, server_pid: int, n: int, changes: int, playwright, pages: int | None = None) -> dict:
    browser = launch(playwright)
    k = n if pages is None else min(pages, n)
    protocol, pages_only = None, []
    try:
        teacher, code = open_teacher(browser, url)
        if k < n:
            protocol = ProtocolStudents(url, code, n - k)
        real = open_students(browser, url, code, k)
        students = real + [(protocol, i) for i in range(n - k)]
        idle = idle_cpu(server_pid)
        print(json.dumps(idle), flush=True)
        rows = []
        for i in range(changes):
            if i % 2 == 0:
                row = change(teacher, students, server_pid, pick_layer, (i // 2) % 2 + 1 if i % 4 else 0)
            else:
                row = change(teacher, students, server_pid, type_sentence, SENTENCES[(i // 2) % len(SENTENCES)])
            print(json.dumps(row), flush=True)
            rows.append(row)
        quiz = question_round(teacher, real, connected=n)
        print(json.dumps(quiz), flush=True)
        if protocol is not None:
            pages_only = [r["pages_max_s"] for r in rows if "pages_max_s" in r]
    finally:
        if protocol is not None:
            protocol.close()
        browser.close()
    lat_med = [r["median_s"] for r in rows]
    lat_max = [r["max_s"] for r in rows]
    return {
        "students": n,
        "pages": k,
        **({"pages_worst_max_s": max(pages_only)} if protocol is not None and pages_only else {}),
        "changes": len(rows),
        "median_of_medians_s": round(statistics.median(lat_med), 3),
        "medians_s": lat_med,
        "maxes_s": lat_max,
        "worst_max_s": max(lat_max),
        **quiz,
        **idle,
        "machine": machine(),
    }


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, action="append", help="class sizes (default 30)")
    ap.add_argument("--changes", type=int, default=6)
    ap.add_argument(
        "--pages",
        type=int,
        default=None,
        help="students in Chromium pages (default all; the rest speak the websocket protocol)",
    )
    ap.add_argument("--checkpoints", default=None, help="checkpoints root (default the shipped one)")
    args = ap.parse_args()
    env = {"TRANSFORMER_TEACHER_KEY": KEY}
    if args.checkpoints:
        env["TRANSFORMER_CHECKPOINTS"] = args.checkpoints
    for n in args.students or [30]:
        with server(ROOT, env=env) as (url, proc), sync_playwright() as p:
            print(json.dumps(run(url, proc.pid, n, args.changes, p, args.pages)), flush=True)


if __name__ == "__main__":
    main()
