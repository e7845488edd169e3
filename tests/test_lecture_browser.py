"""A lecture in Debian's chromium: one teacher and three students on one server. Join by link and by code, follow
the teacher, break away and rejoin, a question answered by all, counted and revealed, and the teacher's reload."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import bench_lecture as bl  # noqa: E402
from browser import launch  # noqa: E402
from browser import server as streamlit_server  # noqa: E402

from pages._ui.i18n import Translator
from transformer.checkpoint import load_checkpoint
from transformer.layout import DEFAULT_CHECKPOINT

EN = Translator("en")
CHROMIUM = "/usr/bin/chromium"
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="no shipped checkpoint")]


@pytest.fixture(scope="module")
def url():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is not installed (scripts/test.sh installs it)")
        pytest.skip("Debian's chromium is not installed")
    # no polling: the class follows by the push alone (the static file is the safety net under it)
    env = {"TRANSFORMER_TEACHER_KEY": bl.KEY, "TRANSFORMER_LECTURE_WATCH_MS": "0"}
    with streamlit_server(ROOT, env=env) as (address, _):
        yield address


def test_a_class_joins_follows_breaks_away_rejoins_answers_and_survives_the_teachers_reload(url):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            teacher, code = bl.open_teacher(browser, url)
            students = bl.open_students(browser, url, code, 2)
            # the third student types the code in the sidebar
            typed = browser.new_context().new_page()
            typed.add_init_script(bl.VIEWS)
            typed.goto(url, wait_until="domcontentloaded")
            typed.get_by_label(EN("lecture.code")).fill(code.lower())
            typed.get_by_role("button", name=EN("lecture.join")).click()
            typed.locator('[class*="st-key-lecture_view_"]').first.wait_for(timeout=120_000)
            students.append(typed)
            expect(teacher.locator(".st-key-lecture_count")).to_contain_text("3", timeout=30_000)

            # the teacher picks another layer than the one the page opens on (the default's probe head's): every
            # screen follows, without a reload
            opened = load_checkpoint(DEFAULT_CHECKPOINT).card["real_coref"]["best_heads"]["encoder/pronoun"]["layer"]
            other = 1 if opened != 1 else 0
            row = bl.change(teacher, students, os.getpid(), bl.pick_layer, other)
            assert row["max_s"] < 60
            for page in students:
                expect(page.get_by_label(EN("common.layer")).first).to_have_value(str(other))

            # one student explores alone: the next change leaves them where they are; rejoining catches up
            alone = students[0]
            alone.get_by_role("button", name=EN("lecture.explore")).click()
            expect(alone.get_by_role("button", name=EN("lecture.rejoin"))).to_be_visible(timeout=30_000)
            bl.change(teacher, students[1:], os.getpid(), bl.type_sentence, bl.SENTENCES[0])
            expect(alone.get_by_text("parce qu'il", exact=False).first).to_be_visible(timeout=5_000)  # still theirs
            assert "dog" not in alone.get_by_label(EN("sidebar.sentence")).input_value()
            alone.get_by_role("button", name=EN("lecture.rejoin")).click()
            expect(alone.get_by_label(EN("sidebar.sentence"))).to_have_value(bl.SENTENCES[0], timeout=60_000)

            # a question: everyone answers, the count is exact, the reveal reaches everyone
            quiz = bl.question_round(teacher, students)
            assert quiz["answers"] == 3

            # the teacher reloads: the role and the lecture are still there, and the class still follows
            teacher.reload(wait_until="domcontentloaded")
            expect(teacher.locator(".st-key-lecture_code_shown")).to_contain_text(code, timeout=120_000)
            assert "teacher=" not in teacher.url
            teacher.get_by_role("tab", name=EN("explorer.tab.overview"), exact=True).click()
            bl.change(teacher, students, os.getpid(), bl.pick_layer, opened)  # back from `other`

            # the lecture ends: every student explores on their own again
            teacher.get_by_role("button", name=EN("lecture.end")).click()
            for page in students:
                expect(page.get_by_text(EN("lecture.ended"))).to_be_visible(timeout=60_000)
        finally:
            browser.close()
