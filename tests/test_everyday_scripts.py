"""The everyday scripts on a copy of the tiny checkpoint: they run, and --write merges their figures into the card."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest
from conftest import ROOT

from transformer.checkpoint import load_checkpoint
from transformer.layout import SHIPPED_ROOT


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a script's dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tiny(tmp_path):
    out = tmp_path / "tiny"
    shutil.copytree(SHIPPED_ROOT / "tiny", out, ignore=shutil.ignore_patterns("snapshots"))
    return out


def test_evaluate_everyday_writes_chrf_and_bleu(tiny):
    assert _script("evaluate_everyday").main([str(tiny), "--limit", "4", "--write"]) == 0
    report = load_checkpoint(tiny).card["everyday_eval"]
    assert report["decoding"] == "greedy"
    for split in ("everyday_dev", "everyday_test"):
        assert report[split]["n_sentences"] == 4 and 0 <= report[split]["chrf"] <= 100 and "bleu" in report[split]


def test_evaluate_everyday_scores_the_games_and_both_dev_sets_together(tiny):
    assert _script("evaluate_everyday").main([str(tiny), "--splits", "dev", "--games", "--limit", "3", "--write"]) == 0
    report = load_checkpoint(tiny).card["everyday_eval"]
    assert report["everyday_dev"]["n_sentences"] == report["games_dev"]["n_sentences"] == 3
    assert report["dev_together"]["n_sentences"] == 6 and "translations" not in report["games_dev"]
    lo, hi = sorted((report["everyday_dev"]["chrf"], report["games_dev"]["chrf"]))
    assert lo - 1 <= report["dev_together"]["chrf"] <= hi + 1  # one corpus-level figure over both sets


def test_confidence_vs_chrf_correlates_and_writes(tiny, capsys):
    m = _script("confidence_vs_chrf")
    assert m.spearman([1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 45.0]) == pytest.approx(1.0)
    import numpy as np

    assert m.spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == pytest.approx(-1.0)
    assert m.spaced(list(range(10)), 3) == [0, 3, 6]
    assert m.main([str(tiny), "--n", "8", "--corpus", "kde", "--write"]) == 0
    entry = load_checkpoint(tiny).card["confidence"]["kde/test"]
    assert entry["n_sentences"] == 8 and -1 <= entry["mean_log_prob_vs_chrf"]["spearman"] <= 1


def test_the_typed_sentences_are_scored_and_their_confidence_measured(tiny):
    """scripts/evaluate_typed.py and confidence_vs_chrf.py --corpus typed read the hand-written test set, with the
    references of the checkpoint's target (tiny: French)."""
    from transformer.corpus.typed import typed_pairs

    assert _script("evaluate_typed").main([str(tiny), "--write"]) == 0
    typed = load_checkpoint(tiny).card["typed_eval"]["greedy"]
    assert typed["n_sentences"] == len(typed["sentences"]) == 125 and typed["target"] == "fr"
    assert [s["reference"] for s in typed["sentences"]] == [t for _, t in typed_pairs("fr")]
    assert 0 <= typed["chrf"] <= 100 and set(typed["topics"]) >= {"food", "questions", "issue"}
    assert _script("confidence_vs_chrf").main([str(tiny), "--corpus", "typed", "--n", "10", "--write"]) == 0
    entry = load_checkpoint(tiny).card["confidence"]["typed/test"]
    assert entry["n_sentences"] == 10 and entry["corpus"] == "typed"


@pytest.mark.slow  # trains or re-measures
def test_everyday_examples_writes_what_pick_chose(tiny):
    # the tiny model translates no everyday sentence well: with no chrF floor it still picks, by computation
    assert _script("everyday_examples").main([str(tiny), "--n", "2", "--min-chrf", "0", "--write"]) == 0
    examples = load_checkpoint(tiny).card["everyday_examples"]
    assert len(examples) == 2 and all({"source", "translation", "reference", "chrf"} <= set(e) for e in examples)


def test_add_session_makes_a_continuation_the_checkpoints_next_session(tiny, tmp_path):
    """A run started from the checkpoint becomes its next session: float16 weights, the chain and the steps counted
    on (those of the run's averaged checkpoints too), its metrics marked, no figure of the old weights kept; a run
    from elsewhere is refused."""
    import json

    import torch
    from safetensors.torch import load_file

    old = json.loads((tiny / "card.json").read_text(encoding="utf-8"))
    old_rows = (tiny / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    run = tmp_path / "run"
    shutil.copytree(tiny, run, ignore=shutil.ignore_patterns("snapshots"))
    run_card = {k: v for k, v in old.items() if k in ("train_config", "device", "threads", "vocabulary")}
    run_card.update(step=7, init_from={"name": "tiny", "path": str(tiny), "step": old["step"]})
    # average's record: two of the run's checkpoints and the weights it started from
    run_card["averaged_from"] = [{"name": "step-00005", "step": 5}, {"name": "run", "step": 7}, {"name": "tiny"}]
    run_card["averaged_from"][-1]["step"] = old["step"]
    (run / "card.json").write_text(json.dumps(run_card), encoding="utf-8")
    (run / "metrics.jsonl").write_text('{"step": 5, "loss": 1.0}\n{"step": 7, "loss": 0.9}\n', encoding="utf-8")
    weights = load_file(run / "model.safetensors")
    old["real_coref"] = {"real": {"chrf": 99.0}}  # a figure of the old weights
    (tiny / "card.json").write_text(json.dumps(old), encoding="utf-8")

    m = _script("add_session")
    session = {"command": "python -m transformer train --preset tiny", "device": "cpu", "minutes": 1.0}
    assert m.main([str(run), str(tiny), "--session", json.dumps(session)]) == 0
    card = json.loads((tiny / "card.json").read_text(encoding="utf-8"))
    first = old["step"]
    assert card["step"] == first + 7 and card["session_steps"] == [first, 7]
    assert card["sessions"][1] == {"kept": True, "steps": [first, first + 7], **session}
    assert card["sessions"][0]["steps"] == [0, first] and card["sessions"][0]["device"] == old.get("device")
    assert card["init_from"]["step"] == first and card["init_from"]["init_from"] is None
    averaged = [{"name": "step-00005", "step": first + 5}, {"name": "run", "step": first + 7}]
    assert card["averaged_from"] == [*averaged, {"name": "tiny", "step": first}]  # the checkpoint's own step kept
    assert "real_coref" not in card and card["weights_dtype"] == "float16" and card["command"] == session["command"]
    half = load_file(tiny / "model.safetensors")
    assert all(v.dtype == torch.float16 for v in half.values() if v.is_floating_point())
    assert all(torch.equal(half[k], weights[k].half()) for k in weights if weights[k].is_floating_point())
    rows = (tiny / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    assert rows[: len(old_rows)] == old_rows
    assert [json.loads(r) for r in rows[len(old_rows) :]] == [
        {"step": first + 5, "loss": 1.0, "session": 2},
        {"step": first + 7, "loss": 0.9, "session": 2},
    ]
    assert load_checkpoint(tiny).card["step"] == first + 7  # the app still loads it
    # the same run again: it no longer starts from the checkpoint's weights
    with pytest.raises(SystemExit, match="did not start from"):
        m.main([str(run), str(tiny)])


def test_a_session_that_leaves_corpora_out_keeps_what_the_model_saw_before(tiny, tmp_path):
    """en-fr-everyday-only trains without the manuals: the card must still say the model saw them (the held-out
    check, the unseen- and rare-word notes and the training-data panel read train_config.real_data and the
    vocabulary), with the earlier corpora first."""
    import json

    old = json.loads((tiny / "card.json").read_text(encoding="utf-8"))
    old["train_config"] = {**old["train_config"], "real_data": ["libreoffice", "handbook", "everyday"]}
    old["vocabulary"] = {
        "words": ["menu", "click", "dog"],
        "classes": {"other": ["click", "dog", "menu"]},
        "rare": {"menu": 2, "dog": 1},
    }
    (tiny / "card.json").write_text(json.dumps(old), encoding="utf-8")
    run = tmp_path / "run"
    shutil.copytree(tiny, run, ignore=shutil.ignore_patterns("snapshots"))
    run_card = {k: v for k, v in old.items() if k in ("device", "threads")}
    run_card["train_config"] = {**old["train_config"], "real_data": ["everyday", "stories"]}
    run_card["vocabulary"] = {
        "words": ["dog", "sofa", "kitchen"],
        "classes": {"other": ["dog", "kitchen", "sofa"]},
        "rare": {"dog": 3, "sofa": 2},
    }
    run_card.update(step=3, init_from={"name": "tiny", "path": str(tiny), "step": old["step"]})
    (run / "card.json").write_text(json.dumps(run_card), encoding="utf-8")
    (run / "metrics.jsonl").write_text('{"step": 3, "loss": 1.0}\n', encoding="utf-8")

    assert _script("add_session").main([str(run), str(tiny)]) == 0
    card = json.loads((tiny / "card.json").read_text(encoding="utf-8"))
    assert card["train_config"]["real_data"] == ["libreoffice", "handbook", "everyday", "stories"]
    vocab = card["vocabulary"]
    assert vocab["words"] == ["click", "dog", "kitchen", "menu", "sofa"]
    assert vocab["rare"] == {"dog": 3, "menu": 2, "sofa": 2}  # rare in both: the larger count; in one only: its own
    assert vocab["classes"]["other"] == ["click", "dog", "kitchen", "menu", "sofa"]


def test_vocabulary_merge_drops_rarity_a_word_lost_elsewhere():
    from transformer.vocabulary import Vocabulary

    a = Vocabulary(frozenset({"cat", "sofa"}), {}, {"sofa": 1})
    b = Vocabulary(frozenset({"sofa", "tea"}), {}, {"tea": 2})  # sofa common here
    m = a.merged(b)
    assert m.words == {"cat", "sofa", "tea"} and m.rare == {"tea": 2}
    assert m.unseen("the cat drinks tea on the sofa") == ["the", "drinks", "on"]


def test_add_session_takes_a_run_that_grew_the_checkpoint_and_refuses_any_other_config_change(tiny, tmp_path):
    """A run that widened the checkpoint's feed-forward (its card's init_from.grown) becomes its next session with
    the wider config; a config that changed in anything else, or grew otherwise than recorded, is refused."""
    import json

    from transformer.checkpoint import save_checkpoint
    from transformer.training.grow import widen_feed_forward

    old = load_checkpoint(tiny)
    d_ff = old.model.config.d_ff
    run = tmp_path / "run"
    save_checkpoint(run, widen_feed_forward(old.model, 2 * d_ff), old.tokenizer, {}, overwrite=True)
    start = {"name": "tiny", "path": str(tiny), "step": old.card["step"]}
    (run / "metrics.jsonl").write_text('{"step": 2, "loss": 1.0}\n', encoding="utf-8")
    m = _script("add_session")

    def card(grown):
        (run / "card.json").write_text(json.dumps({"step": 2, "init_from": {**start, **grown}}), encoding="utf-8")

    card({})  # grown, but not recorded
    with pytest.raises(SystemExit, match="beyond what the run grew"):
        m.main([str(run), str(tiny)])
    card({"grown": {"d_ff": [d_ff, 3 * d_ff]}})
    with pytest.raises(SystemExit, match="should grow"):
        m.main([str(run), str(tiny)])
    card({"grown": {"d_ff": [d_ff, 2 * d_ff]}})
    assert m.main([str(run), str(tiny), "--session", '{"device": "cpu"}']) == 0
    grown = load_checkpoint(tiny)
    assert grown.model.config.d_ff == 2 * d_ff and grown.card["init_from"]["grown"] == {"d_ff": [d_ff, 2 * d_ff]}


def test_add_session_continues_a_separate_vocabulary_checkpoint(tmp_path):
    """An en-zh checkpoint (source.spm, target.spm and two vocabularies, no tokenizer.model) takes a continuation
    as its next session; a run whose target vocabulary differs is refused as no continuation."""
    import json

    from zh_fixture import make_en_zh_checkpoint

    target = make_en_zh_checkpoint(tmp_path / "en-zh")
    card = json.loads((target / "card.json").read_text(encoding="utf-8"))
    run = shutil.copytree(target, tmp_path / "run")
    run_card = {"step": 3, "init_from": {"name": "en-zh", "path": str(target), "step": card["step"]}}
    (run / "card.json").write_text(json.dumps(run_card), encoding="utf-8")
    (run / "metrics.jsonl").write_text('{"step": 3, "loss": 2.0}\n', encoding="utf-8")
    m = _script("add_session")
    changed = shutil.copytree(run, tmp_path / "changed")
    (changed / "target_vocab.json").write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="target_vocab.json differs"):
        m.main([str(changed), str(target)])
    assert m.main([str(run), str(target), "--session", '{"device": "cpu", "minutes": 1.0}']) == 0
    assert load_checkpoint(target).card["session_steps"] == [card["step"], 3]


def test_add_session_takes_a_run_that_moved_the_checkpoint_onto_its_own_vocabulary(tmp_path):
    """A run that learnt its own vocabularies (its card's init_from.revocab, TrainConfig.revocab) becomes the
    checkpoint's next session with its tokenizer files and sizes; the same files without the record are refused."""
    import json

    from zh_fixture import make_en_zh_checkpoint

    from transformer.checkpoint import save_checkpoint
    from transformer.tokenizer import train_separate
    from transformer.training.revocab import transfer_vocabulary

    target = make_en_zh_checkpoint(tmp_path / "en-zh")
    old = load_checkpoint(target)
    pairs = [("my brother wants to become a doctor.", "我弟弟想当医生。"), ("the doctor is here.", "医生在这里。")]
    new = train_separate((a for a, _ in pairs * 50), (b for _, b in pairs * 50), 60, 40)
    moved, report = transfer_vocabulary(old.model, old.tokenizer, new)
    run = tmp_path / "run"
    save_checkpoint(run, moved, new, {}, overwrite=True)
    (run / "metrics.jsonl").write_text('{"step": 3, "loss": 2.0}\n', encoding="utf-8")
    start = {"name": "en-zh", "path": str(target), "step": old.card["step"]}
    m = _script("add_session")
    (run / "card.json").write_text(json.dumps({"step": 3, "init_from": start}), encoding="utf-8")
    with pytest.raises(SystemExit, match="differs"):  # another vocabulary, not recorded: no continuation
        m.main([str(run), str(target)])
    assert load_checkpoint(target).tokenizer.files() == old.tokenizer.files()
    card = {"step": 3, "init_from": {**start, "revocab": report}}
    (run / "card.json").write_text(json.dumps(card), encoding="utf-8")
    assert m.main([str(run), str(target), "--session", '{"device": "cpu"}']) == 0
    now = load_checkpoint(target)
    assert now.tokenizer.files() == new.files()
    assert (now.model.config.vocab_size, now.model.config.tgt_vocab_size) == (new.vocab_size, new.target_vocab_size)
    assert now.card["init_from"]["revocab"] == report and now.card["session_steps"][-1] == 3
    assert now.tokenizer.source_pieces(now.tokenizer.encode("doctor")) == new.source_pieces(new.encode("doctor"))


def test_add_session_reads_the_trainers_averaged_curves_from_its_run_and_writes_nothing_on_a_failure(tmp_path):
    """RUN/averaged/ (the trainer's --average-every) has no metrics.jsonl: its run's are read. A run that cannot be
    read leaves the checkpoint as it was."""
    import json

    from zh_fixture import make_en_zh_checkpoint

    target = make_en_zh_checkpoint(tmp_path / "en-zh")
    card = json.loads((target / "card.json").read_text(encoding="utf-8"))
    run = tmp_path / "run"
    averaged = shutil.copytree(target, run / "averaged")
    (averaged / "metrics.jsonl").unlink(missing_ok=True)
    run_card = {"step": 4, "init_from": {"name": "en-zh", "path": str(target), "step": card["step"]}}
    (averaged / "card.json").write_text(json.dumps(run_card), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in target.iterdir() if p.is_file()}
    m = _script("add_session")
    with pytest.raises(FileNotFoundError):  # no curves anywhere: nothing written
        m.main([str(averaged), str(target)])
    assert {p.name: p.read_bytes() for p in target.iterdir() if p.is_file()} == before
    (run / "metrics.jsonl").write_text('{"step": 4, "loss": 2.0}\n', encoding="utf-8")
    untouched = shutil.copytree(target, tmp_path / "en-zh-copy")
    assert m.main([str(averaged), str(target)]) == 0
    last = json.loads((target / "metrics.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert last == {"step": card["step"] + 4, "loss": 2.0, "session": 2}
    # an average written outside its run (averaged/ averaged with the weights before) has no curves unless named
    outside = shutil.copytree(averaged, tmp_path / "averaged-with-the-weights-before")
    (outside / "card.json").write_text(
        json.dumps({**run_card, "init_from": {**run_card["init_from"], "path": str(untouched)}}), encoding="utf-8"
    )
    with pytest.raises(FileNotFoundError):
        m.main([str(outside), str(untouched)])
    assert m.main([str(outside), str(untouched), "--curves", str(run / "metrics.jsonl")]) == 0
    assert (untouched / "metrics.jsonl").read_text(encoding="utf-8") == (target / "metrics.jsonl").read_text("utf-8")


def _a_run(root, tiny, step: int, runs: list, init_from: dict | None = None):
    """A run folder as the trainer leaves it: its kept weights at step, its metrics (one row past step), snapshots."""
    import json

    from transformer.layout import snapshot_dir

    cand = root / "average" / f"step-{step:06d}"
    shutil.copytree(tiny, cand, ignore=shutil.ignore_patterns("metrics.jsonl", "*.md"))
    for s in (2, 5):
        shutil.copytree(cand, snapshot_dir(root, s))
    card = json.loads((cand / "card.json").read_text(encoding="utf-8"))
    card = {k: v for k, v in card.items() if k in ("train_config", "vocabulary")} | {"step": step, "runs": runs}
    if init_from:
        card["init_from"] = init_from
    (cand / "card.json").write_text(json.dumps(card), encoding="utf-8")
    rows = "".join(f'{{"step": {s}, "loss": 1.0}}\n' for s in (step - 2, step, step + 2))
    (root / "metrics.jsonl").write_text(rows, encoding="utf-8")
    return cand, card


def test_ship_run_makes_a_from_scratch_run_the_checkpoint_and_keeps_a_users_file(tiny, tmp_path):
    """A run from nothing replaces the checkpoint: float16 weights, a kept session holding every start and stop
    (the earlier ones first), its curves up to the candidate's step, the snapshots named; nothing of the old card.
    A run that continued it becomes the second session, its steps counted on. A continuation of a shipped model is
    refused, and so is a checkpoint folder holding a user's file (left as it was)."""
    import json

    import torch
    from safetensors.torch import load_file

    from transformer.inspection.training_data import sessions_of

    run = tmp_path / "run"
    runs = [{"from_step": 3, "to_step": 7, "started": "2026-12-07T02:00:00Z", "device": "cpu", "wall_s": 90.0}]
    cand, card = _a_run(run, tiny, 7, runs)
    weights = load_file(cand / "model.safetensors")
    old = json.loads((tiny / "card.json").read_text(encoding="utf-8")) | {"real_coref": {"real": {"chrf": 9.0}}}
    (tiny / "card.json").write_text(json.dumps(old), encoding="utf-8")
    (tiny / "README.md").write_text("the old model's page", encoding="utf-8")

    m = _script("ship_run")
    first = {"from_step": 0, "to_step": 3, "started": "2026-12-06T23:15:00Z", "device": "cpu", "wall_s": 30.0}
    session = {"command": "python -m transformer train --preset tiny", "earlier_runs": [first]}
    args = [str(cand), str(tiny), "--run", str(run), "--snapshots", "5", "--session", json.dumps(session)]
    assert m.main(args) == 0
    shipped = json.loads((tiny / "card.json").read_text(encoding="utf-8"))
    assert shipped["step"] == 7 and shipped["session_steps"] == [7] and "real_coref" not in shipped
    entry = {"kept": True, "steps": [0, 7], "runs": [first, *runs], "command": session["command"]}
    assert shipped["sessions"] == [entry | {"device": "cpu", "minutes": 2.0, "threads": None}]
    assert [(s.device, s.minutes, s.steps) for s in sessions_of(shipped)] == [("cpu", 2.0, 7)]
    half = load_file(tiny / "model.safetensors")
    assert all(torch.equal(half[k], weights[k].half()) for k in weights if weights[k].is_floating_point())
    assert [json.loads(r)["step"] for r in (tiny / "metrics.jsonl").read_text("utf-8").splitlines()] == [5, 7]
    assert sorted(p.name for p in (tiny / "snapshots").iterdir()) == ["step-000005"]
    assert not (tiny / "README.md").exists() and load_checkpoint(tiny).card["step"] == 7

    # a run that continued the first (init_from its kept weights) is the second session
    more = [{"from_step": 0, "to_step": 4, "device": "cpu", "wall_s": 60.0}]
    cand2, _ = _a_run(tmp_path / "run2", tiny, 4, more, {"name": cand.name, "path": str(cand), "step": 7})
    args2 = [str(cand2), str(tiny), "--run", str(tmp_path / "run2"), "--after", str(cand), str(run), "{}"]
    assert m.main([*args2, "--snapshots", "2", "5"]) == 0
    shipped = json.loads((tiny / "card.json").read_text(encoding="utf-8"))
    assert shipped["step"] == 11 and shipped["session_steps"] == [7, 4] and "init_from" not in shipped
    assert [s["steps"] for s in shipped["sessions"]] == [[0, 7], [7, 11]] and shipped["sessions"][1]["runs"] == more
    rows = [json.loads(r) for r in (tiny / "metrics.jsonl").read_text("utf-8").splitlines()]
    assert [(r["step"], r.get("session")) for r in rows] == [(5, None), (7, None), (9, 2), (11, 2)]
    assert sorted(p.name for p in (tiny / "snapshots").iterdir()) == ["step-000002", "step-000005"]
    with pytest.raises(SystemExit, match="did not continue"):  # the wrong first run
        m.main([str(cand2), str(tiny), "--run", str(tmp_path / "run2"), "--after", str(tiny), str(tiny), "{}"])

    with pytest.raises(SystemExit, match="add_session"):  # a shipped model's next session keeps its history
        (cand / "card.json").write_text(json.dumps({**card, "init_from": {"name": "tiny"}}), encoding="utf-8")
        m.main([str(cand), str(tiny)])
    (cand / "card.json").write_text(json.dumps(card), encoding="utf-8")
    (tiny / "photo.jpg").write_bytes(b"a user's file")
    from transformer.atomic import OverwriteError

    with pytest.raises(OverwriteError, match="photo.jpg"):
        m.main([str(cand), str(tiny), "--run", str(run)])
    assert (tiny / "photo.jpg").read_bytes() == b"a user's file" and load_checkpoint(tiny).card["step"] == 11
