"""Tatoeba's everyday sentences, and the public test sets the field publishes on.

Training text (CC BY 2.0 FR, tatoeba.org, as exported by manythings.org/anki): short sentences written for
learners, one English sentence beside one translation a line (``en<TAB>target[<TAB>attribution]``):

- English-French: ``fra-eng/fra.txt`` of the 2019 export (167,130 pairs);
- English-Chinese: ``cmn.txt`` (Simplified, begins with a byte-order mark) and a later export whose lines are about
  one third Traditional: each is converted to Simplified (OpenCC ``t2s``, by the build script), never dropped, and a
  pair the first file already holds is kept once.

Public test sets, never trained on (``Helsinki-NLP/OPUS-MT-testsets``):

- Tatoeba test v2021-08-07: ``eng-fra`` (12,681 pairs) and the ``cmn_Hans`` lines of ``eng-zho`` (4,450);
- FLORES-200 devtest (1,012 sentences; CC BY-SA 4.0): ``eng_Latn`` beside ``fra_Latn`` / ``zho_Hans``.

Every English sentence of a public test set, and of the sentences typed as a new user would (corpus/typed.py), is
removed from training, matched by :func:`match_key` (case, punctuation and spacing folded), so "Tom's here." in a
test set also keeps "toms here" out of training. :func:`split_tatoeba` holds a dev split out of the training export
by a hash of that key (all translations of one English sentence fall on one side). No network and no OpenCC here:
these functions read bytes and strings. """

from __future__ import annotations

import functools
import hashlib
import io
import re
import unicodedata
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from .real import SPLITS, RealPair, read_pairs, real_files
from .typed import load_typed

T = TypeVar("T")

LICENCE_TATOEBA = "CC BY 2.0 FR (Tatoeba, tatoeba.org; exported by manythings.org/anki)"
LICENCE_FLORES = "CC BY-SA 4.0 (FLORES-200, Meta AI / NLLB team)"
ATTRIBUTION = "Sentences from Tatoeba (https://tatoeba.org), CC BY 2.0 FR, via the exports of https://manythings.org/anki"

TESTSETS_REPO = "Helsinki-NLP/OPUS-MT-testsets"
TESTSETS_COMMIT = "ac0f19c0be3cb4e0d9450fcb2d7a9847c4bdd180"
TATOEBA_TEST = "tatoeba-test-v2021-08-07"
FLORES_TEST = "flores200-devtest"
FLORES_DIR = "datasets/facebook/flores/flores200_dataset/devtest"


@dataclass(frozen=True)
class Published:
    """A figure published for a reference model on a public test set."""

    model: str
    metric: str  # "chrf" | "bleu" (sacrebleu; BLEU into Chinese with its Chinese tokenizer)
    value: float
    note: str = ""


LEADERBOARD = "Helsinki-NLP/OPUS-MT-leaderboard"
# (target language, test set) -> opus-mt's published figure on the whole set (LEADERBOARD, as issue 61 quotes it)
OPUS_MT = {
    ("fr", TATOEBA_TEST): Published("opus-mt-en-fr", "chrf", 68.3),
    ("fr", FLORES_TEST): Published("opus-mt-en-fr", "chrf", 70.3),
    ("zh", TATOEBA_TEST): Published("opus-mt-en-zh", "bleu", 31.4, "every Chinese script"),
}


@dataclass(frozen=True)
class Snapshot:
    """One file in a public repository's snapshot (a zip member too) and what it must hash to."""

    repo: str
    commit: str
    path: str
    sha256: str
    member: str = ""  # inside a zip

    def to_dict(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v}


FRA_EXPORT = Snapshot(
    "modelexlab/data",
    "adddaf33ac35572bcfeb421efec29435e7ea9332",
    "fra-eng.zip",
    "161c93f18da3a7e6df611ed961426613260de8af06ccf8c79c977afe5135ac44",
    "fra-eng/fra.txt",
)
CMN_EXPORT = Snapshot(
    "13luoyu/Transformer-machine-translation",
    "b172d4aa468126c16f51dbf75797aaff77cf787e",
    "cmn.txt",
    "aa264a2447b26ab7c9d413f8321f9e2a779fd134b5118306b6e26a3499b3926e",
)
CMN_LATER_EXPORT = Snapshot(
    "wuyuhanwyh777-max/CET4Focus",
    "7c48cef074b416c9237cc38ac18d399b1d0eafb9",
    "data/cmn-eng.zip",
    "d606361aa7312dcdfb15ef4fc51cb1e7ed8bc2dc608a7b192626cd36e8403106",
    "cmn.txt",
)

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


class TatoebaError(ValueError):
    """A snapshot file that is not what this module reads."""


def match_key(text: str) -> str:
    """The form two English sentences are compared in: NFKC, case folded, every run of punctuation, symbols and
    spaces removed ("Tom's here!" and "toms here" match; so do curly and straight apostrophes)."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", text).casefold())


def zip_member(data: bytes, member: str) -> bytes:
    """One member of a zip archive's bytes."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return zf.read(member)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise TatoebaError(f"cannot read {member!r} from the archive: {exc}") from None


def read_export(data: bytes) -> list[tuple[str, str]]:
    """(English, translation) pairs of an export's lines (``en<TAB>target[<TAB>attribution]``); a byte-order mark
    is dropped, whitespace collapsed; a line without two non-empty fields is an error (the export is damaged)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TatoebaError(f"not UTF-8: {exc}") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        en, tgt = (" ".join(f.split()) for f in fields[:2]) if len(fields) >= 2 else ("", "")
        if not en or not tgt:
            raise TatoebaError(f"line {lineno}: expected English<TAB>translation, found {line[:80]!r}")
        out.append((en, tgt))
    return out


def read_lines(data: bytes) -> list[str]:
    """A test set file's lines (one sentence a line, UTF-8)."""
    return data.decode("utf-8").rstrip("\n").split("\n")


def simplified(pairs: Iterable[tuple[str, str]], to_simplified: Callable[[str], str]) -> tuple[list, int]:
    """Each pair's Chinese converted to Simplified by to_simplified (OpenCC t2s); with the number of lines it
    changed (the Traditional ones): converted, never dropped."""
    out, changed = [], 0
    for en, zh in pairs:
        s = to_simplified(zh)
        changed += s != zh
        out.append((en, s))
    return out, changed


def merge_exports(first: list[tuple[str, str]], *later: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """first, then each later pair that no earlier file holds (exact English and translation), in order."""
    seen, out = set(), []
    for pairs in (first, *later):
        for p in pairs:
            if p not in seen:
                seen.add(p)
                out.append(p)
    return out


def read_test_set(eng: bytes, tgt: bytes, labels: bytes | None = None, label: str = "") -> list[tuple[str, str]]:
    """A public test set's (English, reference) pairs: its line-parallel files; with labels, only the lines of
    that label (eng-zho's ``cmn_Hans``)."""
    en_lines, tgt_lines = read_lines(eng), read_lines(tgt)
    if len(en_lines) != len(tgt_lines):
        raise TatoebaError(f"the test set's sides differ in length: {len(en_lines)} and {len(tgt_lines)} lines")
    keep = [True] * len(en_lines)
    if labels is not None:
        lab = read_lines(labels)
        if len(lab) != len(en_lines):
            raise TatoebaError(f"{len(lab)} labels for {len(en_lines)} lines")
        keep = [x.strip() == label for x in lab]
    return [(e.strip(), t.strip()) for e, t, k in zip(en_lines, tgt_lines, keep) if k and e.strip() and t.strip()]


def dev_of(key: str, dev_share: float) -> bool:
    """Whether an English sentence (its match_key) is held out as dev: a hash, stable across machines."""
    h = int.from_bytes(hashlib.sha1(f"tatoeba:{key}".encode()).digest()[:8], "big") / 2**64
    return h < dev_share


@dataclass
class TatoebaSplit:
    """The training export's pairs by split, and what was left out and why."""

    by_split: dict[str, list[RealPair]]
    removed_as_test: int  # pairs whose English is a public test sentence
    duplicates: int  # exact repeats of a pair

    def rows(self) -> list[tuple[str, RealPair]]:
        return [(s, p) for s in SPLITS for p in self.by_split[s]]


def split_tatoeba(
    pairs: Iterable[tuple[str, str]], test_keys: set[str], page: str, dev_share: float = 0.01
) -> TatoebaSplit:
    """train / dev pairs of an export (no test split: the public sets are the test). A pair whose English is
    a test sentence (test_keys, by match_key) is removed; an exact repeat is kept once; every translation of
    an English sentence keeps it (several references teach several ways to say it)."""
    by_split: dict[str, list[RealPair]] = {s: [] for s in SPLITS}
    seen: set[tuple[str, str]] = set()
    removed = dupes = 0
    for en, tgt in pairs:
        key = match_key(en)
        if key in test_keys:
            removed += 1
            continue
        if (en, tgt) in seen:
            dupes += 1
            continue
        seen.add((en, tgt))
        split = "dev" if dev_of(key, dev_share) else "train"
        by_split[split].append(RealPair("tatoeba", page, en, tgt))
    return TatoebaSplit(by_split, removed, dupes)


def test_rows(sets: dict[str, list[tuple[str, str]]]) -> list[tuple[str, RealPair]]:
    """A file's rows for the public test sets: source = page = the set's name, split test; every line kept, a
    repeated English sentence too (the published figures score every line)."""
    return [("test", RealPair(name, name, en, tgt)) for name, pairs in sets.items() for en, tgt in pairs]


PUBLIC_TESTS = ("public_tests", "zh/public_tests")  # the committed public test sets (real.real_files names)


def typed_keys() -> frozenset[str]:
    """The match_key of the everyday sentences typed as a new user would (corpus/typed.py, our own test set)."""
    return frozenset(match_key(r.en) for r in load_typed())


@functools.lru_cache(maxsize=1)
def held_out_keys() -> frozenset[str]:
    """The match_key of every English test sentence: the committed public test sets (both languages) and the
    typed sentences."""
    files = real_files()
    public = {match_key(p.src) for name in PUBLIC_TESTS if name in files for p in read_pairs(files[name])}
    return frozenset(public | typed_keys())


def without_test_sentences(pairs: Iterable[T], english: Callable[[T], str]) -> list[T]:
    """pairs less those whose English (english(pair)) is a test sentence (held_out_keys): the guard every training
    corpus passes through."""
    keys = held_out_keys()
    return [p for p in pairs if match_key(english(p)) not in keys]
