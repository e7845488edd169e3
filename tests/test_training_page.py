"""The training page and the job machinery: a real `python -m transformer train` process per run."""

from __future__ import annotations

import time

import pytest
from apptest import EN, app, checkpoint_names, node_text, run

from transformer import jobs
from transformer.checkpoint import load_checkpoint
from transformer.evaluate import PROBE_QUERIES


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    return tmp_path


def _wait(root, states, timeout=240):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = jobs.status(root)
        if status is not None and status.state in states:
            return status
        time.sleep(0.3)
    raise AssertionError(f"no job reached {states}: {jobs.status(root)}")


def test_a_bad_tsv_is_refused_with_its_line_numbers():
    pairs, problems = jobs.validate_tsv(b"hello\tbonjour\nno tab here\n\nx\t \ngood\tbon\n")
    assert pairs == 2
    assert problems == [
        "line 2: expected source<TAB>target, found 1 field(s)",
        "line 4: empty source or target",
    ]
    assert "UTF-8" in jobs.validate_tsv(b"\xff\xfe\tbad\n")[1][0]
    assert "limit" in jobs.validate_tsv(b"a\tb\n" * 10, max_bytes=10)[1][0]
    assert jobs.validate_tsv(b"\n\n")[1] == ["no sentence pairs"]


@pytest.mark.slow
def test_train_a_tiny_model_from_the_page_and_open_it(root):
    at = run(app("training", tr_preset="tiny"))
    assert not at.get("plotly_chart")
    at.text_input(key="tr_name").set_value("../escape")
    at.number_input(key="tr_steps").set_value(40)
    at.button(key="train_start").click().run()
    reason = "a name may not contain a path separator"
    assert EN("train.bad_name", reason=reason) in [e.value for e in at.error]
    assert not (root / "escape").exists()  # refused: no separators, no '..'
    at.text_input(key="tr_name").set_value("mine")
    at.button(key="train_start").click().run()
    assert not at.exception
    seen_progress = False
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        at.run()
        status = jobs.status(root)
        if status.state == "running" and status.step > 0:
            seen_progress = True
            assert at.get("progress") and "mine" in node_text(at.get_by_key("job_state"))
        if status.state == "finished":
            break
        time.sleep(0.5)
    status = jobs.status(root)
    assert status.state is jobs.JobState.FINISHED and seen_progress, status
    assert [m["step"] for m in status.metrics][-1] == 40
    # the probe at each snapshot (the page's snapshots for 40 steps: 0, 4, 10, 20, 30), every row kind
    assert [p["step"] for p in status.probes] == [0, 4, 10, 20, 30]
    for p in status.probes:
        assert set(p["probe"]) == {q.label() for q in PROBE_QUERIES}
        assert all(0.0 <= v <= 1.0 for v in p["probe"].values())
    at.run()
    assert "mine" in checkpoint_names(at)
    at.sidebar.selectbox(key="checkpoint").select("mine").run()
    assert not at.exception
    card = load_checkpoint(root / "mine").card
    assert card["step"] == 40 and card["train_config"]["steps"] == 40
    # the same name again is refused, and nothing is overwritten
    with pytest.raises(jobs.JobError, match="already exists"):
        jobs.start(root, "mine", ["--preset", "tiny", "--steps", "5"], 5)


@pytest.mark.slow
def test_a_second_start_while_a_run_goes_is_refused_and_stop_keeps_what_was_saved(root):
    jobs.start(root, "long", ["--preset", "tiny", "--steps", "100000", "--snapshots", "0"], 100000)
    _wait(root, {"running"})
    with pytest.raises(jobs.JobError, match="another training job"):
        jobs.start(root, "second", ["--preset", "tiny", "--steps", "5"], 5)
    at = run(app("training"))
    assert [w.value for w in at.warning] == [EN("train.busy")]  # the page says a run is going ...
    assert at.button(key="train_start").disabled  # ... and will not start another
    assert not (root / "second").exists()
    assert jobs.stop(root)
    status = _wait(root, {"stopped"}, timeout=60)
    assert (root / "long" / "snapshots" / "step-000000").exists() and (root / "long" / "last").exists()
    assert status.state is jobs.JobState.STOPPED
