"""Corpus files: one source<TAB>target pair per line, UTF-8.

One line rule (:func:`parse_tsv`) serves both the trainer's ``--data`` file and the app's
upload check (``jobs.validate_tsv``): a blank line is skipped; any other line has exactly two
tab-separated fields, neither blank; each problem names its line number.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol


class CorpusFormatError(ValueError):
    """A corpus file line that is not source<TAB>target."""


class _Pair(Protocol):
    src: str
    tgt: str


def write_tsv(path: str | Path, examples: Iterable[_Pair]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for ex in examples:
            fh.write(f"{ex.src}\t{ex.tgt}\n")


def decode_tsv(data: bytes) -> str:
    """The file's text; CorpusFormatError when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusFormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse_tsv(text: str, max_problems: int | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """(pairs, problems) of a corpus file's text. Lines end at "\\n" ("\\r\\n" too); each problem reads
    "line N: ..."; after max_problems problems the scan stops. No pairs and no problems is a problem too."""
    pairs: list[tuple[str, str]] = []
    problems: list[str] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            problems.append(f"line {lineno}: expected source<TAB>target, found {len(parts)} field(s)")
        elif not parts[0].strip() or not parts[1].strip():
            problems.append(f"line {lineno}: empty source or target")
        else:
            pairs.append((parts[0].strip(), parts[1].strip()))
        if max_problems is not None and len(problems) >= max_problems:
            break
    if not pairs and not problems:
        problems.append("no sentence pairs")
    return pairs, problems


def read_tsv(path: str | Path) -> list[tuple[str, str]]:
    """Read source<TAB>target lines; a malformed line raises CorpusFormatError naming its number."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CorpusFormatError(f"cannot read {path}: {exc.strerror}") from None
    try:
        pairs, problems = parse_tsv(decode_tsv(data), max_problems=1)
    except CorpusFormatError as exc:
        raise CorpusFormatError(f"{path}: {exc}") from None
    if problems:
        sep = "," if problems[0].startswith("line") else ":"
        raise CorpusFormatError(f"{path}{sep} {problems[0]}")
    return pairs
