"""A lecture's room: the state that the teacher's session writes and the students' sessions read, shared by every
session of the server (lecture.py holds the one store in st.cache_resource), bounded and expiring.

No Streamlit here: sessions call in from their own script threads, so every method takes the store's lock, and
the clock is injectable (the tests run hours in microseconds). A room holds:
- its join code (JOIN_LETTERS: no 0/O, 1/I/L to misread on a projector);
- the class's view (ClassView): what following students show, with a version that grows when it changes;
- the students present: an anonymous id per browser session, seen at each poll (gone after STUDENT_TTL_S);
- its questions (Question): the model's answer fixed when asked, and one answer per student id.

Bounds: MAX_ROOMS rooms (a room whose teacher has not been seen for ROOM_TTL_S is closed and its place freed),
MAX_STUDENTS students in a room, MAX_QUESTIONS questions (the oldest is dropped).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from transformer.inspection.questions import Quiz

JOIN_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 5
MAX_ROOMS = 4
MAX_STUDENTS = 300
MAX_QUESTIONS = 100
ROOM_TTL_S = 4 * 3600.0  # a room whose teacher has not been seen for this long is closed
STUDENT_TTL_S = 20.0  # a student not seen for this long is no longer counted as connected


class RoomError(RuntimeError):
    """A request the room refuses; `reason` names the catalogue message (lecture.refused.<reason>)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ClassView:
    """What a following student's screen shows: the page (a module of pages/) and the session-state values
    that choose the rest (checkpoint, sentence, beam, tab, attention kind, layer, head, focused token; see
    lecture.FOLLOWED), as (key, value) pairs."""

    page: str
    values: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.values).get(key, default)


@dataclass
class Question:
    number: int  # 1, 2, ... in the room
    quiz: Quiz
    checkpoint: str  # the checkpoint and sentence the model answered on
    text: str
    asked: float
    revealed: bool = False
    answers: dict[str, int] = field(default_factory=dict)  # student id -> option index

    def counts(self) -> list[int]:
        counts = [0] * len(self.quiz.options)
        for choice in self.answers.values():
            counts[choice] += 1
        return counts


@dataclass
class Room:
    code: str
    opened: float
    teacher_seen: float
    view: ClassView | None = None
    version: int = 0
    students: dict[str, float] = field(default_factory=dict)  # id -> last seen
    sessions: dict[str, str] = field(default_factory=dict)  # id -> the server's session id (presence)
    questions: list[Question] = field(default_factory=list)
    asked: int = 0  # questions ever asked (numbers keep counting when the oldest are dropped)

    @property
    def question(self) -> Question | None:
        """The question asked last, if any."""
        return self.questions[-1] if self.questions else None

    def signal(self) -> str:
        """What a student's page watches (lecture.py writes it where the page can poll it): the view's version,
        the last question and whether it is revealed. It changes exactly when a student's screen must."""
        q = self.question
        return f"{self.version}.{q.number if q else 0}.{int(bool(q and q.revealed))}"

    def connected(self, now: float, active: set[str] | None = None) -> int:
        """Students connected: those whose session is active (when the server says), else seen lately."""
        if active is not None:
            return sum(self.sessions.get(sid) in active for sid in self.students)
        return sum(now - seen <= STUDENT_TTL_S for seen in self.students.values())


class Rooms:
    """Every open room of the server, by join code."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        listener: Callable[[str, str | None, tuple[str, ...]], None] | None = None,
    ) -> None:
        """listener(code, signal, sessions): told, under the lock, each time a room's signal changes (None: it
        closed), with the server's session ids of the room's students (the sessions whose screens must change)."""
        self._rooms: dict[str, Room] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._listener = listener or (lambda code, signal, sessions: None)

    def _expire(self, now: float) -> None:
        for code in [c for c, r in self._rooms.items() if now - r.teacher_seen > ROOM_TTL_S]:
            room = self._rooms.pop(code)
            self._listener(code, None, tuple(room.sessions.values()))

    def _changed(self, room: Room) -> None:
        self._listener(room.code, room.signal(), tuple(room.sessions.values()))

    def _room(self, code: str) -> Room:
        room = self._rooms.get(str(code).strip().upper())
        if room is None:
            raise RoomError("unknown_code")
        return room

    def open(self) -> str:
        """Open a room; its join code."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            if len(self._rooms) >= MAX_ROOMS:
                raise RoomError("too_many_rooms")
            while True:
                code = "".join(secrets.choice(JOIN_LETTERS) for _ in range(CODE_LENGTH))
                if code not in self._rooms:
                    break
            self._rooms[code] = Room(code, now, now)
            self._changed(self._rooms[code])
            return code

    def close(self, code: str) -> None:
        with self._lock:
            room = self._rooms.pop(str(code).strip().upper(), None)
            if room is not None:
                self._listener(room.code, None, tuple(room.sessions.values()))

    def codes(self) -> list[str]:
        """The open rooms' codes, oldest first."""
        with self._lock:
            self._expire(self._clock())
            return sorted(self._rooms, key=lambda c: self._rooms[c].opened)

    def is_open(self, code: str | None) -> bool:
        with self._lock:
            self._expire(self._clock())
            return code is not None and str(code).strip().upper() in self._rooms

    def snapshot(self, code: str) -> Room:
        """A copy of the room to read from (no lock held while a page draws it)."""
        with self._lock:
            self._expire(self._clock())
            room = self._room(code)
            return replace(
                room,
                students=dict(room.students),
                sessions=dict(room.sessions),
                questions=[replace(q, answers=dict(q.answers)) for q in room.questions],
            )

    # the teacher's side

    def teacher_seen(self, code: str) -> None:
        with self._lock:
            self._room(code).teacher_seen = self._clock()

    def set_view(self, code: str, view: ClassView, announce: bool = True) -> int:
        """Store the class's view; its version grows when it changed and announce is true (a view completed by
        the teacher's own run, e.g. a token picker's origin, is stored without moving the class again)."""
        with self._lock:
            room = self._room(code)
            room.teacher_seen = self._clock()
            if view != room.view:
                room.view = view
                if announce or room.version == 0:
                    room.version += 1
                    self._changed(room)
            return room.version

    def ask(self, code: str, quiz: Quiz, checkpoint: str, text: str) -> Question:
        with self._lock:
            room = self._room(code)
            room.asked += 1
            question = Question(room.asked, quiz, checkpoint, text, self._clock())
            room.questions = (room.questions + [question])[-MAX_QUESTIONS:]
            self._changed(room)
            return question

    def reveal(self, code: str, number: int) -> None:
        with self._lock:
            room = self._room(code)
            for q in room.questions:
                if q.number == number and not q.revealed:
                    q.revealed = True
                    self._changed(room)

    # the students' side

    def join(self, code: str, student: str, session: str | None = None) -> str:
        """Count a student in (or seen again), from the server's session `session`; the room's code as stored."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            room = self._room(code)
            if student not in room.students:
                for sid in [s for s, seen in room.students.items() if now - seen > STUDENT_TTL_S]:
                    del room.students[sid]  # gone: their place is free (their answers stay counted)
                    room.sessions.pop(sid, None)
                if len(room.students) >= MAX_STUDENTS:
                    raise RoomError("room_full")
            room.students[student] = now
            if session is not None:
                room.sessions[student] = session
            return room.code

    def leave(self, code: str, student: str) -> None:
        with self._lock:
            room = self._rooms.get(str(code).strip().upper())
            if room is not None:
                room.students.pop(student, None)
                room.sessions.pop(student, None)

    def answer(self, code: str, student: str, number: int, choice: int) -> None:
        """A student's answer to question `number` (a later answer replaces theirs until it is revealed)."""
        with self._lock:
            room = self._room(code)
            if student not in room.students:
                raise RoomError("not_joined")
            question = next((q for q in room.questions if q.number == number), None)
            if question is None:
                raise RoomError("no_question")
            if question.revealed:
                raise RoomError("revealed")
            if not 0 <= int(choice) < len(question.quiz.options):
                raise RoomError("no_such_option")
            question.answers[student] = int(choice)
            room.students[student] = self._clock()


def report_rows(room: Room) -> list[dict[str, Any]]:
    """A lecture's questions and answer counts, a row per option (the CSV the teacher downloads)."""
    rows = []
    for q in room.questions:
        counts = q.counts()
        for i, option in enumerate(q.quiz.options):
            rows.append(
                {
                    "question": q.number,
                    "kind": q.quiz.kind.value,
                    "head": q.quiz.head.label if q.quiz.head is not None else "",
                    "token": q.quiz.token,
                    "checkpoint": q.checkpoint,
                    "sentence": q.text,
                    "option": option,
                    "model_value": round(q.quiz.evidence[i], 6),
                    "model_answer": i == q.quiz.answer,
                    "answers": counts[i],
                    "revealed": q.revealed,
                }
            )
    return rows
