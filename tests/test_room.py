"""A lecture's room state (pages/_ui/room.py): bounds, expiry, answers counted once, the signal a page polls."""

from __future__ import annotations

import pytest

from pages._ui import room as rm
from pages._ui.export import table_csv
from pages._ui.room import ClassView, RoomError, Rooms, report_rows
from transformer.attention import AttentionKind, HeadId
from transformer.inspection.questions import QuestionKind, Quiz


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def quiz(n: int = 3) -> Quiz:
    return Quiz(
        QuestionKind.ATTENDS,
        tuple(f"w{i}" for i in range(n)),
        1,
        (0.2, 0.7, 0.1)[:n],
        head=HeadId(AttentionKind.CROSS, 1, 2),
        token="▁il",
    )


def test_rooms_are_bounded_and_a_room_expires_when_its_teacher_is_gone():
    clock, seen = Clock(), []
    rooms = Rooms(clock, listener=lambda code, signal, sessions: seen.append((code, signal)))
    codes = [rooms.open() for _ in range(rm.MAX_ROOMS)]
    assert len(set(codes)) == rm.MAX_ROOMS and all(len(c) == rm.CODE_LENGTH for c in codes)
    with pytest.raises(RoomError) as exc:
        rooms.open()
    assert exc.value.reason == "too_many_rooms"
    clock.t += rm.ROOM_TTL_S / 2
    rooms.teacher_seen(codes[0])  # one teacher is still there
    clock.t += rm.ROOM_TTL_S / 2 + 1
    assert rooms.codes() == [codes[0]]  # the others expired, and their signals were removed
    assert {(c, None) for c in codes[1:]} <= set(seen)
    assert rooms.open() not in codes  # their places are free again
    with pytest.raises(RoomError):
        rooms.join(codes[1], "s1")


def test_a_room_holds_at_most_max_students_and_a_gone_student_frees_a_place(monkeypatch):
    monkeypatch.setattr(rm, "MAX_STUDENTS", 3)
    clock = Clock()
    rooms = Rooms(clock)
    code = rooms.open()
    for s in ("a", "b", "c"):
        rooms.join(code, s)
    rooms.join(code, "a")  # seen again: not a new place
    with pytest.raises(RoomError) as exc:
        rooms.join(code, "d")
    assert exc.value.reason == "room_full"
    clock.t += rm.STUDENT_TTL_S + 1
    rooms.join(code.lower(), "d")  # codes are read without case; the gone ones made room
    assert rooms.snapshot(code).connected(clock.t) == 1
    rooms.join(code, "e")
    clock.t += rm.STUDENT_TTL_S + 1  # by time seen, nobody is left; by the server's live sessions, "e" is there
    assert rooms.snapshot(code).connected(clock.t) == 0
    rooms.join(code, "e", session="S-e")
    assert rooms.snapshot(code).connected(clock.t, active={"S-a", "S-e", "zz"}) == 1


def test_answers_count_once_per_student_change_until_revealed_and_export_as_csv():
    clock = Clock()
    rooms = Rooms(clock)
    code = rooms.open()
    for s in ("a", "b", "c"):
        rooms.join(code, s)
    q = rooms.ask(code, quiz(), "en-fr", "The animal didn't cross the street because it was too tired.")
    rooms.answer(code, "a", q.number, 0)
    rooms.answer(code, "a", q.number, 1)  # changed: still one answer
    rooms.answer(code, "b", q.number, 1)
    rooms.answer(code, "c", q.number, 2)
    with pytest.raises(RoomError) as exc:
        rooms.answer(code, "nobody", q.number, 1)
    assert exc.value.reason == "not_joined"
    with pytest.raises(RoomError) as exc:
        rooms.answer(code, "a", q.number, 3)
    assert exc.value.reason == "no_such_option"
    assert rooms.snapshot(code).question.counts() == [0, 2, 1]
    rooms.reveal(code, q.number)
    with pytest.raises(RoomError) as exc:
        rooms.answer(code, "c", q.number, 1)
    assert exc.value.reason == "revealed"
    rows = report_rows(rooms.snapshot(code))
    assert [r["answers"] for r in rows] == [0, 2, 1]
    assert [r["model_answer"] for r in rows] == [False, True, False]
    assert rows[0]["head"] == "cross L1 H2" and rows[0]["kind"] == "attends"
    csv = table_csv(rows)
    assert csv.splitlines()[0].startswith('"question","kind","head","token"') and csv.count("\n") == 4


def test_questions_are_bounded_and_keep_counting():
    rooms = Rooms(Clock())
    code = rooms.open()
    for _ in range(rm.MAX_QUESTIONS + 5):
        last = rooms.ask(code, quiz(), "en-fr", "x")
    room = rooms.snapshot(code)
    assert len(room.questions) == rm.MAX_QUESTIONS and last.number == rm.MAX_QUESTIONS + 5
    assert room.questions[0].number == 6


def test_the_signal_changes_exactly_when_a_students_screen_must():
    signals = []
    rooms = Rooms(Clock(), listener=lambda code, signal, sessions: signals.append(signal))
    code = rooms.open()
    view = ClassView("explorer", (("text", "a"),))
    rooms.set_view(code, view)
    rooms.set_view(code, view)  # the same view: nothing to do
    rooms.set_view(code, ClassView("explorer", (("text", "a"), ("focus_src_origin", ("p", "a")))), announce=False)
    assert rooms.snapshot(code).version == 1  # completed quietly: nobody reruns for it
    assert rooms.snapshot(code).view.get("focus_src_origin") == ("p", "a")  # but a late joiner gets it
    q = rooms.ask(code, quiz(), "en-fr", "a")
    rooms.reveal(code, q.number)
    rooms.reveal(code, q.number)
    rooms.close(code)
    assert signals == ["0.0.0", "1.0.0", "1.1.0", "1.1.1", None]
    assert not rooms.is_open(code)


def test_the_listener_is_told_which_sessions_must_change_even_when_the_room_closes():
    told = []
    rooms = Rooms(Clock(), listener=lambda code, signal, sessions: told.append((signal, sorted(sessions))))
    code = rooms.open()
    rooms.join(code, "a", "session-a")
    rooms.join(code, "b", "session-b")
    rooms.join(code, "c")  # no server session known (AppTest): nobody to push to
    rooms.set_view(code, ClassView("explorer", (("text", "a"),)))
    rooms.leave(code, "b")
    rooms.ask(code, quiz(), "en-fr", "a")
    rooms.close(code)
    assert told == [
        ("0.0.0", []),
        ("1.0.0", ["session-a", "session-b"]),
        ("1.1.0", ["session-a"]),
        (None, ["session-a"]),  # the students still there learn that the lecture ended
    ]
