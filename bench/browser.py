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

# True once the script has finished, nothing is stale, `expected` is on the page and every visible chart
# whose axes name source pieces shows `marker` (i.e. plotly has drawn the new data).
REDRAWN = """([expected, marker, minCharts]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') === 'running') return false;
  if (document.querySelector('[data-testid="stElementContainer"][data-stale="true"]')) return false;
  if (expected && !document.body.innerText.includes(expected)) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.offsetParent !== null);
  if (plots.length < minCharts) return false;
  if (!plots.every(p => p.querySelector('.heatmaplayer image, .barlayer path, .scatterlayer path'))) return false;
  if (!marker) return true;
  const names = p => {
    const d = (p.data && p.data[0]) || {};
    const ax = (p.layout && p.layout.xaxis) || {};
    return [].concat(d.x || [], ax.ticktext || []).join(' ');
  };
  return plots.some(p => names(p).includes(marker));
}"""


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(app_dir: Path, env: dict[str, str] | None = None, log: Path | None = None):
    """A `streamlit run app.py` in app_dir on a free port; yields its URL and process."""
    port = free_port()
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
        for _ in range(240):
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
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
