"""Make a continuation run a shipped checkpoint's next session (its weights, card and curves), by the card's rules.

    python3 scripts/add_session.py RUN checkpoints/en-fr --session '{"date": "2026-12-04", "ran": "20:48-22:03 UTC",
        "device": "cpu", "minutes": 75, "threads": 2, "machine": "...", "why": "..."}'

RUN is what ``python -m transformer train --preset P --out RUN`` wrote from ``init_from: CHECKPOINT``; it must have
started from the checkpoint's current weights (its card's init_from names the checkpoint and its step). Then:

- the weights are rounded to float16 into CHECKPOINT/model.safetensors (every shipped session's are; every figure
  is measured on them afterwards);
- card.json becomes RUN's (what the trainer recorded) with the chain kept: ``init_from`` nests the checkpoint's
  own, ``step`` counts on from it, ``session_steps`` and ``sessions`` gain this session (``kept``, ``steps`` [from,
  to], and what --session says: the command, where and when it ran, why it ended). No measurement of the old
  weights is carried over: the evaluation scripts' --write put each back, measured on the new weights
  (checkpoints/en-fr/README.md lists them);
- metrics.jsonl gains RUN's rows (for the trainer's RUN/averaged/, its run's), their steps counted on and marked
  ``"session": n``;
- the tokenizer (ours or Marian's separate ones) and config must be the checkpoint's own (a continuation never
  changes them), but for what a run grew from it (its card's ``init_from.grown``: a wider feed-forward,
  TrainConfig.grow_d_ff), whose config then replaces the checkpoint's, and for a run that moved it onto a vocabulary
  of its own (its card's ``init_from.revocab``, TrainConfig.revocab), whose tokenizer files (the same set) and
  vocabulary sizes then replace the checkpoint's; snapshots (each with its own config and tokenizer) and README.md
  stay as they are;
- a RUN that ``python -m transformer average`` wrote from the run's own checkpoints (its card's ``averaged_from``)
  has those steps counted on too; the checkpoint's current weights averaged in keep their step. Such an average
  written outside the run has no curves of its own: ``--curves RUN_DIR/metrics.jsonl`` names the run's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


VOCABULARY_SIZES = ("vocab_size", "tgt_vocab_size")


def grown_config(old: dict, new: dict, grown: dict | None, revocab: bool = False) -> dict:
    """The run's config, which must be the checkpoint's own but for what the run grew (its card's
    init_from.grown: {"d_ff": [from, to]}, TrainConfig.grow_d_ff) and, for a run that moved the checkpoint onto a
    vocabulary of its own (revocab), the vocabularies' sizes."""
    from transformer.config import TransformerConfig

    # with the defaults filled in: older files lack some
    old, new = (TransformerConfig.from_dict(c).to_dict() for c in (old, new))
    grown = grown or {}
    for key, (before, after) in grown.items():
        if old.get(key) != before or new.get(key) != after:
            got = f"{old.get(key)} -> {new.get(key)}"
            raise SystemExit(f"config.json: {key} should grow {before} -> {after}, not {got}")
    free = {*grown, *(VOCABULARY_SIZES if revocab else ())}
    if {k: v for k, v in old.items() if k not in free} != {k: v for k, v in new.items() if k not in free}:
        raise SystemExit("config.json differs from the checkpoint's beyond what the run grew: not a continuation")
    return new


def seen_so_far(old: dict, new: dict) -> dict:
    """The card's record of what the model has seen, over every session: a session that leaves corpora out (preset
    en-fr-everyday-only leaves the manuals out) does not make the model forget that it trained on them, so its
    train_config's real_data gains the earlier sessions' corpora (theirs first) and its vocabulary theirs; the
    held-out check, the unseen- and rare-word notes and the training-data panel read these. The session's own
    corpora stay in its preset (the card's sessions name it)."""
    from transformer.vocabulary import Vocabulary

    out: dict = {}
    before = (old.get("train_config") or {}).get("real_data") or []
    train = new.get("train_config")
    if isinstance(train, dict) and before:
        now = train.get("real_data") or []
        out["train_config"] = {**train, "real_data": [*before, *(n for n in now if n not in before)]}
    mine, theirs = (Vocabulary.from_card_entry(c.get("vocabulary")) for c in (new, old))
    if mine is not None and theirs is not None:
        out["vocabulary"] = theirs.merged(mine).to_card()
    return out


def add_session(run: Path, target: Path, session: dict, curves: Path | None = None) -> dict:
    import torch
    from safetensors.torch import load_file, save_file

    from transformer.checkpoint import _write_json, read_json
    from transformer.layout import AVERAGED_DIR, AVERAGED_FROM, tokenizer_files

    old, new = read_json(target / "card.json"), read_json(run / "card.json")
    start = new.get("init_from") or {}
    if Path(str(start.get("path", ""))).name != target.name or start.get("step") != old["step"]:
        raise SystemExit(f"{run} did not start from {target}'s current weights (its init_from: {start})")
    names = tokenizer_files(target) or ()
    revocab = bool(start.get("revocab"))  # the run learnt its own vocabulary: its tokenizer replaces the checkpoint's
    if revocab and tokenizer_files(run) != names:
        raise SystemExit(f"{run} holds another tokenizer set than {target} ({tokenizer_files(run)} vs {names})")
    tokenizer = {name: (run / name).read_bytes() for name in names}
    for name in () if revocab else names:
        if tokenizer[name] != (target / name).read_bytes():
            raise SystemExit(f"{run}/{name} differs from {target}'s: not a continuation")
    config = grown_config(
        read_json(target / "config.json"), read_json(run / "config.json"), start.get("grown"), revocab
    )
    first = old["step"]
    # a card of one run has no sessions yet: that run is the first
    one_run = {"kept": True, "steps": [0, first], "device": old.get("device"), "threads": old.get("threads")}
    one_run.update(minutes=old.get("wall_time_s", 0) / 60, command=old.get("command"))
    before = old.get("sessions") or [one_run]
    steps = old.get("session_steps") or [first]
    n = len(steps) + 1
    # everything read before anything is written: a run that fails here leaves the checkpoint as it was
    if curves is None:
        curves = run / "metrics.jsonl"
        if not curves.is_file() and run.name == AVERAGED_DIR:  # the trainer's averaged/: its run's curves
            curves = run.parent / "metrics.jsonl"
    rows = [json.loads(line) for line in curves.read_text(encoding="utf-8").splitlines() if line]
    state = load_file(run / "model.safetensors")
    half = {k: v.to(torch.float16) if v.is_floating_point() else v for k, v in state.items()}
    save_file(half, target / "model.safetensors")
    entry = {"kept": True, "steps": [first, first + new["step"]], **session}
    # the steps of the run's own checkpoints count on; the checkpoint's current weights (averaged in, under its own
    # name and step: python -m transformer average CHECKPOINT RUN/averaged) keep theirs
    own = {"name": target.name, "step": first}
    averaged = [a if a == own else {**a, "step": first + a["step"]} for a in new.get(AVERAGED_FROM) or ()]
    card = {
        **new,
        **seen_so_far(old, new),
        "init_from": {**start, "init_from": old.get("init_from")},
        "step": first + new["step"],
        "session_steps": [*steps, new["step"]],
        "sessions": [*before, entry],
        "weights_dtype": "float16",
        **({AVERAGED_FROM: averaged} if averaged else {}),
        **({"command": session["command"]} if "command" in session else {}),  # what trained the current weights
    }
    _write_json(target / "card.json", card)
    _write_json(target / "config.json", config)
    for name, data in tokenizer.items():
        (target / name).write_bytes(data)
    with (target / "metrics.jsonl").open("a", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps({**row, "step": first + row["step"], "session": n}) + "\n")
    return card


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--session", default="{}", help="JSON: command, date, ran, device, minutes, threads, machine, why")
    ap.add_argument("--curves", type=Path, help="the run's metrics.jsonl, for an average written outside its run")
    args = ap.parse_args(argv)
    session = json.loads(args.session)
    card = add_session(args.run, args.checkpoint, session, args.curves)
    print(f"{args.checkpoint}: step {card['step']}, session steps {card['session_steps']}, from {args.run}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
