"""Rebuild the committed everyday corpus (transformer/corpus/data/everyday*.tsv.gz) from Debian packages.

    sudo python3 scripts/build_everyday_corpus.py            # apt-get download + dpkg -x into a temp folder
    python3 scripts/build_everyday_corpus.py --debs DIR      # the .deb files already downloaded into DIR

It never installs anything: ``apt-get download`` fetches the .deb files and ``dpkg -x`` unpacks each
into its own folder (see transformer/corpus/everyday.py for what each source gives). Two files:

- ``everyday.tsv.gz``: Wesnoth's dialogue and narration (split by whole campaign: dev = The Sceptre of
  Fire, test = The South Guard + The Hammer of Thursagan) and GCompris's instructions (split by
  activity, by hash);
- ``everyday_words.tsv.gz``: FreeDict word pairs (training only);
- ``games.tsv.gz``: four more games' French catalogues (FreedroidRPG's dialogue, Widelands, Freeciv, Warzone
  2100: transformer/corpus/everyday.py's GAME_CATALOGUES), split by whole Widelands scenario (dev =
  scenario_atl01, test = scenario_emp04; the rest train). Built after the first two, so that they rebuild as before;
- ``objects.tsv.gz``: Cataclysm: Dark Days Ahead's and gbrainy's French catalogues and Tux Paint's stamp
  descriptions (transformer/corpus/everyday.py's OBJECT_CATALOGUES and extract_stamps), training only;
- ``dialogue.tsv.gz``: three games' dialogue and messages, training only: FreeDink's (Dink Smallwood's) French
  catalogue, Hedgewars' missions (its Lua locale table) and FreeCol's messages (its properties files);
- ``stories.tsv.gz``: Adonthell's Waste's Edge (its story and dialogue), Tux Paint's program, eduActiv8's
  activities and four more games (UFO: Alien Invasion, Seven Kingdoms, LordsAWar, Plee the Bear:
  transformer/corpus/everyday.py's STORY_CATALOGUES), training only. Built last.

The package versions, counts and licences join ``transformer/corpus/data/MANIFEST.json`` (under
"everyday"; the rest of the manifest is left as it is). The output is byte-for-byte reproducible for the
same package versions (sorted catalogues, a fixed gzip mtime, a split by name or hash).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/debian_packages.py, also when loaded by path
import debian_packages  # noqa: E402

from transformer.corpus import everyday as E  # noqa: E402
from transformer.corpus import freedict, real  # noqa: E402

PACKAGES = (
    *E.WESNOTH_PACKAGES,
    "gcompris-qt-data",
    "dict-freedict-eng-fra",
    *E.GAME_CATALOGUES,
    *E.OBJECT_CATALOGUES,
    E.STAMPS_PACKAGE,
    *E.DIALOGUE_CATALOGUES,
    E.HEDGEWARS_PACKAGE,
    E.FREECOL_PACKAGE,
    *E.STORY_CATALOGUES,
)
# the corpora this script writes (the others' English is what they exclude)
BUILT_HERE = ("everyday", "games", "objects", "dialogue", "stories")


def _other_corpora(data: Path) -> tuple[set[str], set[str]]:
    """(training English, held-out English) of the committed manual corpora (gimp is all held out)."""
    train, heldout = set(), set()
    for name, path in _files(data).items():
        if name.startswith(BUILT_HERE):
            continue
        for split in real.SPLITS:
            pairs = real.read_pairs(path, split)
            (train if split == "train" else heldout).update(p.src for p in pairs)
    return train, heldout


def _catalogue_entry(pairs: list, splits: dict[str, list], split: str) -> dict:
    """MANIFEST.json's entry for a corpus read from several sources' catalogues (games, objects)."""
    sources = sorted({p.source for p in pairs})
    return {
        "aligned_pairs": len(pairs),
        "aligned_pairs_by_source": {src: sum(p.source == src for p in pairs) for src in sources},
        "unique_english": len({p.src for p in pairs}),
        "by_split": {s: len(v) for s, v in splits.items()},
        "by_source_and_split": {
            src: {s: sum(p.source == src for p in v) for s, v in splits.items()} for src in sources
        },
        "pages_by_split": {s: len({(p.source, p.page) for p in v}) for s, v in splits.items()},
        "english_words_by_split": {s: sum(len(p.src.split()) for p in v) for s, v in splits.items()},
        "pairs_by_catalogue": dict(sorted(Counter(f"{p.source}/{p.page}" for p in pairs).items())),
        "licence": "; ".join(E.LICENCES[src] for src in sources),
        "split": split,
    }


def _training_only(out: Path, name: str, pairs: list, exclude: set[str]) -> list:
    """Write name.tsv.gz, a training-only corpus: pairs de-duplicated, none whose English is in exclude (held out
    elsewhere); its training pairs."""
    train = E.split_everyday(pairs, exclude_train=exclude)["train"]
    real.write_pairs(out / f"{name}.tsv.gz", [("train", p) for p in train])
    return train


def _files(data: Path) -> dict[str, Path]:
    return {p.name.split(".")[0]: p for p in sorted(data.glob("*.tsv.gz"))}


def build(workdir: Path, out: Path, versions: dict[str, str]) -> dict:
    wesnoth = [p for name in E.WESNOTH_PACKAGES for p in E.extract_wesnoth(workdir / name)]
    gcompris = E.extract_gcompris(workdir / "gcompris-qt-data")
    other_train, other_heldout = _other_corpora(out)
    # no held-out manual English in everyday training; no trained English of any corpus in everyday's held-out
    splits = E.split_everyday(wesnoth + gcompris, exclude_train=other_heldout, exclude_heldout=other_train)
    out.mkdir(parents=True, exist_ok=True)
    real.write_pairs(out / "everyday.tsv.gz", [(s, p) for s in real.SPLITS for p in splits[s]])
    # each headword's French chosen by what the everyday training sentences say of it (held-out ones unread)
    words = freedict.extract_freedict(workdir / "dict-freedict-eng-fra", freedict.FrenchEvidence(splits["train"]))
    every_heldout = other_heldout | {p.src for s in ("dev", "test") for p in splits[s]}
    words = [p for p in words if p.src not in every_heldout]
    real.write_pairs(out / "everyday_words.tsv.gz", [("train", p) for p in words])

    # the games last: none of their training English is held out anywhere, none of their held-out English trained on
    games = [p for name in E.GAME_CATALOGUES for p in E.extract_game(workdir / name, name)]
    everyday_train = {p.src for p in splits["train"]} | {p.src for p in words}
    game_splits = E.split_everyday(games, exclude_train=every_heldout, exclude_heldout=other_train | everyday_train)
    real.write_pairs(out / "games.tsv.gz", [(s, p) for s in real.SPLITS for p in game_splits[s]])

    # then the objects, training only: none of their English is held out anywhere
    objects = [p for name in E.OBJECT_CATALOGUES for p in E.extract_game(workdir / name, name)]
    objects += E.extract_stamps(workdir / E.STAMPS_PACKAGE)
    games_heldout = {p.src for s in ("dev", "test") for p in game_splits[s]}
    objects_train = _training_only(out, "objects", objects, every_heldout | games_heldout)

    # then the dialogue, training only: none of its English is held out anywhere
    dialogue = [p for name in E.DIALOGUE_CATALOGUES for p in E.extract_game(workdir / name, name)]
    dialogue += E.extract_hedgewars(workdir / E.HEDGEWARS_PACKAGE)
    dialogue += E.extract_freecol(workdir / E.FREECOL_PACKAGE)
    dialogue_train = _training_only(out, "dialogue", dialogue, every_heldout | games_heldout)

    # last, the stories, children's words and four more games, training only: none of their English is held out
    stories = [p for name in E.STORY_CATALOGUES for p in E.extract_game(workdir / name, name)]
    stories_train = _training_only(out, "stories", stories, every_heldout | games_heldout)

    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    by_source = {
        src: {s: sum(p.source == src for p in splits[s]) for s in real.SPLITS} for src in ("wesnoth", "gcompris")
    }
    manifest.setdefault("files", {})["everyday.tsv.gz"] = {
        "aligned_pairs": len(wesnoth) + len(gcompris),
        "aligned_pairs_by_source": {"wesnoth": len(wesnoth), "gcompris": len(gcompris)},
        "unique_english": len({p.src for p in wesnoth + gcompris}),
        "by_split": {s: len(v) for s, v in splits.items()},
        "by_source_and_split": by_source,
        "pages_by_split": {s: len({p.page for p in v}) for s, v in splits.items()},
        "english_words_by_split": {s: sum(len(p.src.split()) for p in v) for s, v in splits.items()},
        "pairs_by_catalogue": dict(sorted(Counter(p.page for p in wesnoth).items())),
        "licence": f"{E.LICENCES['wesnoth']}; {E.LICENCES['gcompris']}",
        "split": "Wesnoth by whole campaign (dev: wesnoth-sof; test: wesnoth-tsg, wesnoth-thot; the rest train); "
        "GCompris by message context, sha1(gcompris:context) < 0.04 → test, < 0.06 → dev, else train",
    }
    manifest["files"]["everyday_words.tsv.gz"] = {
        "aligned_pairs": len(words),
        "by_split": {"train": len(words)},
        "pages_by_split": {"train": 1},
        "licence": E.LICENCES["freedict"],
        "use": "training only: one French word per English headword (the alternative found most often in the "
        "French of everyday.tsv.gz's training pairs whose English has the headword, then the most frequent)",
    }
    manifest["files"]["games.tsv.gz"] = _catalogue_entry(
        games,
        game_splits,
        "Widelands by whole scenario (dev: scenario_atl01.wmf; test: scenario_emp04.wmf; the rest train); "
        "FreedroidRPG, Freeciv and Warzone 2100 train only (no unit smaller than a catalogue)",
    )
    manifest["files"]["objects.tsv.gz"] = _catalogue_entry(
        objects,
        {"train": objects_train},
        "training only (one catalogue each; Tux Paint's stamps are one sentence each)",
    )
    manifest["files"]["dialogue.tsv.gz"] = _catalogue_entry(
        dialogue,
        {"train": dialogue_train},
        "training only (one catalogue, locale table or properties file each)",
    )
    manifest["files"]["stories.tsv.gz"] = _catalogue_entry(
        stories, {"train": stories_train}, "training only (one catalogue each)"
    )
    manifest.setdefault("packages", {}).update(versions)
    manifest["everyday"] = {
        "packages": versions,
        "licences": E.LICENCES,
        "licences_by_package": {p: debian_packages.licences(workdir / p, p) for p in PACKAGES},
    }
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    return debian_packages.main(
        __doc__,
        PACKAGES,
        build,
        real.DATA_DIR,
        lambda m: {k: v["by_split"] for k, v in m["files"].items() if k.startswith(BUILT_HERE)},
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
