"""Lecture mode through AppTest: roles (the teacher key, refusals, training only for the teacher), a class following
the teacher's view, exploring alone, the questions the model answers, the teacher's reload and the lecture's end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from apptest import EN, app, figures, run, z_of
from conftest import ROOT

from pages._ui import lecture, lecture_banner, roles
from pages._ui.probe import probe_card
from pages._ui.room import report_rows
from transformer import jobs
from transformer.checkpoint import load_checkpoint
from transformer.inspection.card import best_probe_head, route_kind
from transformer.inspection.questions import QuestionKind
from transformer.layout import DEFAULT_CHECKPOINT

KEY = "a-teacher-key-for-the-tests"
pytestmark = pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="no shipped checkpoint")


@pytest.fixture
def lecture_mode(monkeypatch):
    monkeypatch.setenv(roles.KEY_ENV, KEY)
    monkeypatch.setattr(lecture, "SIGNALS", ROOT / "test-artifacts" / "lecture-signals")
    for code in lecture.store().codes():
        lecture.store().close(code)
    yield
    for code in lecture.store().codes():
        lecture.store().close(code)


def teacher(page: str | None = None):
    at = app(page)
    at.query_params[roles.PARAM] = KEY
    return run(at)


def open_lecture(at) -> str:
    at.button(key="lecture_open").click()
    run(at)
    return at.session_state[lecture.LECTURE]


def student(code: str | None = None, page: str | None = None):
    at = app(page)
    if code is not None:
        at.query_params["join"] = code
    return run(at)


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_without_lecture_mode_everything_works_as_today_and_a_key_gives_no_role(monkeypatch):
    monkeypatch.delenv(roles.KEY_ENV, raising=False)
    monkeypatch.delenv(roles.LECTURE_ENV, raising=False)
    at = app("training")
    at.query_params[roles.PARAM] = KEY
    run(at)
    assert roles.ROLE not in at.session_state and "_refused_key" not in at.session_state
    assert roles.PARAM not in at.query_params
    assert at.button(key="train_start") is not None  # the form, as before
    assert not at.get("text_input") or all(t.key != "lecture_code" for t in at.text_input)


@pytest.mark.parametrize("offered", ["wrong", "", KEY + "x", KEY.upper()])
def test_a_wrong_or_missing_key_is_refused_leaves_no_role_and_leaves_the_address_bar(lecture_mode, offered):
    at = app()
    at.query_params[roles.PARAM] = offered
    run(at)
    assert roles.ROLE not in at.session_state
    assert EN("lecture.refused.key") in errors(at)
    assert roles.PARAM not in at.query_params
    assert all(b.key != "lecture_open" for b in at.button)  # a student cannot open a lecture


def test_the_teacher_key_gives_the_role_and_leaves_the_address_bar(lecture_mode):
    at = teacher()
    assert at.session_state[roles.ROLE] == roles.Role.TEACHER
    assert roles.PARAM not in at.query_params
    assert at.button(key="lecture_open") is not None


def _hold_job_lock(root):
    """A process holding the job lock, as a running training process does (the lock is per process)."""
    code = (
        "import sys, time; from transformer.training.lock import RunLock; "
        f"RunLock({str(jobs.job_dir(root))!r}, name='lock').__enter__(); print('held', flush=True); time.sleep(120)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=str(ROOT), stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_student_cannot_start_stop_or_delete_a_job_and_the_teacher_can(lecture_mode, tmp_path, monkeypatch):
    root = tmp_path / "root"
    shutil.copytree(DEFAULT_CHECKPOINT.parent / "tiny", root / "tiny")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(root))
    jobs.job_dir(root).mkdir(parents=True)
    job = jobs.Job("mine", str(root / "mine"), ["python"], 999_999, 0.0, 10)
    (jobs.job_dir(root) / "job.json").write_text(json.dumps(job.__dict__))
    shutil.copytree(root / "tiny", root / "mine")  # a finished run
    (jobs.job_dir(root) / "mine.log").write_text("done")

    pupil = student(page="training")
    keys = {b.key for b in pupil.button}
    assert "train_delete" not in keys and "train_stop" not in keys
    assert pupil.get("form") == [] or all(b.key != "train_start" for b in pupil.button)
    assert EN("train.teacher_only") in [i.value for i in pupil.info]
    proc = _hold_job_lock(root)
    try:
        pupil = student(page="training")
        assert all(b.key != "train_stop" for b in pupil.button)
        t = teacher("training")
        assert t.button(key="train_stop") is not None
    finally:
        proc.kill()
        proc.wait()
    t = teacher("training")
    t.button(key="train_delete").click()
    run(t)
    assert not (root / "mine").exists() and jobs.last_job(root) is None
    assert (root / "tiny").exists()


def test_delete_refuses_a_folder_holding_what_a_run_does_not_write(tmp_path):
    root = tmp_path
    jobs.job_dir(root).mkdir(parents=True)
    (root / "mine").mkdir()
    (root / "mine" / "photo.jpg").write_text("precious")
    job = jobs.Job("mine", str(root / "mine"), ["python"], 999_999, 0.0, 10)
    (jobs.job_dir(root) / "job.json").write_text(json.dumps(job.__dict__))
    with pytest.raises(jobs.JobError):
        jobs.delete(root)
    assert (root / "mine" / "photo.jpg").read_text() == "precious"


def test_students_follow_the_teacher_explore_alone_rejoin_and_never_move_the_class(lecture_mode):
    t = teacher()
    code = open_lecture(t)
    by_link = student(code)
    assert by_link.session_state[lecture.LECTURE] == code and by_link.session_state[lecture.FOLLOWING]
    by_code = student()
    by_code.text_input(key="lecture_code").input(code.lower())
    by_code.button(key="lecture_join_button").click()
    run(by_code)
    assert by_code.session_state[lecture.LECTURE] == code
    assert [c.value for c in t.markdown if "students connected" in c.value]

    # the teacher changes sentence, tab and head: both students follow, on their next run
    t.session_state["text"] = "The dog didn't cross the road because it was too tired."
    t.session_state["explorer_tab"] = "overview"
    t.session_state["pick_layer"] = 0
    run(t)
    for s in (by_link, by_code):
        run(s)
        assert s.session_state["text"] == "The dog didn't cross the road because it was too tired."
        for key in ("explorer_tab", "pick_kind", "pick_layer", "pick_head"):  # as the teacher's page set them
            assert s.session_state[key] == t.session_state[key], key
    # one student explores alone: their own sentence never reaches the teacher nor the other student
    by_code.button(key="lecture_explore").click()
    run(by_code)
    by_code.session_state["text"] = "My own secret sentence."
    run(by_code)
    run(t)
    run(by_link)
    assert t.session_state["text"] != "My own secret sentence."
    assert by_link.session_state["text"] != "My own secret sentence."
    # the class moves on; the explorer stays where they are, then rejoins and catches up
    t.session_state["pick_layer"] = 1
    run(t)
    run(by_code)
    assert by_code.session_state["text"] == "My own secret sentence."
    by_code.button(key="lecture_rejoin").click()
    run(by_code)
    run(by_code)
    assert t.session_state["pick_layer"] == 1 and by_code.session_state["pick_layer"] == 1
    assert by_code.session_state["text"] == "The dog didn't cross the road because it was too tired."


def test_an_unknown_code_is_refused(lecture_mode):
    s = student("ZZZZZ")
    assert lecture.LECTURE not in s.session_state
    assert EN("lecture.refused.unknown_code") in errors(s)


def test_each_question_is_answered_by_the_model_counted_revealed_and_exported(lecture_mode):
    t = teacher()
    code = open_lecture(t)
    pupils = [student(code) for _ in range(3)]
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    from pages._ui import cache

    a = cache.analyse(str(DEFAULT_CHECKPOINT), t.session_state["text"], 1)
    for kind in QuestionKind:
        t.button(key=f"lecture_ask_{kind.value}").click()
        run(t)
        q = lecture.store().snapshot(code).question
        quiz = q.quiz
        if kind is QuestionKind.ATTENDS:  # the view's head, the pronoun's row: the largest weight of the map
            row = a.pronoun_step if quiz.head.kind is not quiz.head.kind.ENCODER else a.pronoun_source
            weights = a.maps(quiz.head.kind)[quiz.head.layer, quiz.head.head, row]
            assert quiz.answer == int(np.argmax(weights)) and quiz.token == a.labels(quiz.head.kind)[0][row]
            # the map shown at the reveal is the head's whole map, the asked row among its rows
            np.testing.assert_allclose(np.array(quiz.grid), a.maps(quiz.head.kind)[quiz.head.layer, quiz.head.head])
            assert quiz.row == row and quiz.grid_cols == tuple(a.labels(quiz.head.kind)[1])
        elif kind is QuestionKind.NEXT:  # the most probable next piece, among five shuffled
            assert sorted(quiz.options) == sorted(a.top_tokens[a.pronoun_step])
            assert quiz.options[quiz.answer] == a.top_tokens[a.pronoun_step][0]
        else:  # the probe's best head, where the checkpoint decides il/elle
            card = probe_card(ckpt)
            best = best_probe_head(card, ckpt.config, route_kind(card, ckpt.config)).head
            assert quiz.head == best and quiz.options[quiz.answer] == f"{best.layer}·{best.head}"
            # the map shown at the reveal: every head's score, layer by layer, the best at its place
            assert np.array(quiz.grid).shape == (ckpt.config.n_layers(best.kind), ckpt.config.n_heads)
            assert np.array(quiz.grid)[best.layer, best.head] == max(quiz.evidence)
        for i, p in enumerate(pupils):
            run(p)
            p.get("button_group")[0].set_value(i % len(quiz.options))
            run(p)
        run(t)
        counts = lecture.store().snapshot(code).question.counts()
        assert sum(counts) == 3
        assert EN("lecture.answered", n=3, connected=3) in [c.value for c in t.caption]
        t.button(key="lecture_reveal").click()
        run(t)
        for p in pupils:
            run(p)
            assert any(EN("lecture.answer", option="", value=0.0).split("**")[0] in s.value for s in p.success)
        if quiz.grid:  # the projector and every student draw the map that gives the answer
            shown = figures(t)["lecture_evidence_map"]
            np.testing.assert_allclose(z_of(shown["data"][0]), np.array(quiz.grid), rtol=1e-6)
            assert f"lecture_evidence_{q.number}_map" in figures(pupils[0])
    csv = t.get("download_button")
    assert any(b.proto.id.endswith("lecture_csv") for b in csv)
    rows = report_rows(lecture.store().snapshot(code))
    assert sum(r["answers"] for r in rows) == 9 and {r["question"] for r in rows} == {1, 2, 3}


def test_the_lecture_survives_the_teachers_reload_and_its_end_frees_the_class(lecture_mode, monkeypatch):
    t = teacher()
    code = open_lecture(t)
    s = student(code)
    # a reload: a new session, the key gone from the address bar, the browser's session cookie sent
    monkeypatch.setattr(roles, "_cookies", lambda: {roles.COOKIE: roles._cookie_value(KEY)})
    again = run(app())
    assert again.session_state[roles.ROLE] == roles.Role.TEACHER
    assert again.session_state[lecture.LECTURE] == code
    monkeypatch.setattr(roles, "_cookies", lambda: {roles.COOKIE: "forged"})
    other = run(app())
    assert roles.ROLE not in other.session_state
    again.button(key="lecture_end").click()
    run(again)
    run(s)
    assert lecture.LECTURE not in s.session_state
    assert EN("lecture.ended") in [i.value for i in s.info]


def test_teacher_and_students_keep_their_own_interface_languages(lecture_mode):
    from pages._ui.i18n import Translator

    t = teacher()
    code = open_lecture(t)
    zh = app(lang="zh")
    zh.query_params["join"] = code
    run(zh)
    t.button(key="lecture_ask_next").click()
    run(t)
    run(zh)
    assert zh.session_state["lang"] == "zh" and t.session_state["lang"] == "en"
    question = lecture.store().snapshot(code).question
    assert any(s.value == lecture_banner.prompt(question, Translator("zh")) for s in zh.markdown)
    assert any(s.value == lecture_banner.prompt(question, EN) for s in t.markdown)
    assert Translator("zh")("lecture.following", code=code) in [c.value for c in zh.caption]


def test_a_signal_reruns_each_connected_student_on_their_sessions_event_loop(monkeypatch):
    calls = []

    class Loop:
        def call_soon_threadsafe(self, fn):
            calls.append("handed to the loop")
            fn()

    class Session:
        def __init__(self, sid):
            self.id, self._event_loop, self._client_state = sid, Loop(), f"last state of {sid}"

        def request_rerun(self, client_state):
            calls.append((self.id, client_state))

    class Manager:
        def get_active_session_info(self, sid):
            return None if sid == "gone" else type("Info", (), {"session": Session(sid)})()

    runtime = type("Runtime", (), {"_session_mgr": Manager()})()
    monkeypatch.setattr(lecture.Runtime, "exists", staticmethod(lambda: True))
    monkeypatch.setattr(lecture.Runtime, "instance", staticmethod(lambda: runtime))
    assert lecture.push(("a", "gone", "b")) == 2  # a closed tab is skipped: its next visit follows anyway
    assert calls == ["handed to the loop", ("a", "last state of a"), "handed to the loop", ("b", "last state of b")]
    # a Streamlit whose internals differ: nothing pushed and nothing raised (the pages' poll still follows)
    monkeypatch.setattr(lecture.Runtime, "instance", staticmethod(lambda: object()))
    assert lecture.push(("a",)) == 0
    monkeypatch.setattr(lecture.Runtime, "exists", staticmethod(lambda: False))
    assert lecture.push(("a",)) == 0  # no server (AppTest)


def _click_in_the_overview(code: str, kind_value: str, layer: int, head: int) -> None:
    """A student's session in which the overview's chart reports a click on a head's ring (its on_select)."""
    import streamlit as st

    from pages import explorer
    from pages._ui import lecture
    from pages._ui.session import PICK
    from transformer.attention import AttentionKind

    st.session_state[lecture.STUDENT] = "clicker"
    lecture._enter(code)  # a student of the class
    st.session_state[f"{PICK}_kind"] = AttentionKind(kind_value)
    st.session_state["overview_chart"] = {"selection": {"points": [{"customdata": [layer, head]}]}}
    explorer._enlarge_clicked()


def test_a_student_answers_which_head_resolves_it_by_clicking_the_head_in_the_overview(lecture_mode):
    from streamlit.testing.v1 import AppTest

    from transformer.attention import HeadId
    from transformer.inspection.questions import head_option

    t = teacher()
    code = open_lecture(t)
    t.button(key=f"lecture_ask_{QuestionKind.RESOLVES.value}").click()
    run(t)
    quiz = lecture.store().snapshot(code).question.quiz
    best = quiz.head
    assert head_option(quiz, best) == quiz.answer  # the head itself is the answer's option
    assert head_option(quiz, HeadId(best.kind, 99, 0)) is None  # no such layer
    other = next(k for k in type(best.kind) if k is not best.kind)
    assert head_option(quiz, HeadId(other, best.layer, best.head)) is None  # a head of another kind answers nothing

    def click(layer: int, head: int, kind=best.kind) -> None:
        at = AppTest.from_function(_click_in_the_overview, args=(code, kind.value, layer, head))
        at.run()
        assert not at.exception, at.exception

    click(best.layer, best.head)
    question = lecture.store().snapshot(code).question
    assert question.answers == {"clicker": quiz.answer}  # counted as the right head
    click(0, 0)  # changed their mind before the reveal
    assert lecture.store().snapshot(code).question.answers == {"clicker": head_option(quiz, HeadId(best.kind, 0, 0))}
    click(best.layer, best.head, kind=other)  # the overview of another kind: no answer changes
    assert lecture.store().snapshot(code).question.answers == {"clicker": head_option(quiz, HeadId(best.kind, 0, 0))}
    t.button(key="lecture_reveal").click()
    run(t)
    click(best.layer, best.head)  # after the reveal, a click only enlarges the head
    assert lecture.store().snapshot(code).question.answers == {"clicker": head_option(quiz, HeadId(best.kind, 0, 0))}
