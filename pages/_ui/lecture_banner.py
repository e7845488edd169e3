"""What a lecture shows above the page (lecture.py holds the class and its room): the teacher's projector banner
(join code, QR code, students connected, the questions to ask, the live histogram, the reveal, the CSV) and a
student's class panel (the question, their answer, the model's answer with the map that gives it).

Each question's answer comes from the model at the moment it is asked (transformer/inspection/questions.py).
"""

from __future__ import annotations

import os
import secrets
import time
from urllib.parse import urlsplit

import numpy as np
import segno
import streamlit as st

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import CheckpointError
from transformer.inspection import questions
from transformer.inspection.questions import NoQuestion, QuestionKind

from . import cache, figures, lecture, roles
from .export import table_csv
from .i18n import Translator, md_token
from .probe import default_head, default_kind, probe_card
from .room import Question, RoomError, report_rows
from .session import PICK, subject
from .widgets import csv_button, plot

TEACHER_POLL_S = 1.0  # the projector's count and histogram


def banner(tr: Translator) -> None:
    """The teacher's projector banner, or a student's class panel; nothing outside a lecture."""
    if not roles.lecture_mode():
        return
    if roles.is_teacher():
        if lecture.teacher_room() is not None:
            _teacher_banner(tr.lang)
    elif st.session_state.get(lecture.LECTURE) is not None:
        _student_banner(tr)


def join_url(code: str) -> str:
    """The link a student opens (the QR code's): the address the teacher's browser used, or
    $TRANSFORMER_PUBLIC_URL (scripts/lecture.py sets it to this machine's address on the network)."""
    base = os.environ.get("TRANSFORMER_PUBLIC_URL", "").rstrip("/")
    if not base:
        try:
            parts = urlsplit(str(st.context.url))
            base = f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""
        except Exception:  # no request (AppTest)
            base = ""
    return f"{base or 'http://localhost:8501'}/?join={code}"


@st.dialog(" ", width="large")
def _join_dialog(code: str, lang: str) -> None:
    tr = Translator(lang)
    url = join_url(code)
    st.markdown(tr("lecture.join_big", code=code))
    st.image(segno.make(url, error="m").svg_data_uri(scale=10), width=420)
    st.code(url, language=None)


@st.fragment(run_every=TEACHER_POLL_S)
def _teacher_banner(lang: str) -> None:
    tr = Translator(lang)
    code = lecture.teacher_room()
    if code is None:
        return
    rooms = lecture.store()
    try:
        rooms.teacher_seen(code)
        room = rooms.snapshot(code)
    except RoomError:
        return
    with st.container(key="lecture_banner", border=True):
        c1, c2, c3 = st.columns([2, 2, 3])
        with c1, st.container(key="lecture_code_shown"):
            st.markdown(tr("lecture.code_shown", code=code))
        with c2, st.container(key="lecture_count"):
            st.markdown(tr("lecture.connected", n=room.connected(time.monotonic(), lecture.active_sessions())))
        with c3:
            if st.button(tr("lecture.show_code"), key="lecture_show_code"):
                _join_dialog(code, lang)
        a1, a2, a3 = st.columns(3)
        for col, kind in zip((a1, a2, a3), QuestionKind):
            col.button(tr(f"lecture.ask.{kind.value}"), key=f"lecture_ask_{kind.value}", on_click=_ask, args=(kind,))
        reason = st.session_state.pop("_ask_refused", None)
        if reason:
            st.warning(tr("lecture.no_question", reason=reason))
        question = room.question
        if question is not None:
            _teacher_question(question, room.connected(time.monotonic(), lecture.active_sessions()), tr)
        if room.questions:
            csv_button(
                lambda: table_csv(report_rows(lecture.store().snapshot(code))), f"lecture-{code}", "lecture_csv", tr
            )


def _view_head(ckpt, a) -> HeadId:
    """The view's head: the shared picker's, else where the checkpoint decides il/elle."""
    ss = st.session_state
    kind = ss.get(f"{PICK}_kind")
    kind = kind if isinstance(kind, AttentionKind) else default_kind(ckpt)
    head = default_head(ckpt, kind)
    layer, h = ss.get(f"{PICK}_layer", head.layer), ss.get(f"{PICK}_head", head.head)
    if ss.get(f"{PICK}_origin", (str(ckpt.path), kind))[1] != kind:
        layer, h = head.layer, head.head
    return HeadId(kind, int(layer), int(h)) if layer < ckpt.config.n_layers(kind) and h < ckpt.config.n_heads else head


def _view_row(a, kind: AttentionKind) -> int:
    """The view's focused token among the kind's query rows (the explorer's focus pickers), else the pronoun's."""
    ss = st.session_state
    key, default = ("focus_src", a.pronoun_source) if kind is AttentionKind.ENCODER else ("focus_tgt", a.pronoun_step)
    origin = ss.get(f"{key}_origin")
    if isinstance(origin, tuple) and len(origin) >= 2 and origin[1] == a.text and isinstance(ss.get(key), int):
        return int(ss[key])
    return default or 0


def _ask(kind: QuestionKind) -> None:
    """Ask the class, from the teacher's current view; the model answers now."""
    ss = st.session_state
    code = lecture.teacher_room()
    if code is None:
        return
    subj = subject()
    try:
        ckpt = cache.checkpoint(subj.path)
        a = cache.analyse(subj.path, subj.text, subj.beam)
        if kind is QuestionKind.ATTENDS:
            head = _view_head(ckpt, a)
            quiz = questions.attends(a, head, _view_row(a, head.kind))
        elif kind is QuestionKind.NEXT:
            quiz = questions.next_piece(a, _view_row(a, AttentionKind.CROSS), seed=secrets.randbits(32))
        else:
            quiz = questions.resolving_head(probe_card(ckpt), ckpt.config)
    except (NoQuestion, CheckpointError) as exc:
        ss["_ask_refused"] = str(exc)
        return
    if not subj.text.strip():
        ss["_ask_refused"] = "—"
        return
    lecture.store().ask(code, quiz, subj.label, subj.text)


def _reveal(number: int) -> None:
    code = lecture.teacher_room()
    if code is not None:
        lecture.store().reveal(code, number)


def prompt(question: Question, tr: Translator) -> str:
    quiz = question.quiz
    if quiz.kind is QuestionKind.ATTENDS:
        h = quiz.head
        return tr(
            "lecture.q.attends",
            n=question.number,
            token=md_token(quiz.token),
            kind=tr(f"kind.{h.kind.value}"),
            layer=h.layer,
            head=h.head,
        )
    if quiz.kind is QuestionKind.NEXT:
        return tr("lecture.q.next", n=question.number, token=md_token(quiz.token), text=question.text)
    return tr("lecture.q.resolves", n=question.number, kind=tr(f"kind.{quiz.head.kind.value}"))


def _evidence_title(quiz, tr: Translator) -> str:
    return tr(f"lecture.evidence.{quiz.kind.value}")


def _revealed(question: Question, tr: Translator, key: str) -> None:
    """The model's answer and the numbers that give it (the map's row, the probabilities, the probe's scores)."""
    quiz = question.quiz
    st.success(tr("lecture.answer", option=md_token(quiz.options[quiz.answer]), value=quiz.evidence[quiz.answer]))
    plot(
        figures.bar_chart(
            list(quiz.options), list(quiz.evidence), tr, _evidence_title(quiz, tr), highlight=quiz.answer
        ),
        key,
    )
    if quiz.grid:  # the map that gives the answer: the head's whole map, or every head's probe score
        h = quiz.head
        if quiz.kind is QuestionKind.ATTENDS:
            title = tr(
                "lecture.map.attends", kind=tr(f"kind.{h.kind.value}"), layer=h.layer, head=h.head, token=quiz.token
            )
            style = {}
        else:
            title = tr("lecture.map.resolves", kind=tr(f"kind.{h.kind.value}"))
            style = dict(
                row_title=tr("common.layer"),
                col_title=tr("common.head"),
                value_title=tr("lecture.score"),
                show_values=True,
            )
        grid = figures.attention_heatmap(np.array(quiz.grid), quiz.grid_rows, quiz.grid_cols, tr, title, **style)
        plot(grid, f"{key}_map")


def _teacher_question(question: Question, connected: int, tr: Translator) -> None:
    quiz = question.quiz
    with st.container(key="lecture_question"):
        st.markdown(prompt(question, tr))
        counts = question.counts()
        with st.container(key="lecture_answers"):
            st.caption(tr("lecture.answered", n=sum(counts), connected=connected))
        plot(
            figures.bar_chart(
                list(quiz.options),
                counts,
                tr,
                tr("lecture.histogram"),
                value_title=tr("lecture.count"),
                value_range=None,
                highlight=quiz.answer if question.revealed else None,
            ),
            "lecture_histogram",
        )
        if question.revealed:
            _revealed(question, tr, "lecture_evidence")
        else:
            st.button(tr("lecture.reveal"), key="lecture_reveal", on_click=_reveal, args=(question.number,))


def _answer(code: str, number: int) -> None:
    ss = st.session_state
    choice = ss.get(f"lecture_q{number}")
    if choice is None:
        return
    try:
        lecture.store().answer(code, lecture.student_id(), number, int(choice))
    except RoomError as exc:
        lecture.note_refusal(exc)


def answer_head(head: HeadId) -> bool:
    """A student's click on a head of the overview answers their lecture's open "which head resolves it?" question
    (a head of the question's kind, before the reveal), as picking it below would; True when it did."""
    ss = st.session_state
    code = ss.get(lecture.LECTURE)
    if code is None or roles.is_teacher():
        return False
    try:
        question = lecture.store().snapshot(code).question
    except RoomError:
        return False
    choice = None if question is None or question.revealed else questions.head_option(question.quiz, head)
    if choice is None:
        return False
    ss[f"lecture_q{question.number}"] = choice
    _answer(code, question.number)
    return True


def _student_banner(tr: Translator) -> None:
    """A student's class panel: the page's watcher of the room's signal (a change reruns the app, which follows
    the class's view) and the question, if one was asked."""
    ss = st.session_state
    code = ss.get(lecture.LECTURE)
    try:
        room = lecture.store().snapshot(code)
    except RoomError:
        return  # the next run says the lecture ended (follow)
    lecture.watch(room)
    if room.question is not None:
        _question_panel(room.code, tr.lang)


@st.fragment
def _question_panel(code: str, lang: str) -> None:
    """The last question, its options and, once revealed, the model's answer; an answer reruns only this panel."""
    tr = Translator(lang)
    try:
        question = lecture.store().snapshot(code).question
    except RoomError:
        return
    if question is None:
        return
    with st.container(key="lecture_student_question", border=True):
        st.markdown(prompt(question, tr))
        mine = question.answers.get(lecture.student_id())
        st.pills(
            tr("lecture.your_answer"),
            range(len(question.quiz.options)),
            format_func=lambda i: question.quiz.options[i],
            key=f"lecture_q{question.number}",
            default=mine,
            on_change=_answer,
            args=(code, question.number),
            disabled=question.revealed,
        )
        if question.revealed:
            verdict = "none" if mine is None else ("right" if mine == question.quiz.answer else "wrong")
            st.caption(tr(f"lecture.you_{verdict}"))
            _revealed(question, tr, f"lecture_evidence_{question.number}")
        elif mine is not None:
            st.caption(tr("lecture.counted"))
