"""The training log (``metrics.jsonl``): one JSON object per line, appended while a run writes it.

Two kinds of record: a step ({"step", "total_steps", "loss", "lr", "accuracy", ...}, see
``TrainEvent``) and a probe ({"step", "probe": {"encoder/pronoun": score, ...}}). :func:`read_metrics`
is the one reader (the job table, the training page and the masks page use it). No torch here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class MetricsLog:
    steps: list[dict[str, Any]] = field(default_factory=list)  # step records, in the order written
    probes: list[dict[str, Any]] = field(default_factory=list)  # {"step", "probe": {...}} records


def append_jsonl(path: str | Path, record: dict[str, Any]) -> None:
    """One JSON object as one line, appended."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def read_metrics(path: str | Path) -> MetricsLog:
    """The log's records; a missing file is an empty log, and a line that is not a JSON object (the one
    being written right now, say) is skipped."""
    log = MetricsLog()
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return log
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or "step" not in record:
            continue
        (log.probes if "probe" in record else log.steps).append(record)
    return log
