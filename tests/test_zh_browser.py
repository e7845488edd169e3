"""A real browser on an English → Chinese model (issue 34): a heatmap whose query labels are Chinese pieces is
drawn with real glyphs (no missing-glyph boxes) and its camera icon exports a PNG."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from zh_fixture import train_tiny_writer

from transformer.layout import SHIPPED_ROOT

sys.path.insert(0, str(ROOT / "bench"))
from browser import launch  # noqa: E402
from browser import server as streamlit_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
HEATMAP = ".attn-heatmap[data-drawn]"
# A drawn heatmap whose query labels (the target pieces) hold Chinese characters
CHINESE_MAP = (
    "() => [...document.querySelectorAll('.attn-heatmap[data-drawn]')].some(el => el.__chart &&"
    " el.__chart.data[0].y.some(s => /[\\u4e00-\\u9fff]/.test(s)))"
)
# Two different CJK characters drawn in the heatmap's own font: a missing glyph draws both as the same box
SAME_GLYPH = """el => {
  const font = getComputedStyle(el).fontFamily || 'sans-serif';
  const draw = ch => {
    const c = document.createElement('canvas'); c.width = 40; c.height = 40;
    const g = c.getContext('2d'); g.font = `28px ${font}`; g.fillStyle = '#000'; g.fillText(ch, 4, 32);
    return Array.from(g.getImageData(0, 0, 40, 40).data).join(',');
  };
  return draw('书') === draw('猫');
}"""

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def zh_server(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")

    from transformer.checkpoint import update_card

    tmp = tmp_path_factory.mktemp("zh-browser")
    root = tmp / "checkpoints"
    train_tiny_writer(tmp, root / "tiny-en-zh")
    update_card(root / "tiny-en-zh", {"source_lang": "en", "target_lang": "zh"})
    if (SHIPPED_ROOT / "en-zh" / "card.json").is_file():  # the shipped model too, hard-linked (no copy)
        shutil.copytree(SHIPPED_ROOT / "en-zh", root / "en-zh", copy_function=os.link)
    with streamlit_server(ROOT, env={"TRANSFORMER_CHECKPOINTS": str(root)}) as (url, _):
        yield url


def test_a_heatmap_with_chinese_query_labels_draws_real_glyphs_and_exports_a_png(zh_server):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1500, "height": 1100}, accept_downloads=True)
        page.goto(f"{zh_server}/?ckpt=tiny-en-zh&text=the+book+is+on+the+table.", wait_until="domcontentloaded")
        expect(page.locator(HEATMAP).first).to_be_visible(timeout=90_000)
        page.wait_for_function(CHINESE_MAP, timeout=90_000)
        maps = page.locator(HEATMAP)
        chinese = None
        for i in range(maps.count()):
            rows = maps.nth(i).element_handle().evaluate("el => el.__chart.data[0].y")
            if any("\u4e00" <= ch <= "\u9fff" for r in rows for ch in r):
                chinese = maps.nth(i)
                break
        assert chinese is not None
        rows = chinese.element_handle().evaluate("el => el.__chart.data[0].y")
        assert "书" in "".join(rows) and "桌子" in "".join(rows), rows  # the model's own translation
        assert not chinese.element_handle().evaluate(SAME_GLYPH), "Chinese pieces draw as missing-glyph boxes"
        chinese.hover()
        with page.expect_download() as download:
            chinese.locator(".attn-button").last.click()
        path = Path(download.value.path())
        assert download.value.suggested_filename == "attention.png"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5_000
        (ROOT / "test-artifacts").mkdir(exist_ok=True)
        (ROOT / "test-artifacts" / "heatmap-en-zh.png").write_bytes(path.read_bytes())
        page.screenshot(path=str(ROOT / "test-artifacts" / "explorer-en-zh.png"), full_page=True)
        browser.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("ckpt", ["tiny-en-zh", "en-zh"])
def test_every_page_renders_on_an_en_zh_model_in_both_interface_languages(zh_server, ckpt, lang):
    """Every page, opened with an en-zh model selected (?ckpt=...: a tiny one trained here, and the shipped one), in
    either interface language: the page draws, shows no exception, and its Chinese target pieces are real glyphs
    wherever an attention map has them."""
    import time

    from playwright.sync_api import expect, sync_playwright

    if ckpt == "en-zh" and not (SHIPPED_ROOT / "en-zh" / "card.json").is_file():
        pytest.skip("checkpoints/en-zh not present")

    pages = ["explorer", "headlab", "masks", "positions", "arithmetic", "multihead", "variants"]
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for url_path in pages:
            page.goto(
                f"{zh_server}/{url_path}?lang={lang}&ckpt={ckpt}&text=the+book+is+on+the+table.",
                wait_until="domcontentloaded",
            )
            expect(page.get_by_role("heading", level=1).first).to_be_visible(timeout=90_000)
            page.wait_for_function(
                "() => document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state') "
                "!== 'running'",
                timeout=90_000,
            )
            if ckpt == "en-zh" and url_path == "explorer":  # the shipped model's own translation, in Chinese
                page.wait_for_function(CHINESE_MAP, timeout=90_000)
            time.sleep(0.8)
            assert page.locator('[data-testid="stException"]').count() == 0, (url_path, lang, ckpt)
            for i in range(page.locator(HEATMAP).count()):
                el = page.locator(HEATMAP).nth(i).element_handle()
                labels = "".join(el.evaluate("el => el.__chart.data[0].y.concat(el.__chart.data[0].x)"))
                if any("\u4e00" <= ch <= "\u9fff" for ch in labels):
                    assert not el.evaluate(SAME_GLYPH), (url_path, lang, ckpt)
        browser.close()
