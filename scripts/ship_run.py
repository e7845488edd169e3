"""Make a from-scratch run a shipped checkpoint, replacing the model that was there (a new model, not a session).

    python3 scripts/ship_run.py RUN/average/step-010000 checkpoints/en-fr --run RUN --snapshots 1000 4000 \
        --session '{"date": "2026-12-07", "machine": "...", "why": "...", "earlier_runs": [...]}'
    python3 scripts/ship_run.py RUN2/averaged checkpoints/en-fr --run RUN2 --session '{...}' \
        --after RUN/last RUN '{...}' --snapshots 1000 4000                     # RUN2 continued RUN

scripts/add_session.py continues a shipped checkpoint's history; a run that started from nothing (issue 61's
en-fr-tatoeba) has none to continue, so the checkpoint becomes the candidate's alone, written by the one folder
writer (transformer.atomic.write_folder: complete first, then swapped in; the old folder is replaced only when it
holds nothing a checkpoint does not):

- the candidate's weights rounded to float16 (every figure is measured on them afterwards), its config and
  tokenizer;
- card.json: the candidate's, with a kept session for each run (the from-scratch run, then each run that continued
  the one before, --after naming them in order: each card's init_from names the checkpoint before and its step;
  the steps count on, init_from is dropped), whose ``runs`` are every start and stop the trainer recorded
  (``earlier_runs`` in a session's JSON first: starts made before the trainer recorded them) and whose device,
  minutes and threads are theirs unless the session says otherwise; ``session_steps``; ``weights_dtype`` float16.
  No figure of the old model is carried over: the evaluation scripts' --write put each back, measured on the new
  weights;
- metrics.jsonl: each run's rows up to its checkpoint's step, counted on (a continuation's marked "session": n);
- snapshots/: the from-scratch run's snapshots at the steps --snapshots names (float16 already; few, as a clone
  carries every one ever committed);
- README.md is the model's own page and is written after (nothing of the old one is kept).

CANDIDATE is the run's last/, one of its average/step-NNNNNN or an average written from them (``python -m
transformer average``); --run names the run folder (its metrics and snapshots) when CANDIDATE is not it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@dataclass
class Stage:
    """One run of the model's making: the checkpoint it ended in (last/, average/step-N or an average of them),
    its run folder (metrics, snapshots) and what --session says of it."""

    checkpoint: Path
    run: Path
    session: dict


def _session(card: dict, session: dict, steps: list[int]) -> dict:
    """A kept session: every start and stop its trainer recorded (``earlier_runs`` first), and what the app's
    training panel reads of it (device, minutes, threads), from the runs unless the session says otherwise."""
    session = dict(session)
    runs = [*session.pop("earlier_runs", []), *(card.get("runs") or [])]
    devices = {r.get("device") for r in runs}
    return {
        "kept": True,
        "steps": steps,
        "device": devices.pop() if len(devices) == 1 else card.get("device"),
        "minutes": round(sum(float(r.get("wall_s", 0)) for r in runs) / 60, 1),
        "threads": card.get("threads"),
        "runs": runs,
        **session,
    }


def ship_run(stages: list[Stage], target: Path, snapshot_steps: list[int]) -> dict:
    """stages: the run from nothing first, then each run that continued the one before (its card's init_from
    naming that checkpoint and its step). The last stage's weights become target's."""
    import torch
    from safetensors.torch import load_file, save_file

    from transformer.atomic import is_our_checkpoint, write_folder
    from transformer.checkpoint import _write_json, read_json
    from transformer.layout import CARD_FILE, CONFIG_FILE, METRICS_FILE, MODEL_FILE, snapshot_dir, tokenizer_files

    cards = [read_json(st.checkpoint / CARD_FILE) for st in stages]
    if cards[0].get("init_from"):
        raise SystemExit(
            f"{stages[0].checkpoint} continued {cards[0]['init_from'].get('name')}: a shipped "
            "checkpoint's next session is scripts/add_session.py's"
        )
    for before, after, prev, card in zip(stages, stages[1:], cards, cards[1:]):
        start = card.get("init_from") or {}
        here = Path(str(start.get("path", "")))
        if not here.exists() or here.resolve() != before.checkpoint.resolve() or start.get("step") != prev["step"]:
            raise SystemExit(f"{after.checkpoint} did not continue {before.checkpoint} (its init_from: {start})")
    last = stages[-1].checkpoint
    names = tokenizer_files(last)
    if names is None:
        raise SystemExit(f"{last} is not a checkpoint (no tokenizer)")
    for st in stages[1:]:
        if any((st.checkpoint / n).read_bytes() != (stages[0].checkpoint / n).read_bytes() for n in names):
            raise SystemExit(f"{st.checkpoint}'s tokenizer is not {stages[0].checkpoint}'s")
    missing = [s for s in snapshot_steps if not snapshot_dir(stages[0].run, s).is_dir()]
    if missing:
        raise SystemExit(f"{stages[0].run} has no snapshot at step(s) {missing}")
    offset, sessions, rows = 0, [], []
    for n, (st, card) in enumerate(zip(stages, cards), 1):
        step = int(card["step"])
        sessions.append(_session(card, st.session, [offset, offset + step]))
        for line in (st.run / METRICS_FILE).read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line else {}
            if row and row.get("step", 0) <= step:
                rows.append({**row, "step": offset + row.get("step", 0), **({"session": n} if n > 1 else {})})
        offset += step
    new_card = {
        **cards[-1],
        "step": offset,
        "session_steps": [int(c["step"]) for c in cards],
        "sessions": sessions,
        "weights_dtype": "float16",
        **({"command": stages[-1].session["command"]} if "command" in stages[-1].session else {}),
    }
    new_card.pop("init_from", None)  # the chain is the sessions': it starts from nothing
    state = load_file(last / MODEL_FILE)  # read before anything is written

    def fill(tmp: Path) -> None:
        save_file({k: v.to(torch.float16) if v.is_floating_point() else v for k, v in state.items()}, tmp / MODEL_FILE)
        for name in (CONFIG_FILE, *names):
            shutil.copyfile(last / name, tmp / name)
        _write_json(tmp / CARD_FILE, new_card)
        with (tmp / METRICS_FILE).open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        for s in snapshot_steps:
            shutil.copytree(snapshot_dir(stages[0].run, s), snapshot_dir(tmp, s))

    write_folder(target, fill, overwrite=True, recognise=is_our_checkpoint, what="a checkpoint")
    return new_card


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidate", type=Path)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--run", type=Path, help="the run folder (its metrics and snapshots); default: CANDIDATE")
    ap.add_argument("--snapshots", type=int, nargs="*", default=[], help="the first run's snapshot steps to ship")
    ap.add_argument("--session", default="{}", help="JSON: command, date, device, machine, why, earlier_runs")
    ap.add_argument(
        "--after",
        nargs=3,
        action="append",
        default=[],
        metavar=("CHECKPOINT", "RUN", "SESSION"),
        help="a run CANDIDATE's chain went through, the from-scratch one first (repeat it for each): the checkpoint "
        "it ended in, its run folder, what --session says of it",
    )
    args = ap.parse_args(argv)
    stages = [Stage(Path(c), Path(r), json.loads(j)) for c, r, j in args.after]
    stages.append(Stage(args.candidate, args.run or args.candidate, json.loads(args.session)))
    card = ship_run(stages, args.checkpoint, args.snapshots)
    print(f"{args.checkpoint}: a new model at step {card['step']} ({card['session_steps']}), from {args.candidate}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
