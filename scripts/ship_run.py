"""Make a from-scratch run a shipped checkpoint, replacing the model that was there (a new model, not a session).

    python3 scripts/ship_run.py RUN/average/step-010000 checkpoints/en-fr --run RUN --snapshots 1000 4000 \
        --session '{"date": "2026-12-07", "machine": "...", "why": "...", "earlier_runs": [...]}'

scripts/add_session.py continues a shipped checkpoint's history; a run that started from nothing (issue 61's
en-fr-tatoeba) has none to continue, so the checkpoint becomes the candidate's alone, written by the one folder
writer (transformer.atomic.write_folder: complete first, then swapped in; the old folder is replaced only when it
holds nothing a checkpoint does not):

- the candidate's weights rounded to float16 (every figure is measured on them afterwards), its config and
  tokenizer;
- card.json: the candidate's, with one kept session whose ``runs`` are every start and stop the trainer recorded
  (``earlier_runs`` in --session first: starts made before the trainer recorded them) and whose device, minutes
  and threads are theirs unless --session says otherwise, ``session_steps``,
  ``weights_dtype`` float16. No figure of the old model is carried over: the evaluation scripts' --write put each
  back, measured on the new weights;
- metrics.jsonl: the run's rows up to the candidate's step;
- snapshots/: the run's snapshots at the steps --snapshots names (float16 already; few, as a clone carries every
  one ever committed);
- README.md is the model's own page and is written after (nothing of the old one is kept).

CANDIDATE is the run's last/, one of its average/step-NNNNNN or an average written from them (``python -m
transformer average``); --run names the run folder (its metrics and snapshots) when CANDIDATE is not it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ship_run(candidate: Path, target: Path, run: Path, session: dict, snapshot_steps: list[int]) -> dict:
    import torch
    from safetensors.torch import load_file, save_file

    from transformer.atomic import is_our_checkpoint, write_folder
    from transformer.checkpoint import _write_json, read_json
    from transformer.layout import CARD_FILE, CONFIG_FILE, METRICS_FILE, MODEL_FILE, snapshot_dir, tokenizer_files

    card = read_json(candidate / CARD_FILE)
    if card.get("init_from"):
        raise SystemExit(f"{candidate} continued {card['init_from'].get('name')}: use scripts/add_session.py")
    names = tokenizer_files(candidate)
    if names is None:
        raise SystemExit(f"{candidate} is not a checkpoint (no tokenizer)")
    step = int(card["step"])
    missing = [s for s in snapshot_steps if not snapshot_dir(run, s).is_dir()]
    if missing:
        raise SystemExit(f"{run} has no snapshot at step(s) {missing}")
    rows = [json.loads(line) for line in (run / METRICS_FILE).read_text(encoding="utf-8").splitlines() if line]
    session = dict(session)
    runs = [*session.pop("earlier_runs", []), *(card.get("runs") or [])]
    # what the app's training panel reads of a session (its device, minutes and threads), from the runs by default
    devices = {r.get("device") for r in runs}
    entry = {
        "kept": True,
        "steps": [0, step],
        "device": devices.pop() if len(devices) == 1 else card.get("device"),
        "minutes": round(sum(float(r.get("wall_s", 0)) for r in runs) / 60, 1),
        "threads": card.get("threads"),
        "runs": runs,
        **session,
    }
    new_card = {
        **card,
        "session_steps": [step],
        "sessions": [entry],
        "weights_dtype": "float16",
        **({"command": session["command"]} if "command" in session else {}),
    }
    state = load_file(candidate / MODEL_FILE)  # read before anything is written

    def fill(tmp: Path) -> None:
        save_file({k: v.to(torch.float16) if v.is_floating_point() else v for k, v in state.items()}, tmp / MODEL_FILE)
        for name in (CONFIG_FILE, *names):
            shutil.copyfile(candidate / name, tmp / name)
        _write_json(tmp / CARD_FILE, new_card)
        with (tmp / METRICS_FILE).open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows if r.get("step", 0) <= step)
        for s in snapshot_steps:
            shutil.copytree(snapshot_dir(run, s), snapshot_dir(tmp, s))

    write_folder(target, fill, overwrite=True, recognise=is_our_checkpoint, what="a checkpoint")
    return new_card


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidate", type=Path)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--run", type=Path, help="the run folder (its metrics and snapshots); default: CANDIDATE")
    ap.add_argument("--snapshots", type=int, nargs="*", default=[], help="the run's snapshot steps to ship")
    ap.add_argument("--session", default="{}", help="JSON: command, date, device, machine, why, earlier_runs")
    args = ap.parse_args(argv)
    card = ship_run(
        args.candidate, args.checkpoint, args.run or args.candidate, json.loads(args.session), args.snapshots
    )
    print(f"{args.checkpoint}: a new model at step {card['step']}, snapshots {args.snapshots}, from {args.candidate}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
