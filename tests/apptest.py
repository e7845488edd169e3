"""Helpers for AppTest runs of the app: find elements by key, read figures, switch tabs by catalogue key."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from pages._ui.i18n import Translator

APP = str(ROOT / "app.py")
EN = Translator("en")


def app(page: str | None = None, **state) -> AppTest:
    """A fresh AppTest of the entry page, with session state set before the first run.

    page: a url path of st.navigation (the pages are functions, so AppTest.switch_page, which
    matches files, cannot find them; the registered page's hash is looked up instead).
    """
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in state.items():
        at.session_state[key] = value
    if page is not None:
        at.run()
        hashes = [h for h, info in at._registered_pages.items() if info.get("url_pathname") == page]
        assert hashes, f"no page {page!r}"
        at._page_hash = hashes[0]
    return at


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def settle(at: AppTest) -> AppTest:
    """Run again until the background lane has nothing left for this page (a heavy tab shows progress first)."""
    from pages._ui import background

    for _ in range(50):
        busy = background.drain()
        # a job may have ended before drain looked (then drain says False): the page still shows its bar
        if not busy and not at.get("progress"):
            return at
        run(at)
    raise AssertionError("the page still shows progress after 50 runs")


def tab(at: AppTest, key: str, tab_key: str) -> AppTest:
    """Open a tab by its catalogue key: the session keeps the open tab's id (the key's last part) under `key`."""
    at.session_state[key] = tab_key.rsplit(".", 1)[-1]
    return run(at)


def z_of(trace: dict) -> np.ndarray:
    z = trace["z"]
    if isinstance(z, dict):  # plotly's typed-array encoding
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        return arr.reshape([int(s) for s in str(z["shape"]).split(",")]) if "shape" in z else arr
    return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)


def figures(at: AppTest) -> dict[str, dict]:
    """key -> plotly spec of every chart on the page (an attention heatmap's canvas chart gets plotly's dict too)."""
    out = {}
    for el in at.get("plotly_chart"):
        key = el.proto.id.rsplit("-", 1)[-1]
        out[key] = json.loads(el.proto.spec)
    for el in at.get("bidi_component"):
        if el.proto.component_name == "attention_heatmap":
            out[el.proto.id.rsplit("-", 1)[-1]] = json.loads(el.proto.json)
    return out


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def node_text(node) -> str:
    """Every text value inside a keyed container."""
    parts = []
    for el in node:
        value = getattr(el, "value", None)
        if isinstance(value, str):
            parts.append(value)
    return "\n".join(parts)


def check_value(at: AppTest, name: str) -> float:
    """The number a page printed in its check `name` (widgets.check)."""
    text = node_text(at.get_by_key(f"check_{name}"))
    m = re.search(r"`([-+0-9.eE]+|inf|nan)`", text)
    assert m, text
    return float(m.group(1))


def table(at: AppTest, key: str):
    """The DataFrame shown in the keyed container `key` (widgets.table)."""
    frames = [el for el in at.get_by_key(key) if getattr(el, "type", "") == "dataframe"]
    assert frames, key
    return frames[0].value


def checkpoint_names(at: AppTest) -> list[str]:
    """The sidebar picker's checkpoints by name (each option reads "name · en → fr": the model's language pair)."""
    return [o.rsplit(" · ", 1)[0] for o in at.sidebar.selectbox(key="checkpoint").options]
