"""Shared by the browser benchmarks: start a Streamlit server, launch Debian's chromium, wait for a redraw."""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# A chart's axis names (its first trace's x, and the x axis' tick texts), joined by spaces, HTML entities undone.
_AXIS_NAMES = """p => {
    const d = ((p.__chart || p).data || [])[0] || {};
    const ax = (p.layout && p.layout.xaxis) || {};
    return [].concat(d.x || [], ax.ticktext || []).join(' ')
      .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  }"""
_VISIBLE_CHARTS = (
    "[...document.querySelectorAll('.js-plotly-plot, .attn-heatmap')].filter(p => p.offsetParent !== null)"
)
_DRAWN = (
    "p => p.__chart ? !!p.dataset.drawn"
    " : !!p.querySelector('.heatmaplayer image, .barlayer path, .scatterlayer path')"
)

# True once the script has finished, nothing is stale, `expected` is on the page and a visible chart's axis
# names hold `marker` (the new sentence's pieces, as the model's tokenizer cuts them: what changes on the
# axes when the new data is drawn), with every visible chart drawn (plotly, or the app's canvas heatmap).
REDRAWN = f"""([expected, marker, minCharts]) => {{
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') === 'running') return false;
  if (document.querySelector('[data-testid="stElementContainer"][data-stale="true"]')) return false;
  if (expected && !document.body.innerText.includes(expected)) return false;
  const plots = {_VISIBLE_CHARTS};
  if (plots.length < minCharts) return false;
  if (!plots.every({_DRAWN})) return false;
  if (!marker) return true;
  const names = {_AXIS_NAMES};
  return plots.some(p => names(p).includes(marker));
}}"""

# What REDRAWN looked at, for the message when it never held.
REDRAWN_STATE = f"""([expected, marker, minCharts]) => {{
  const app = document.querySelector('[data-testid="stApp"]');
  const plots = {_VISIBLE_CHARTS};
  const names = {_AXIS_NAMES};
  return {{
    script: app ? app.getAttribute('data-test-script-state') : null,
    stale: document.querySelectorAll('[data-testid="stElementContainer"][data-stale="true"]').length,
    shown: expected ? document.body.innerText.includes(expected) : null,
    charts: plots.length,
    drawn: plots.filter({_DRAWN}).length,
    axes: plots.map(names).map(s => s.slice(0, 160)),
  }};
}}"""


class RedrawTimeout(RuntimeError):
    """The page never showed the new sentence redrawn; the message says which sentence and what was missing."""


def describe_wait(sentence: str | None, expected: str | None, marker: str | None, min_charts: int) -> str:
    """What wait_redrawn waits for, in words."""
    wanted = ["the script finished", "no stale element"]
    if expected:
        wanted.append(f"the translation {expected!r} on the page")
    wanted.append(f"at least {min_charts} visible chart(s), all drawn")
    if marker:
        wanted.append(f"a chart's axis showing the pieces {marker!r}")
    about = f"the sentence {sentence!r}" if sentence else "the page"
    return f"{about} redrawn: " + ", ".join(wanted)


def describe_state(state: dict, marker: str | None, min_charts: int) -> str:
    """What the page showed instead (REDRAWN_STATE's answer), in words."""
    seen = [f"script {state.get('script')!s}", f"{state.get('stale', 0)} stale element(s)"]
    if state.get("shown") is not None:
        seen.append("the translation shown" if state["shown"] else "the translation NOT shown")
    seen.append(f"{state.get('charts', 0)} visible chart(s) (wanted {min_charts}), {state.get('drawn', 0)} drawn")
    if marker:
        axes = state.get("axes") or []
        held = any(marker in a for a in axes)
        seen.append(f"the pieces {'found' if held else 'NOT found'} on the axes {axes!r}")
    return "; ".join(seen)


def wait_redrawn(
    page,
    *,
    sentence: str | None,
    expected: str | None,
    marker: str | None,
    min_charts: int,
    timeout_ms: float = 30_000,
    polling="raf",
    note: bool = False,
) -> None:
    """Wait until REDRAWN holds (REDRAWN_NOTED with note=True); on a timeout raise RedrawTimeout naming the
    sentence, what was waited for and what the page showed instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    arg = [expected, marker, min_charts]
    try:
        page.wait_for_function(REDRAWN_NOTED if note else REDRAWN, arg=arg, timeout=timeout_ms, polling=polling)
    except PlaywrightTimeout as e:
        try:
            seen = describe_state(page.evaluate(REDRAWN_STATE, arg), marker, min_charts)
        except Exception as inner:  # the page itself is gone
            seen = f"the page could not be read ({inner.__class__.__name__}: {inner})"
        raise RedrawTimeout(
            f"waited {timeout_ms / 1e3:.0f} s for {describe_wait(sentence, expected, marker, min_charts)}. "
            f"The page showed: {seen}."
        ) from e


# Installed before the app's own scripts (page.add_init_script): records, on the page's clock
# (performance.now()), every websocket frame (direction, time, bytes), every Plotly.react/newPlot call
# (start, end of its promise), every draw of the app's canvas heatmap (heatmap.js writes them to
# window.__prof.charts), the long tasks (> 50 ms on the main thread) and the script-state changes.
PROFILE_HOOKS = """(() => {
  const P = (window.__prof = {ws: [], plotly: [], charts: [], long: [], state: [], keys: []});
  const WS = window.WebSocket;
  const size = d => d.byteLength ?? d.size ?? d.length ?? 0;
  window.WebSocket = class extends WS {
    constructor(...a) {
      super(...a);
      this.addEventListener('message', e => P.ws.push(['in', performance.now(), size(e.data)]));
    }
    send(d) { P.ws.push(['out', performance.now(), size(d)]); return super.send(d); }
  };
  try {
    new PerformanceObserver(l => l.getEntries().forEach(e => P.long.push([e.startTime, e.duration])))
      .observe({type: 'longtask', buffered: true});
  } catch (e) {}
  let plotly;
  Object.defineProperty(window, 'Plotly', {configurable: true, get: () => plotly, set: v => {
    for (const f of ['react', 'newPlot']) {
      const g = v[f];
      if (typeof g !== 'function' || g.__hooked) continue;
      v[f] = function (...a) {
        const t = performance.now();
        const r = g.apply(this, a);
        const done = () => P.plotly.push([f, t, performance.now()]);
        Promise.resolve(r).then(done, done);
        return r;
      };
      v[f].__hooked = true;
    }
    plotly = v;
  }});
  document.addEventListener('keydown', e => P.keys.push([e.key, performance.now()]), true);
  const watch = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return setTimeout(watch, 10);
    new MutationObserver(() => P.state.push([performance.now(), app.getAttribute('data-test-script-state')]))
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  };
  watch();
})();"""

# REDRAWN that also notes, on the page's clock, when it first held (for the profile's breakdown).
REDRAWN_NOTED = f"""(args) => {{
  const ok = ({REDRAWN})(args);
  if (ok && window.__prof) window.__prof.done = performance.now();
  return ok;
}}"""


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields from the state on (the name may hold spaces)


def descendants(pid: int) -> set[int]:
    """pid and every process below it (read from /proc; empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").exists() else ():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))):
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        found.add(p)
        todo.extend(children.get(p, []))
    return found


def cpu_seconds(pids: set[int]) -> float:
    """User + system CPU time of these processes so far (a process that has exited counts 0)."""
    tick = os.sysconf("SC_CLK_TCK")
    return sum(int(f[11]) + int(f[12]) for f in map(_stat, pids) if f) / tick


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(app_dir: Path, env: dict[str, str] | None = None, log: Path | None = None):
    """A `streamlit run app.py` in app_dir on a free port; yields its URL and process.
    log: where its output goes (default $BENCH_SERVER_LOG, else nowhere)."""
    port = free_port()
    log = log or (Path(os.environ["BENCH_SERVER_LOG"]) if os.environ.get("BENCH_SERVER_LOG") else None)
    out = open(log, "w") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
        + ["--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=str(app_dir),
        env={**os.environ, "PYTHONPATH": str(app_dir), **(env or {})},
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(2400):  # polled often: the cold start is timed from here
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"streamlit did not start in {app_dir}")
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log:
            out.close()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
