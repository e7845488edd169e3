"""Rebuild the committed Tatoeba corpora and public test sets from public repositories' snapshots, byte for byte.

    python3 scripts/build_tatoeba_corpus.py --mirror DIR

DIR holds each repository's snapshot as a git directory, ``DIR/<owner>+<name>/repo`` (what the project's
``fetch`` brings); every file is read at the commit transformer/corpus/tatoeba.py names, and the training
exports must hash to the sha256 recorded there. Needs ``git`` and OpenCC (``pip install opencc``) for the
Traditional lines of the later Chinese export. Nothing is downloaded.

Writes (gzip TSV, ``source page split en fr|zh``, fixed mtime):

- ``transformer/corpus/data/tatoeba.tsv.gz``: English-French training export, train / dev;
- ``transformer/corpus/data/public_tests.tsv.gz``: Tatoeba test v2021-08-07 eng-fra and FLORES-200 devtest
  eng-fra, test only, never trained on;
- ``transformer/corpus/data/zh/tatoeba.tsv.gz`` and ``zh/public_tests.tsv.gz``: the same for English-Chinese
  (the test's ``cmn_Hans`` lines; FLORES ``zho_Hans``);

and their entries in each folder's ``MANIFEST.json`` (repository, commit, path, sha256, licence, attribution,
counts). No training pair's English is a test sentence of either language, nor one of the sentences typed as a new
user would (tatoeba.match_key).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transformer.corpus.real import DATA_DIR, HEADER, HEADER_ZH, write_pairs  # noqa: E402
from transformer.corpus.tatoeba import (  # noqa: E402
    ATTRIBUTION,
    CMN_EXPORT,
    CMN_LATER_EXPORT,
    FLORES_DIR,
    FLORES_TEST,
    FRA_EXPORT,
    LICENCE_FLORES,
    LICENCE_TATOEBA,
    TATOEBA_TEST,
    TESTSETS_COMMIT,
    TESTSETS_REPO,
    Snapshot,
    match_key,
    merge_exports,
    read_export,
    read_test_set,
    simplified,
    split_tatoeba,
    test_rows,
    typed_keys,
    zip_member,
)


class Mirror:
    """Files read from snapshots' git directories, each recorded with its sha256."""

    def __init__(self, root: Path) -> None:
        self.root, self.read_files = root, []

    def read(self, snap: Snapshot) -> bytes:
        git_dir = self.root / snap.repo.replace("/", "+") / "repo"
        data = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{snap.commit}:{snap.path}"], check=True, capture_output=True
        ).stdout
        digest = hashlib.sha256(data).hexdigest()
        if snap.sha256 and digest != snap.sha256:
            sys.exit(f"{snap.repo}@{snap.commit}:{snap.path}: sha256 {digest}, expected {snap.sha256}")
        self.read_files.append({**snap.to_dict(), "sha256": digest})
        return zip_member(data, snap.member) if snap.member else data

    def test_file(self, path: str) -> bytes:
        return self.read(Snapshot(TESTSETS_REPO, TESTSETS_COMMIT, path, ""))


def public_sets(mirror: Mirror, lang: str) -> dict[str, list[tuple[str, str]]]:
    """{set name: (English, reference) pairs} of one target language's public test sets."""
    tdir = f"testsets/eng-{'fra' if lang == 'fr' else 'zho'}/{TATOEBA_TEST}"
    if lang == "fr":
        tatoeba = read_test_set(mirror.test_file(f"{tdir}.eng"), mirror.test_file(f"{tdir}.fra"))
    else:
        tatoeba = read_test_set(
            mirror.test_file(f"{tdir}.eng"), mirror.test_file(f"{tdir}.zho"), mirror.test_file(f"{tdir}.zho.labels"),
            "cmn_Hans",
        )
    flores_tgt = "fra_Latn" if lang == "fr" else "zho_Hans"
    flores = read_test_set(
        mirror.test_file(f"{FLORES_DIR}/eng_Latn.devtest"), mirror.test_file(f"{FLORES_DIR}/{flores_tgt}.devtest")
    )
    return {TATOEBA_TEST: tatoeba, FLORES_TEST: flores}


def update_manifest(path: Path, entries: dict[str, dict]) -> None:
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    manifest.setdefault("files", {}).update(entries)
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def build(mirror_root: Path, out: Path, to_simplified) -> dict[str, dict]:
    sets = {lang: public_sets(Mirror(mirror_root), lang) for lang in ("fr", "zh")}
    test_keys = {match_key(en) for by_set in sets.values() for pairs in by_set.values() for en, _ in pairs}
    test_keys |= typed_keys()  # our own test set: the sentences typed as a new user would
    report = {}
    for lang in ("fr", "zh"):
        mirror = Mirror(mirror_root)
        folder = out if lang == "fr" else out / "zh"
        header = HEADER if lang == "fr" else HEADER_ZH
        extra: dict = {}
        if lang == "fr":
            pairs = read_export(mirror.read(FRA_EXPORT))
            extra["export_pairs"] = len(pairs)
        else:
            first = read_export(mirror.read(CMN_EXPORT))
            later, converted = simplified(read_export(mirror.read(CMN_LATER_EXPORT)), to_simplified)
            first_simple, converted_first = simplified(first, to_simplified)
            pairs = merge_exports(first_simple, later)
            extra.update(
                export_pairs={CMN_EXPORT.repo: len(first), CMN_LATER_EXPORT.repo: len(later)},
                converted_to_simplified={CMN_EXPORT.repo: converted_first, CMN_LATER_EXPORT.repo: converted},
                pairs_after_merge=len(pairs),
            )
        split = split_tatoeba(pairs, test_keys, page="eng-" + ("fra" if lang == "fr" else "cmn"))
        write_pairs(folder / "tatoeba.tsv.gz", split.rows(), header)
        tatoeba_entry = {
            "licence": LICENCE_TATOEBA,
            "attribution": ATTRIBUTION,
            "snapshots": mirror.read_files,
            **extra,
            "removed_as_test_english": split.removed_as_test,  # public test sets and the typed sentences
            "exact_duplicates_dropped": split.duplicates,
            "by_split": {s: len(v) for s, v in split.by_split.items() if v},
            "split": "dev: sha1('tatoeba:' + match_key(English)) < 0.01; the rest train; no test (the public sets are)",
        }
        test_mirror = Mirror(mirror_root)
        lang_sets = public_sets(test_mirror, lang)
        write_pairs(folder / "public_tests.tsv.gz", test_rows(lang_sets), header)
        tests_entry = {
            "licence": f"{TATOEBA_TEST}: {LICENCE_TATOEBA}; {FLORES_TEST}: {LICENCE_FLORES}",
            "attribution": ATTRIBUTION + "; FLORES-200 (NLLB Team et al. 2022), via " + TESTSETS_REPO,
            "snapshots": test_mirror.read_files,
            "by_set": {name: len(p) for name, p in lang_sets.items()},
            "use": "test only, never trained on: every training pair whose English matches one of these "
            "(tatoeba.match_key, both languages' sets) is removed from training",
        }
        entries = {"tatoeba.tsv.gz": tatoeba_entry, "public_tests.tsv.gz": tests_entry}
        update_manifest(folder / "MANIFEST.json", entries)
        report[lang] = entries
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", required=True, type=Path, help="the folder of snapshots (<owner>+<name>/repo)")
    ap.add_argument("--out", type=Path, default=DATA_DIR, help="the corpus folder (default: the committed one)")
    args = ap.parse_args(argv)
    import opencc  # the build's own dependency, not the app's

    converter = opencc.OpenCC("t2s")
    report = build(args.mirror, args.out, converter.convert)
    for lang, entries in report.items():
        for name, entry in entries.items():
            counts = entry.get("by_split") or entry.get("by_set")
            print(f"{lang} {name}: {counts}", {k: entry[k] for k in entry if k.startswith(("removed", "converted"))})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
