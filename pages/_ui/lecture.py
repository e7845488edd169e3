"""Lecture mode in the app: the teacher's view written into the room, the students' sessions following it, and the
questions the model answers (pages/_ui/room.py holds the state; transformer/inspection/questions.py the answers).

A run of app.py, in order:
1. sidebar.setup → roles.sign_in and join_from_link (before any widget);
2. follow(nav): a following student whose room has a newer view takes its values and page (before any widget);
   publish(nav): the teacher's run writes the view it starts with (the values the teacher's click just set);
3. the sidebar's class section (sidebar_section), the banner above the page (banner), the page;
4. publish(nav, announce=False): what the page completed (e.g. a token picker's origin) is stored without moving
   the class again; the view marker (marker) says which view this run drew.

A change of the room's signal (view version, question, revealed) reruns each of its students' sessions at once, as
Streamlit's own run-on-save does: the request is handed to the session's event loop (push), so no browser polls and
nothing calls st.* from another thread; the rerun follows the class's view and shows the question. The signal is
also written to a small static file that each student's page reads every WATCH_MS (5 s): a safety net that costs
the server no script run, and the whole mechanism where the runtime is not Streamlit's server. An answer reruns only
the question's fragment. A student is counted connected while their browser session is (the runtime's sessions).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from urllib.parse import urlsplit

import numpy as np
import segno
import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import CheckpointError
from transformer.inspection import questions
from transformer.inspection.questions import NoQuestion, QuestionKind
from transformer.layout import REPO_ROOT

from . import cache, figures, roles
from .export import table_csv
from .i18n import Translator, md_token
from .probe import default_head, default_kind, probe_card
from .room import ClassView, Question, RoomError, Rooms, report_rows
from .session import PICK, subject
from .widgets import csv_button, plot

WATCH_MS = int(
    os.environ.get("TRANSFORMER_LECTURE_WATCH_MS", "5000")
)  # a student's page reads its room's signal this often (the safety net under the push)
TEACHER_POLL_S = 1.0  # the projector's count and histogram
SIGNALS = REPO_ROOT / "static" / "lecture"  # served at /app/static/lecture/ (server.enableStaticServing)
LECTURE, FOLLOWING, SEEN, STUDENT = "_lecture", "_following", "_lecture_seen", "_student"
TOKEN_KEYS = ("focus_src", "focus_tgt", "lab_token", "steps_query", "mh_query")
# the session values a following student takes from the teacher: the model, the sentence, the beam, every page's
# tab, the head pickers (kind, layer, head) and token pickers, with the origins that keep them (widgets.py)
FOLLOWED = ("checkpoint", "text", "example", "beam", *TOKEN_KEYS)
FOLLOWED_SUFFIXES = ("_tab", "_kind", "_layer", "_head", "_origin", "_step")
_PLAIN = (str, int, float, bool, tuple, type(None))


_watch = st.components.v2.component(
    "lecture_watch",
    html='<div class="lecture-watch"></div>',
    css=".lecture-watch { height: 1px; }",
    js="""export default function ({data, setTriggerValue}) {
  // one poller per page, whatever Streamlit does with the component between runs
  const w = (window.__lectureWatch = window.__lectureWatch || {sent: null, timer: null});
  w.data = data;
  w.trigger = setTriggerValue;
  if (w.timer !== null) return;
  w.timer = setInterval(async () => {
    const d = w.data;
    if (!d) return;
    let text = 'closed';
    try {
      const r = await fetch(d.url, {cache: 'no-store'});
      if (r.ok) text = (await r.text()).trim(); else if (r.status !== 404) return;
    } catch (e) { return; }
    if (d === w.data && text !== d.known && text !== w.sent) { w.sent = text; w.trigger('changed', text); }
  }, data.every_ms);
  return () => { w.data = null; };
}""",
)


def push(sessions: tuple[str, ...]) -> int:
    """Rerun these sessions now, each with its last client state (its page and query string), the way Streamlit's
    run-on-save does; the request runs on the session's own event loop, as a browser's would. Returns how many were
    asked (sessions gone or without a server are skipped: their next run follows anyway)."""
    if not sessions or not Runtime.exists():
        return 0
    asked = 0
    try:
        manager = Runtime.instance()._session_mgr
        for sid in sessions:
            info = manager.get_active_session_info(sid)
            if info is not None:
                session = info.session
                session._event_loop.call_soon_threadsafe(lambda s=session: s.request_rerun(s._client_state))
                asked += 1
    except (AttributeError, RuntimeError):  # a Streamlit whose internals differ, or a closing server: the poll
        pass
    return asked


def _on_signal(code: str, signal: str | None, sessions: tuple[str, ...]) -> None:
    """A room's signal changed: its students rerun (push), and the file their pages poll is rewritten."""
    _write_signal(code, signal)
    push(sessions)


def _write_signal(code: str, signal: str | None) -> None:
    """The room's signal as a static file the students' pages poll (Streamlit serves it; no script runs), or
    removed when the room closes. A server that cannot write there still runs lectures: the push reruns them."""
    path = SIGNALS / f"{code}.txt"
    try:
        if signal is None:
            path.unlink(missing_ok=True)
            return
        SIGNALS.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{code}.{os.getpid()}.tmp")
        tmp.write_text(signal, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


@st.cache_resource(max_entries=1)
def store() -> Rooms:
    """The server's rooms (bounded and expiring: room.py), shared by every session; each change of a room's
    signal reruns its students and is written for their pages to see. Signals a stopped server left a day ago
    are removed."""
    with contextlib.suppress(OSError):
        for old in SIGNALS.glob("*.txt"):
            if time.time() - old.stat().st_mtime > 86400:
                old.unlink()
    return Rooms(listener=_on_signal)


def _signal_url(code: str) -> str:
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return "/" + "/".join(p for p in (base, "app/static/lecture", f"{code}.txt") if p)


def followed(key: str) -> bool:
    return not key.startswith(("_", "tr_")) and (key in FOLLOWED or key.endswith(FOLLOWED_SUFFIXES))


def capture(page: str) -> ClassView:
    """This session's view: its page and the followed session values."""
    ss = st.session_state
    values = sorted((k, ss[k]) for k in list(ss.keys()) if followed(k) and isinstance(ss[k], _PLAIN))
    return ClassView(page, tuple(values))


def student_id() -> str:
    """An anonymous id for this browser session (answers are counted by it, never shown)."""
    ss = st.session_state
    if STUDENT not in ss:
        ss[STUDENT] = secrets.token_hex(8)
    return ss[STUDENT]


def _session() -> str | None:
    """The server's id of this session: a student is connected while it is (active_sessions)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def active_sessions() -> set[str] | None:
    """The ids of the server's sessions whose browser is connected now; None where there is no server (AppTest)."""
    try:
        if not Runtime.exists():
            return None
        return {info.session.id for info in Runtime.instance()._session_mgr.list_active_sessions()}
    except Exception:  # a Streamlit whose session manager differs: presence by time seen (room.STUDENT_TTL_S)
        return None


def _note_refusal(exc: RoomError) -> None:
    st.session_state["_lecture_refused"] = exc.reason


def _enter(code: str) -> None:
    ss = st.session_state
    try:
        ss[LECTURE] = store().join(code, student_id(), _session())
    except RoomError as exc:
        _note_refusal(exc)
        return
    ss[FOLLOWING], ss[SEEN] = True, None


def join_from_link() -> None:
    """A join link (/?join=CODE) puts this session in the class, following; the code leaves the address bar."""
    qp = st.query_params
    if "join" in qp:
        code = str(qp["join"])[:16]
        del qp["join"]
        if roles.lecture_mode() and not roles.is_teacher():
            _enter(code)


def teacher_room() -> str | None:
    """The teacher's open lecture: this session's, or (after a reload) the newest one open."""
    if not roles.is_teacher():
        return None
    ss, rooms = st.session_state, store()
    code = ss.get(LECTURE)
    if code is None or not rooms.is_open(code):
        codes = rooms.codes()
        code = codes[-1] if codes else None
        ss[LECTURE] = code
    return code


def follow(nav) -> None:
    """A following student: take the class's newer view (its values, then its page)."""
    ss = st.session_state
    code = ss.get(LECTURE)
    if code is None or roles.is_teacher():
        return
    rooms = store()
    try:
        rooms.join(code, student_id(), _session())
        room = rooms.snapshot(code)
    except RoomError as exc:
        ss.pop(LECTURE, None)
        if exc.reason == "unknown_code":
            ss["_lecture_ended"] = True
        else:
            _note_refusal(exc)
        return
    if not ss.get(FOLLOWING) or room.view is None or room.version == ss.get(SEEN):
        return
    ss[SEEN] = room.version
    for key, value in room.view.values:
        ss[key] = value
    if room.view.page != nav.module and room.view.page in nav.pages:
        st.switch_page(nav.pages[room.view.page])


def publish(nav, announce: bool = True) -> None:
    """The teacher's run: store its view in the open lecture."""
    code = teacher_room()
    if code is not None:
        try:
            store().set_view(code, capture(nav.module), announce)
        except RoomError:
            st.session_state.pop(LECTURE, None)


# the sidebar's class section


def _open() -> None:
    if not roles.may_operate():
        st.session_state["_lecture_refused"] = "not_teacher"
        return
    try:
        st.session_state[LECTURE] = store().open()
    except RoomError as exc:
        _note_refusal(exc)


def _end() -> None:
    code = teacher_room()
    if code is not None:
        store().close(code)
    st.session_state.pop(LECTURE, None)


def _join_typed() -> None:
    _enter(str(st.session_state.get("lecture_code", "")))


def _explore() -> None:
    st.session_state[FOLLOWING] = False


def _rejoin() -> None:
    st.session_state[FOLLOWING], st.session_state[SEEN] = True, None


def _leave() -> None:
    ss = st.session_state
    code = ss.pop(LECTURE, None)
    if code is not None:
        store().leave(code, student_id())


def sidebar_section(tr: Translator) -> None:
    """The class: open or end a lecture (teacher); join, explore alone, rejoin or leave (student)."""
    if not roles.lecture_mode():
        return
    ss = st.session_state
    with st.sidebar, st.container(key="lecture_sidebar"):
        st.subheader(tr("lecture.header"))
        if roles.is_teacher():
            roles.write_cookie()
            code = teacher_room()
            st.caption(tr("lecture.you_teach"))
            if code is None:
                st.button(tr("lecture.open"), key="lecture_open", on_click=_open, type="primary")
            else:
                st.button(tr("lecture.end"), key="lecture_end", on_click=_end)
        elif ss.get(LECTURE) is None:
            with st.form("lecture_join", border=False):
                st.text_input(tr("lecture.code"), key="lecture_code", max_chars=16)
                st.form_submit_button(tr("lecture.join"), on_click=_join_typed, key="lecture_join_button")
        else:
            following = bool(ss.get(FOLLOWING))
            st.caption(tr("lecture.following" if following else "lecture.exploring", code=ss[LECTURE]))
            if following:
                st.button(tr("lecture.explore"), key="lecture_explore", on_click=_explore)
            else:
                st.button(tr("lecture.rejoin"), key="lecture_rejoin", on_click=_rejoin, type="primary")
            st.button(tr("lecture.leave"), key="lecture_leave", on_click=_leave)
        if ss.pop("_refused_key", False):
            st.error(tr("lecture.refused.key"))
        reason = ss.pop("_lecture_refused", None)
        if reason:
            st.error(tr(f"lecture.refused.{reason}"))
        if ss.pop("_lecture_ended", False):
            st.info(tr("lecture.ended"))


def marker(slot, tr: Translator) -> None:
    """Which class view this run drew (the benchmark and the browser tests wait for it)."""
    ss = st.session_state
    if ss.get(LECTURE) is not None and ss.get(FOLLOWING) and not roles.is_teacher() and ss.get(SEEN) is not None:
        with slot.container(key=f"lecture_view_{ss[SEEN]}"):
            st.caption(tr("lecture.view", version=ss[SEEN]))


# the banner above the page


def banner(tr: Translator) -> None:
    """The teacher's projector banner, or a student's class panel; nothing outside a lecture."""
    if not roles.lecture_mode():
        return
    if roles.is_teacher():
        if teacher_room() is not None:
            _teacher_banner(tr.lang)
    elif st.session_state.get(LECTURE) is not None:
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
    code = teacher_room()
    if code is None:
        return
    rooms = store()
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
            st.markdown(tr("lecture.connected", n=room.connected(time.monotonic(), active_sessions())))
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
            _teacher_question(question, room.connected(time.monotonic(), active_sessions()), tr)
        if room.questions:
            csv_button(lambda: table_csv(report_rows(store().snapshot(code))), f"lecture-{code}", "lecture_csv", tr)


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
    code = teacher_room()
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
    store().ask(code, quiz, subj.label, subj.text)


def _reveal(number: int) -> None:
    code = teacher_room()
    if code is not None:
        store().reveal(code, number)


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


def _noop() -> None:
    """The watcher's trigger only reruns the class panel."""


def _answer(code: str, number: int) -> None:
    ss = st.session_state
    choice = ss.get(f"lecture_q{number}")
    if choice is None:
        return
    try:
        store().answer(code, student_id(), number, int(choice))
    except RoomError as exc:
        _note_refusal(exc)


def answer_head(head: HeadId) -> bool:
    """A student's click on a head of the overview answers their lecture's open "which head resolves it?" question
    (a head of the question's kind, before the reveal), as picking it below would; True when it did."""
    ss = st.session_state
    code = ss.get(LECTURE)
    if code is None or roles.is_teacher():
        return False
    try:
        question = store().snapshot(code).question
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
    code = ss.get(LECTURE)
    try:
        room = store().snapshot(code)
    except RoomError:
        return  # the next run says the lecture ended (follow)
    if WATCH_MS > 0:
        _watch(
            key="lecture_watch",
            data={"url": _signal_url(room.code), "known": room.signal(), "every_ms": WATCH_MS},
            on_changed_change=_noop,
        )
    if room.question is not None:
        _question_panel(room.code, tr.lang)


@st.fragment
def _question_panel(code: str, lang: str) -> None:
    """The last question, its options and, once revealed, the model's answer; an answer reruns only this panel."""
    tr = Translator(lang)
    try:
        question = store().snapshot(code).question
    except RoomError:
        return
    if question is None:
        return
    with st.container(key="lecture_student_question", border=True):
        st.markdown(prompt(question, tr))
        mine = question.answers.get(student_id())
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
