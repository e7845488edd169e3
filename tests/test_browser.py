"""A real browser: start the server, type the flagship sentence in Debian's chromium, focus "it", screenshot."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from browser import launch  # noqa: E402
from browser import server as streamlit_server  # noqa: E402

from pages._ui.i18n import Translator
from transformer.checkpoint import load_checkpoint
from transformer.corpus import SEED_SENTENCES
from transformer.inspection.card import route_kind
from transformer.layout import DEFAULT_CHECKPOINT, SHIPPED_ROOT

EN = Translator("en")
ARTIFACTS = ROOT / "test-artifacts"
HEATMAP = ".attn-heatmap[data-drawn]"  # the app's canvas heatmap (pages/_ui/heatmap.js), once drawn
TITLE = ".gtitle, .attn-title"  # a chart's title: plotly's, or the canvas heatmap's
CHROMIUM = "/usr/bin/chromium"

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="no shipped checkpoint")]


def checkpoint_root(tmp: Path) -> Path:
    """A checkpoints root for the server: the shipped checkpoints, hard-linked (no copy, no symlink)."""
    root = tmp / "checkpoints"
    root.mkdir()
    for ckpt in SHIPPED_ROOT.iterdir():
        if ckpt.is_dir() and not ckpt.name.startswith("."):
            shutil.copytree(ckpt, root / ckpt.name, copy_function=os.link)
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app on a free port, over a checkpoints root of its own (training runs write there)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is not installed (scripts/test.sh installs it)")
        pytest.skip("Debian's chromium is not installed")
    root = checkpoint_root(tmp_path_factory.mktemp("root"))
    with streamlit_server(ROOT, env={"TRANSFORMER_CHECKPOINTS": str(root)}) as (url, _):
        yield url


TITLES = {  # url path -> the key of its page's title (h1); "" is the default page
    "": "explorer.title",
    "explorer": "explorer.title",
    "headlab": "lab.title",
    "masks": "masks.title",
    "positions": "positions.title",
    "arithmetic": "steps.title",
    "multihead": "multihead.title",
    "variants": "variants.title",
    "training": "train.title",
}
# Installed before the app's scripts: every navigation label and every dialog the page ever shows (a
# mutation observer's callback runs before the next paint, so nothing drawn escapes it).
WATCH = """(() => {
  const seen = (window.__seen = {nav: new Set(), dialogs: []});
  const links = '[data-testid="stSidebarNav"] a, [data-testid="stSidebarNavLink"], [data-testid="stPageLink-NavLink"]';
  const look = () => {
    for (const a of document.querySelectorAll(links)) {
      const lines = a.innerText.split('\\n').map(l => l.trim()).filter(Boolean);  // the icon's name, then the label
      if (lines.length) seen.nav.add(lines[lines.length - 1]);
    }
    for (const d of document.querySelectorAll('[role="dialog"]')) seen.dialogs.push(d.innerText);
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, characterData: true});
})();"""
SEEN = "() => ({nav: [...window.__seen.nav], dialogs: window.__seen.dialogs})"


def nav_titles(tr: Translator) -> set[str]:
    from pages._ui.entry import SECTIONS

    return {tr(title) for entries in SECTIONS.values() for _, title, _ in entries}


@pytest.mark.parametrize("path", ["", "explorer"])
def test_first_paint_of_a_fresh_server_shows_the_catalogue_titles(tmp_path, path):
    """A fresh server's first visit (Streamlit still takes pages/ for old-style pages then): the navigation
    never shows a module name of pages/, only the catalogue's titles, and /explorer opens the explorer."""
    from playwright.sync_api import expect, sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    root = checkpoint_root(tmp_path)
    with streamlit_server(ROOT, env={"TRANSFORMER_CHECKPOINTS": str(root)}) as (url, _), sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.add_init_script(WATCH)
        page.goto(f"{url}/{path}", wait_until="commit")
        expect(page.get_by_role("heading", level=1).first).to_have_text(EN("explorer.title"), timeout=120_000)
        expect(page.locator(f"{HEATMAP} canvas").first).to_be_visible(timeout=60_000)
        expect(page.get_by_test_id("stPageLink-NavLink")).to_have_count(len(nav_titles(EN)), timeout=30_000)
        seen = page.evaluate(SEEN)
        assert page.url.split("?")[0].rstrip("/") == f"{url}/{path}".rstrip("/")
        browser.close()
    assert set(seen["nav"]) == nav_titles(EN), seen["nav"]  # never "app", "explorer", "masks" ...
    assert seen["dialogs"] == []  # no "Page not found"


def test_every_page_path_opens_its_page(server):
    """Every page's url path, the explorer's included, opens that page: its title, no dialog, the same URL."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        for path, title in TITLES.items():
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.add_init_script(WATCH)
            page.goto(f"{server}/{path}", wait_until="commit")
            expect(page.get_by_role("heading", level=1).first).to_have_text(EN(title), timeout=120_000)
            expect(page.get_by_test_id("stPageLink-NavLink")).to_have_count(len(nav_titles(EN)), timeout=30_000)
            page.wait_for_function(
                "() => document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state') "
                "!== 'running'",
                timeout=120_000,
            )
            seen = page.evaluate(SEEN)
            assert seen["dialogs"] == [], path
            assert set(seen["nav"]) == nav_titles(EN), path
            assert page.url.split("?")[0].rstrip("/") == f"{server}/{path}".rstrip("/")
            page.close()
        browser.close()


def test_type_translate_focus_and_screenshot(server):
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(server, wait_until="domcontentloaded")
        box = page.get_by_label(EN("sidebar.sentence"))
        expect(box).to_be_visible(timeout=60_000)
        box.fill(SEED_SENTENCES[1][0])  # first show "wide", then type the flagship
        box.press("Control+Enter")
        expect(page.get_by_text("qu'elle", exact=False).first).to_be_visible(timeout=60_000)
        box.fill(SEED_SENTENCES[0][0])
        box.press("Control+Enter")
        expect(page.get_by_text("parce qu'il", exact=False).first).to_be_visible(timeout=60_000)
        # the three heads are drawn by the app's canvas heatmap
        expect(page.locator(f"{HEATMAP} canvas").first).to_be_visible(timeout=60_000)
        assert page.locator(HEATMAP).count() >= 3
        # the all-heads overview (opens on the kind where the default decides il/elle: its encoder): clicking
        # a head's ring enlarges that head
        page.get_by_role("tab", name=EN("explorer.tab.overview"), exact=True).click()
        overview = page.locator(".js-plotly-plot").filter(has=page.locator(".scatterlayer .point")).first
        expect(overview).to_be_visible(timeout=30_000)
        dot = overview.locator(".scatterlayer .point").nth(4).bounding_box()  # layer 1, head 0 (4 heads)
        page.mouse.click(dot["x"] + dot["width"] / 2, dot["y"] + dot["height"] / 2)  # as a person clicks
        ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
        kind = route_kind(ckpt.card, ckpt.config)
        enlarged = EN("view.head", kind=EN(f"kind.{kind.value}"), layer=1, head=0)
        expect(page.locator(TITLE).filter(has_text=enlarged).first).to_be_visible(timeout=30_000)
        # token focus: open the tab; "it" is the default query, chosen explicitly here
        page.get_by_role("tab", name=EN("explorer.tab.focus")).click()
        select = page.get_by_label(EN("explorer.focus.source"))
        expect(select).to_be_visible(timeout=30_000)
        select.click()
        page.get_by_role("option", name="▁it", exact=False).first.click()
        focus_title = EN("view.focus.encoder", token="▁it")
        expect(page.locator(TITLE).filter(has_text=focus_title).first).to_be_visible(timeout=30_000)
        time.sleep(1.0)  # let plotly finish drawing
        page.screenshot(path=str(ARTIFACTS / "explorer-token-focus.png"), full_page=True)
        browser.close()
    assert (ARTIFACTS / "explorer-token-focus.png").stat().st_size > 10_000


def test_the_heatmap_redraws_in_place_names_cells_zooms_and_saves_a_png(server):
    """The heads tab's canvas heatmaps: a new sentence redraws the same element (no remount) with the
    new pieces; hovering names the cell (query, key, weight); a drag zooms in, a double click zooms out;
    the camera icon downloads a PNG."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1500, "height": 1100}, accept_downloads=True)
        page.goto(server, wait_until="domcontentloaded")
        first = page.locator(HEATMAP).first
        expect(first).to_be_visible(timeout=60_000)
        page.wait_for_function(
            "() => document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state') !== 'running'",
            timeout=60_000,
        )
        handle = first.element_handle()
        drawn = int(handle.get_attribute("data-drawn"))
        box = page.get_by_label(EN("sidebar.sentence"))
        box.fill("The dog didn't cross the bridge because it was too tired.")
        box.press("Control+Enter")
        page.wait_for_function(
            "el => el.isConnected && el.__chart.data[0].y.some(s => s.includes('dog'))", arg=handle, timeout=60_000
        )
        assert int(handle.get_attribute("data-drawn")) > drawn  # the same element, drawn again
        # hover: the cell under the pointer, named by its query and key pieces
        canvas = first.locator("canvas")
        spec = handle.evaluate("el => el.__chart")
        rows, cols = spec["data"][0]["y"], spec["data"][0]["x"]
        margin, height = spec["layout"]["margin"], spec["layout"]["height"]
        b = canvas.bounding_box()
        cell_w = (b["width"] - margin["l"] - margin["r"]) / len(cols)
        cell_h = (height - margin["t"] - margin["b"]) / len(rows)
        x = b["x"] + margin["l"] + 1.5 * cell_w  # the second key
        y = b["y"] + margin["t"] + 0.5 * cell_h  # the first query
        page.mouse.move(x, y)
        tip = first.locator(".attn-tip")
        expect(tip).to_be_visible(timeout=5_000)
        clean = lambda s: s.replace("\u200b", "").replace("&lt;", "<").replace("&gt;", ">")  # noqa: E731
        lines = tip.inner_text().splitlines()
        assert lines[0] == f"{EN('fig.query')}: {clean(rows[0])}" and lines[1] == f"{EN('fig.key')}: {clean(cols[1])}"
        assert lines[2].startswith(f"{EN('fig.weight')}: ")
        # drag over the top-left 2 x 2 cells: zoomed, the reset button shows; a double click zooms out
        reset = first.locator(".attn-button").first
        expect(reset).to_be_hidden()
        page.mouse.move(b["x"] + margin["l"] + 0.2 * cell_w, y)
        page.mouse.down()
        page.mouse.move(b["x"] + margin["l"] + 1.8 * cell_w, b["y"] + margin["t"] + 1.8 * cell_h, steps=4)
        page.mouse.up()
        expect(reset).to_be_visible(timeout=5_000)
        assert handle.evaluate("el => el.__attn.view") == {"r0": 0, "r1": 2, "c0": 0, "c1": 2}
        page.mouse.dblclick(x, y)
        expect(reset).to_be_hidden(timeout=5_000)
        assert handle.evaluate("el => el.__attn.view") == {"r0": 0, "r1": len(rows), "c0": 0, "c1": len(cols)}
        # the camera icon: a PNG of the map
        first.hover()
        with page.expect_download() as download:
            first.locator(".attn-button").last.click()
        path = download.value.path()
        assert download.value.suggested_filename == "attention.png"
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and Path(path).stat().st_size > 5_000
        # its CSV button: the same matrix, written when clicked
        with page.expect_download() as download:
            page.get_by_role("button", name=EN("common.csv")).first.click()
        lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
        assert download.value.suggested_filename.endswith(".csv") and len(lines) == len(rows) + 1
        assert lines[1].startswith(f'"{clean(rows[0])}",')
        browser.close()


def test_a_figure_drawn_without_a_view_downloads_as_svg(server):
    """The overview (a plotly figure, not a typed view): its SVG button, found by its key, downloads a vector
    file with a cell per tile pixel, written when clicked."""
    import xml.etree.ElementTree as ET

    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1500, "height": 1100}, accept_downloads=True)
        page.goto(server, wait_until="domcontentloaded")
        expect(page.locator(HEATMAP).first).to_be_visible(timeout=60_000)
        page.get_by_role("tab", name=EN("explorer.tab.overview"), exact=True).click()
        button = page.locator(".st-key-overview_chart_svg button")
        expect(button).to_be_visible(timeout=30_000)
        with page.expect_download() as download:
            button.click()
        assert download.value.suggested_filename == "overview_chart.svg"
        root = ET.fromstring(Path(download.value.path()).read_text(encoding="utf-8"))
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert len(root.findall("{http://www.w3.org/2000/svg}rect")) > 100
        browser.close()


PAGES = ["explorer", "masks", "positions", "arithmetic", "multihead", "variants"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_renders_in_both_languages_and_is_screenshotted(server, lang):
    """Each page opened from a share link (?lang=...): it draws charts, shows no exception, speaks the language."""
    from playwright.sync_api import expect, sync_playwright

    from pages._ui.i18n import Translator

    tr = Translator(lang)
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for url_path in PAGES:
            page.goto(f"{server}/{url_path}?lang={lang}", wait_until="domcontentloaded")
            expect(page.locator(f".js-plotly-plot, {HEATMAP}").first).to_be_visible(timeout=60_000)
            expect(page.get_by_role("heading", level=1).first).to_be_visible()
            page.wait_for_function(
                "() => document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state') "
                "!== 'running'",
                timeout=60_000,
            )
            time.sleep(0.8)  # let plotly finish drawing
            assert page.locator('[data-testid="stException"]').count() == 0, url_path
            title = page.get_by_role("heading", level=1).first.inner_text()
            assert title.strip() == tr(
                {
                    "explorer": "explorer.title",
                    "masks": "masks.title",
                    "positions": "positions.title",
                    "arithmetic": "steps.title",
                    "multihead": "multihead.title",
                    "variants": "variants.title",
                }[url_path]
            )
            page.screenshot(path=str(ARTIFACTS / f"{url_path}-{lang}.png"), full_page=True)
        browser.close()


def test_train_a_tiny_model_in_the_browser_and_follow_a_probe_link(server):
    """Start a tiny run from the training page, watch the progress bar move, screenshot the curves;
    then open the head lab's best cross head in the explorer."""
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(f"{server}/training", wait_until="domcontentloaded")
        name = page.get_by_label(EN("train.name"), exact=True)
        expect(name).to_be_visible(timeout=60_000)
        name.fill("browser-run")
        steps = page.get_by_label(EN("train.steps"), exact=True)
        steps.fill("150")
        page.get_by_role("button", name=EN("train.start")).click()
        bar = page.locator('[data-testid="stProgress"] [role="progressbar"]')
        expect(bar).to_be_visible(timeout=60_000)
        values = set()
        for _ in range(300):
            values.add(bar.get_attribute("aria-valuenow"))
            if page.get_by_text("browser-run", exact=False).filter(has_text="150").count() and len(values) > 2:
                break
            time.sleep(0.2)
        assert len(values) > 2, values  # the bar moved while the run went on
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
        expect(page.get_by_role("button", name=EN("train.open", name="browser-run"))).to_be_visible(timeout=240_000)
        time.sleep(1.0)
        page.screenshot(path=str(ARTIFACTS / "training-curves.png"), full_page=True)
        # the head lab's probe links into the explorer
        page.goto(f"{server}/headlab", wait_until="domcontentloaded")
        page.get_by_role("tab", name=EN("lab.tab.probe")).click()
        best = load_checkpoint(DEFAULT_CHECKPOINT).card["real_coref"]["best_heads"]["encoder/pronoun"]
        head = f"L{best['layer']} H{best['head']}"  # the default's probe head: its encoder resolves "it"
        link = page.get_by_role("button", name=EN("lab.open_explorer", head=head))
        expect(link.first).to_be_visible(timeout=60_000)
        link.first.click()
        expect(page.get_by_role("heading", name=EN("explorer.title"))).to_be_visible(timeout=60_000)
        enlarged = EN("view.head", kind=EN("kind.encoder"), layer=best["layer"], head=best["head"])
        expect(page.locator(TITLE).filter(has_text=enlarged).first).to_be_visible(timeout=60_000)
        browser.close()


BAD_INPUTS = {
    "empty": "",
    "whitespace": "   \n  ",
    "paste_10000": "the dog " * 1250,
    "emoji": "😀🐶🦓",
    "chinese": "这只动物没有过马路，因为它太累了。",
    "arabic": "لم يعبر الحيوان الشارع لأنه كان متعبا",
    "html_script": "<script>alert('x')</script><b id='injected'>bold</b><img src=x onerror=alert(1)>",
    "control": "The dog\x07 was\x1b[31m too tired.",
    "punctuation": "?!... ;;; ---",
    "paragraph": " ".join(["The dog didn't cross the road because it was too tired."] * 12),
    "unknown_words": "I love you. The cat sat on the windowsill.",  # "windowsill": never in the default's corpus
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_odd_input_in_the_browser(server, name):
    """Each odd input gets a clear message or a valid render: no exception box, no alert, no injected element."""
    from playwright.sync_api import expect, sync_playwright

    text = BAD_INPUTS[name]
    dialogs = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server, wait_until="domcontentloaded")
        box = page.get_by_label(EN("sidebar.sentence"))
        expect(box).to_be_visible(timeout=60_000)
        box.fill("")
        box.focus()
        page.keyboard.insert_text(text)  # as a paste: one input event with the whole text
        box.press("Control+Enter")
        page.wait_for_function(
            "() => document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state') "
            "!== 'running' && !document.querySelector('[data-stale=true]')",
            timeout=60_000,
        )
        time.sleep(0.5)
        body = page.locator("section.main, [data-testid='stMain']").first.inner_text()
        if text.strip():
            assert EN("sentence.translation")[:11] in body  # a translation was rendered ...
            if name != "paragraph":
                notes = page.locator(".st-key-sentence_notes").first.inner_text()
                assert notes.strip(), name  # ... with a note that says what is odd about the input
        else:
            assert EN("sentence.empty")[:30] in body
        assert page.locator('[data-testid="stException"]').count() == 0
        assert not dialogs
        assert page.locator("#injected").count() == 0 and page.locator("img[src=x]").count() == 0
        if name == "paste_10000":
            assert box.input_value() == text  # the paste was kept, not dropped
        browser.close()
