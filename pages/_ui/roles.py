"""Who may change the server: the teacher, in lecture mode; everyone, without it.

Lecture mode is on when the server has a teacher key: $TRANSFORMER_TEACHER_KEY, or one generated at start-up when
$TRANSFORMER_LECTURE=1 (scripts/lecture.py generates one and prints the teacher's link, as Jupyter prints its
token). The teacher opens /?teacher=KEY once: the key leaves the address bar at once (the projector shows it), the
role lives in that browser session, and a session cookie (a value derived from the key, never the key itself)
brings it back after a reload. A wrong or missing key leaves no role behind.

Only the teacher (or anyone, without lecture mode) may start, stop or delete training jobs, upload corpora and
open a lecture (may_operate); everyone else is a student.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sys
from enum import StrEnum

import streamlit as st

KEY_ENV = "TRANSFORMER_TEACHER_KEY"
LECTURE_ENV = "TRANSFORMER_LECTURE"
PARAM = "teacher"
COOKIE = "transformer_teacher"
ROLE = "_role"
_generated: list[str] = []

_cookie = st.components.v2.component(
    "teacher_cookie",
    js="""export default function ({data}) {
  if (data && data.name) document.cookie = `${data.name}=${data.value}; path=/; SameSite=Strict`;
}""",
)


class Role(StrEnum):
    TEACHER = "teacher"
    STUDENT = "student"


def teacher_key() -> str | None:
    """The server's teacher key; None without lecture mode."""
    key = os.environ.get(KEY_ENV, "").strip()
    if key:
        return key
    if os.environ.get(LECTURE_ENV, "") != "1":
        return None
    if not _generated:  # once per server process, printed where its operator reads the server's log
        _generated.append(secrets.token_urlsafe(16))
        port = st.get_option("server.port")
        print(f"Teacher's link (open it once): http://localhost:{port}/?{PARAM}={_generated[0]}", file=sys.stderr)
    return _generated[0]


def lecture_mode() -> bool:
    return teacher_key() is not None


def _cookie_value(key: str) -> str:
    return hmac.new(key.encode(), b"transformer teacher session", hashlib.sha256).hexdigest()


def sign_in() -> None:
    """On every run, before any widget: take a teacher key from the address bar (and remove it there), or bring
    the role back from the session cookie. A refused key is noted for the sidebar (lecture.refused_key)."""
    ss, qp = st.session_state, st.query_params
    key = teacher_key()
    if PARAM in qp:
        offered = str(qp[PARAM])
        del qp[PARAM]
        if key is not None and hmac.compare_digest(offered.encode(), key.encode()):
            ss[ROLE] = Role.TEACHER
            ss["_set_cookie"] = True
        else:
            ss.pop(ROLE, None)
            if key is not None:  # without lecture mode there is no role to refuse: the parameter is dropped
                ss["_refused_key"] = True
    if key is None:
        ss.pop(ROLE, None)
        return
    if ROLE not in ss:
        cookie = _cookies().get(COOKIE)
        if cookie and hmac.compare_digest(str(cookie).encode(), _cookie_value(key).encode()):
            ss[ROLE] = Role.TEACHER


def _cookies() -> dict:
    try:
        return dict(st.context.cookies)
    except Exception:  # AppTest and bare script runs have no request headers
        return {}


def write_cookie() -> None:
    """After a key was accepted: the browser keeps the role for its session (the component sets the cookie)."""
    key = teacher_key()
    if key is not None and st.session_state.pop("_set_cookie", False):
        _cookie(key="teacher_cookie", data={"name": COOKIE, "value": _cookie_value(key)})


def role() -> Role:
    return Role.TEACHER if st.session_state.get(ROLE) is Role.TEACHER else Role.STUDENT


def is_teacher() -> bool:
    return lecture_mode() and role() is Role.TEACHER


def may_operate() -> bool:
    """Start, stop or delete training, upload a corpus, open a lecture: the teacher, or anyone without lecture mode."""
    return not lecture_mode() or role() is Role.TEACHER
