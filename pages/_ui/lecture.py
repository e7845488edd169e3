"""Lecture mode in the app: the teacher's view written into the room and the students' sessions following it
(pages/_ui/room.py holds the state; lecture_banner.py what a lecture shows above the page, its questions included).

A run of app.py, in order:
1. sidebar.setup → roles.sign_in and join_from_link (before any widget);
2. follow(nav): a following student whose room has a newer view takes its values and page (before any widget);
   publish(nav): the teacher's run writes the view it starts with (the values the teacher's click just set);
3. the sidebar's class section (sidebar_section), the banner above the page (lecture_banner.banner), the page;
4. publish(nav, announce=False): what the page completed (e.g. a token picker's origin) is stored without moving
   the class again; the view marker (marker) says which view this run drew.

A change of the room's signal (view version, question, revealed) reruns each of its students' sessions at once, as
Streamlit's own run-on-save does: the request is handed to the session's event loop (push), without waiting for a
browser to ask, and nothing calls st.* from another thread; the rerun follows the class's view and shows the
question. The signal is also written to a small static file that each student's page reads every WATCH_MS (5 s): a
safety net that costs the server no script run, and the whole mechanism where the runtime is not Streamlit's server.
A student is counted connected while their browser session is (the runtime's sessions).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from transformer.layout import REPO_ROOT

from . import roles
from .i18n import Translator
from .room import ClassView, Room, RoomError, Rooms

WATCH_MS = int(
    os.environ.get("TRANSFORMER_LECTURE_WATCH_MS", "5000")
)  # a student's page reads its room's signal this often (the safety net under the push)
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


def note_refusal(exc: RoomError) -> None:
    st.session_state["_lecture_refused"] = exc.reason


def _enter(code: str) -> None:
    ss = st.session_state
    try:
        ss[LECTURE] = store().join(code, student_id(), _session())
    except RoomError as exc:
        note_refusal(exc)
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
            note_refusal(exc)
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
        note_refusal(exc)


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


def _noop() -> None:
    """The watcher's trigger needs no callback: the rerun it causes follows the class."""


def watch(room: Room) -> None:
    """A student's page's watcher of the room's signal, the safety net under the push: a change reruns the app."""
    if WATCH_MS > 0:
        _watch(
            key="lecture_watch",
            data={"url": _signal_url(room.code), "known": room.signal(), "every_ms": WATCH_MS},
            on_changed_change=_noop,
        )
