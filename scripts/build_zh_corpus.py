"""Rebuild the committed English → 简体中文 corpus (transformer/corpus/data/zh/) from Debian packages.

    sudo python3 scripts/build_zh_corpus.py            # apt-get download + dpkg -x into a temp folder
    python3 scripts/build_zh_corpus.py --debs DIR      # the .deb files already downloaded into DIR

It never installs anything: ``apt-get download`` fetches the .deb files and ``dpkg -x`` unpacks each into its
own folder (see transformer/corpus/chinese.py for the Chinese rules). Three files:

- ``libreoffice.tsv.gz``: LibreOffice help, en-US beside zh-CN, aligned by paragraph id, split by page (a hash);
- ``everyday.tsv.gz``: Wesnoth 1.16's zh_CN catalogues (dialogue and narration), split by whole campaign
  (dev: The Sceptre of Fire; test: The South Guard + The Hammer of Thursagan; the rest train), as the French
  everyday corpus;
- ``gimp.tsv.gz``: the GIMP manual (en beside zh_CN), section by section: test only, never trained on; none of
  its English is in any training split.

Three more, added after the ``en-zh`` checkpoint was trained (preset ``en-zh-more``); the three files above
rebuild byte for byte, and none of these files' training English is held out anywhere or is GIMP English:

- ``gnome.tsv.gz``: GNOME's desktop help (``gnome-user-docs``), C beside zh_CN Mallard pages, split by page;
- ``apps.tsv.gz``: the help of GNOME and MATE applications with a zh_CN twin (real.HELP_PACKAGES), split by page;
- ``ui.tsv.gz``: the zh_CN interface catalogues of the same GNOME / MATE packages and of the four image editors
  (real.CATALOGUES), messages of at least three English words: training only (no pages to hold out).

One more, built last (the six above rebuild byte for byte with it):

- ``objects.tsv.gz``: the zh_CN catalogues of Cataclysm: Dark Days Ahead (its items, places and talk) and gbrainy,
  and Tux Paint's stamp descriptions (chinese.extract_objects_zh): training only; none of its English is held out
  anywhere or is GIMP English.

And one more, built after it (the seven above rebuild byte for byte with it):

- ``docs.tsv.gz``: Debian's own documentation, The Debian Administrator's Handbook (en-US beside zh-CN, pages
  aligned in order) and Debian Reference (each chapter's sections aligned by their ids)
  (chinese_docs.extract_debian_docs_zh), split by page; its training English is held out nowhere and is no GIMP
  English, its held-out pages hold no English another file trains on.

And one more, built after it (the eight above rebuild byte for byte with it):

- ``guides.tsv.gz``: Debian's guides with a zh_CN twin, the Installation Guide, the New Maintainers' Guide, the
  Debian FAQ and the Debian Edu manual, each page's sections aligned by their ids
  (chinese_docs.extract_debian_guides_zh),
  split by page (the Edu manual, one page per language, by section); the same rules as docs.tsv.gz, docs included.

And one more, built last (the nine above rebuild byte for byte with it):

- ``tutorials.tsv.gz``: Inkscape's nine tutorials (``inkscape-tutorials``), each SVG's texts in order beside its
  zh_CN twin's (chinese_docs.extract_tutorials_zh): graphics-editing prose, the GIMP manual's subject; training
  only (nine
  pages, too few to hold any out); none of its English is held out anywhere or is GIMP English.

And two more, built last (the ten above rebuild byte for byte with them), training only (preset ``en-zh-office``):

- ``office_ui.tsv.gz``: LibreOffice's own interface (``libreoffice-l10n-zh-cn``: the zh_CN catalogue of each
  module, chinese_docs.extract_office_ui_zh), messages of at least three English words, as ``ui.tsv.gz``;
- ``itil.tsv.gz``: the Debian Edu legacy ITIL manual (``debian-edu-doc-legacy-en`` / ``-zh-cn``), its paragraphs
  in order (chinese_docs.extract_itil_zh: its section ids are generated, different in each language).

None of their English is held out anywhere or is GIMP English.

And one more, built last (the twelve above rebuild byte for byte with it), training only (preset ``en-zh-kicad``):

- ``kicad.tsv.gz``: KiCad 6's manuals (``kicad-doc-en`` / ``kicad-doc-zh``), each page's sections paired by their
  position, their paragraphs in order (chinese_docs.extract_kicad_zh): manual prose about a design program's tools,
  panels and dialogs, the GIMP manual's register; none of its English is held out anywhere or is GIMP English.

And one more, built last (the thirteen above rebuild byte for byte with it), training only (preset
``en-zh-graphics``):

- ``graphics.tsv.gz``: the interfaces of graphics programs other than GIMP (chinese_docs.extract_graphics_zh): the zh_CN
  catalogues of Blender, Dia, Drawing, Gwenview, Hugin, KolourPaint, libmypaint and Synfig Studio, and
  RawTherapee's language files, messages of at least three English words; none of its English is held out anywhere
  or is GIMP English (GIMP's own interface is not read).

Versions, counts and licences go to ``transformer/corpus/data/zh/MANIFEST.json``. The output is byte-for-byte
reproducible for the same package versions (sorted pages, a fixed gzip mtime, a split by name or hash).
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

from transformer.corpus import chinese as C  # noqa: E402
from transformer.corpus import chinese_docs as D  # noqa: E402
from transformer.corpus import everyday as E  # noqa: E402
from transformer.corpus import real  # noqa: E402

OUT = real.DATA_DIR / "zh"
PACKAGES = (
    "libreoffice-help-en-us",
    "libreoffice-help-zh-cn",
    *E.WESNOTH_PACKAGES,
    "gimp-help-en",
    "gimp-help-zh-cn",
    "gnome-user-docs",
    *real.HELP_PACKAGES,
    *real.CATALOGUES,
    *E.OBJECT_CATALOGUES,
    E.STAMPS_PACKAGE,
    "debian-handbook",
    *C.REFERENCE_PACKAGES,
    *C.GUIDES_PACKAGES,
    C.TUTORIALS[0],
    C.OFFICE_UI[0],
    *C.ITIL_PACKAGES,
    *C.KICAD_PACKAGES,
    *C.GRAPHICS_PACKAGES,
)
UI_PACKAGES = (*real.HELP_PACKAGES, *real.CATALOGUES)


def _stats(pairs: list, splits: dict) -> dict:
    return {
        "aligned_pairs": len(pairs),
        "unique_english": len({C.dedup_key(p.src) for p in pairs}),
        "by_split": {s: len(v) for s, v in splits.items()},
        "pages_by_split": {s: len({p.page for p in v}) for s, v in splits.items()},
        "english_words_by_split": {s: sum(len(p.src.split()) for p in v) for s, v in splits.items()},
        "chinese_characters_by_split": {s: sum(len(C.dedup_key(p.tgt)) for p in v) for s, v in splits.items()},
    }


def build(workdir: Path, out: Path, versions: dict[str, str]) -> dict:
    lo = list(
        C.extract_pages_zh(
            workdir / "libreoffice-help-en-us" / real.LIBREOFFICE_EN,
            workdir / "libreoffice-help-zh-cn" / C.LIBREOFFICE_ZH,
            "libreoffice",
        )
    )
    wesnoth = [p for name in E.WESNOTH_PACKAGES for p in C.extract_wesnoth_zh(workdir / name)]
    gi = list(
        C.extract_pages_zh(workdir / "gimp-help-en" / real.GIMP_EN, workdir / "gimp-help-zh-cn" / C.GIMP_ZH, "gimp")
    )

    lo_splits = C.split_by_page_zh(lo)
    everyday_splits = C.split_by_page_zh(wesnoth, split_of=lambda p: E.HELD_OUT.get(p.page, "train"))
    # no held-out English of one corpus in the other's training split; none of either's training English held out
    heldout = {C.dedup_key(p.src) for sp in (lo_splits, everyday_splits) for s in ("dev", "test") for p in sp[s]}
    for sp in (lo_splits, everyday_splits):
        sp["train"] = [p for p in sp["train"] if C.dedup_key(p.src) not in heldout]
    trained = {p.src for sp in (lo_splits, everyday_splits) for p in sp["train"]}
    gimp = C.heldout_only_zh(gi, trained)

    out.mkdir(parents=True, exist_ok=True)
    manifest: dict = {"packages": versions, "licences": C.LICENCES, "files": {}}
    for name, pairs, splits in (("libreoffice", lo, lo_splits), ("everyday", wesnoth, everyday_splits)):
        real.write_pairs(out / f"{name}.tsv.gz", [(s, p) for s in real.SPLITS for p in splits[s]], real.HEADER_ZH)
        manifest["files"][f"{name}.tsv.gz"] = {**_stats(pairs, splits), "licence": C.LICENCES[name]}
    real.write_pairs(out / "gimp.tsv.gz", [("test", p) for p in gimp], real.HEADER_ZH)
    manifest["files"]["gimp.tsv.gz"] = {
        **_stats(gi, {"test": gimp}),
        "licence": C.LICENCES["gimp"],
        "use": "out-of-source test only; never trained on",
    }
    manifest["files"]["libreoffice.tsv.gz"]["split"] = (
        "by page: sha1(libreoffice:page) < 0.04 → test, < 0.06 → dev, else train"
    )
    manifest["files"]["everyday.tsv.gz"]["split"] = (
        "Wesnoth by whole campaign (dev: wesnoth-sof; test: wesnoth-tsg, wesnoth-thot; the rest train)"
    )
    manifest["files"]["everyday.tsv.gz"]["pairs_by_catalogue"] = {
        c: sum(p.page == c for p in wesnoth) for c in sorted({p.page for p in wesnoth})
    }
    manifest["licences_by_package"] = {p: debian_packages.licences(workdir / p, p) for p in PACKAGES}
    gimp_english = {C.dedup_key(p.src) for p in gi}
    heldout = _build_more(workdir, out, manifest, (lo_splits, everyday_splits), gimp_english)
    objects = C.extract_objects_zh(workdir)
    by_source = ("pairs_by_source", lambda p: p.source)
    use = "training only; en-zh since its second session (preset en-zh-objects)"
    _build_training_only("objects", objects, out, manifest, heldout | gimp_english, by_source, "training only", use)
    earlier = ("libreoffice", "everyday", "gimp", "gnome", "apps", "ui", "objects")
    heldout |= _build_manual("docs", D.extract_debian_docs_zh(workdir), out, manifest, heldout | gimp_english, earlier)
    third = "en-zh-manuals (en-zh's third session)"
    manifest["files"]["docs.tsv.gz"]["use"] = f"train / dev / test; presets en-zh-docs, {third}"
    guides = D.extract_debian_guides_zh(workdir)
    heldout |= _build_manual("guides", guides, out, manifest, heldout | gimp_english, (*earlier, "docs"))
    manifest["files"]["guides.tsv.gz"]["use"] = f"train / dev / test; preset {third}"
    tutorials = D.extract_tutorials_zh(workdir / C.TUTORIALS[0])
    by_tutorial = ("pairs_by_tutorial", lambda p: p.page)
    split = "training only (nine tutorials: too few pages to hold any out)"
    use = "training only; preset en-zh-tutorials"
    _build_training_only("tutorials", tutorials, out, manifest, heldout | gimp_english, by_tutorial, split, use)
    later = "training only; preset en-zh-office (en-zh's sixth session)"
    office = D.extract_office_ui_zh(workdir / C.OFFICE_UI[0])
    by_catalogue = ("pairs_by_catalogue", lambda p: p.page)
    split = f"training only; messages of at least {C.UI_MIN_WORDS} English words, menu accelerators removed"
    _build_training_only("office_ui", office, out, manifest, heldout | gimp_english, by_catalogue, split, later)
    split = "training only (one page, its paragraphs in order)"
    by_page = ("pairs_by_page", lambda p: p.page)
    _build_training_only(
        "itil", D.extract_itil_zh(workdir), out, manifest, heldout | gimp_english, by_page, split, later
    )
    split = "training only (eight manual pages, one per program: too few to hold any out)"
    use = "training only; preset en-zh-kicad (en-zh's eighth session)"
    kicad = D.extract_kicad_zh(workdir)
    _build_training_only("kicad", kicad, out, manifest, heldout | gimp_english, by_page, split, use)
    split = f"training only (program interfaces); messages of at least {C.UI_MIN_WORDS} English words"
    use = "training only; preset en-zh-graphics (en-zh's ninth session)"
    graphics = D.extract_graphics_zh(workdir)
    by_package = ("pairs_by_package", lambda p: p.page.split("/")[0])
    _build_training_only("graphics", graphics, out, manifest, heldout | gimp_english, by_package, split, use)
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def _build_training_only(
    name: str, pairs: list, out: Path, manifest: dict, excluded: set[str], count_by: tuple, split: str, use: str
) -> None:
    """objects and tutorials: every pair trains (no pages held out), less those whose English is in excluded (every
    earlier file's held-out English and the GIMP manual's, as dedup keys); count_by is (the MANIFEST key, what a pair
    is counted by)."""
    sp = C.split_by_page_zh(pairs, 0.0, 0.0)
    sp["train"] = [p for p in sp["train"] if C.dedup_key(p.src) not in excluded]
    real.write_pairs(out / f"{name}.tsv.gz", [("train", p) for p in sp["train"]], real.HEADER_ZH)
    key, of = count_by
    manifest["files"][f"{name}.tsv.gz"] = {
        **_stats(pairs, sp),
        "licence": C.LICENCES[name],
        key: dict(sorted(Counter(of(p) for p in sp["train"]).items())),
        "split": split,
        "use": use,
    }


def _build_more(workdir: Path, out: Path, manifest: dict, earlier: tuple, gimp_english: set[str]) -> set[str]:
    """gnome, apps and ui (added after the en-zh checkpoint): the earlier files untouched, so these lose every
    pair whose English the earlier ones hold out (or GIMP has), and their held-out pages lose every English text
    the earlier ones train on; among themselves, none's training English is another's held-out English. Returns
    every file's held-out English (dedup keys)."""
    gnome = C.extract_gnome_zh(workdir / "gnome-user-docs")
    apps = [p for name in real.HELP_PACKAGES for p in C.extract_help_zh(workdir / name)]
    ui = [p for name in UI_PACKAGES for p in C.extract_catalogues_zh(workdir / name, name)]
    sources = (("gnome", gnome), ("apps", apps), ("ui", ui))
    splits = {name: C.split_by_page_zh(pairs, *((0.0, 0.0) if name == "ui" else ())) for name, pairs in sources}
    trained = {C.dedup_key(p.src) for sp in earlier for p in sp["train"]}
    heldout = {C.dedup_key(p.src) for sp in earlier for s in ("dev", "test") for p in sp[s]}
    for sp in splits.values():
        for s in ("dev", "test"):
            sp[s] = [p for p in sp[s] if C.dedup_key(p.src) not in trained]
    heldout |= {C.dedup_key(p.src) for sp in splits.values() for s in ("dev", "test") for p in sp[s]}
    for name, pairs in sources:
        sp = splits[name]
        sp["train"] = [p for p in sp["train"] if C.dedup_key(p.src) not in heldout | gimp_english]
        real.write_pairs(out / f"{name}.tsv.gz", [(s, p) for s in real.SPLITS for p in sp[s]], real.HEADER_ZH)
        manifest["files"][f"{name}.tsv.gz"] = {**_stats(pairs, sp), "licence": C.LICENCES[name]}
        manifest["files"][f"{name}.tsv.gz"]["pairs_by_package"] = dict(
            sorted(Counter(p.page.split("/")[0] if name != "gnome" else "gnome-user-docs" for p in sp["train"]).items())
        )
    for name in ("gnome", "apps"):
        manifest["files"][f"{name}.tsv.gz"]["split"] = (
            f"by page: sha1({name}:page) < 0.04 → test, < 0.06 → dev, else train"
        )
    manifest["files"]["ui.tsv.gz"]["split"] = (
        f"training only; messages of at least {C.UI_MIN_WORDS} English words, menu accelerators removed"
    )
    manifest["files"]["ui.tsv.gz"]["use"] = "training only; en-zh since preset en-zh-more"
    for name in ("gnome", "apps"):
        manifest["files"][f"{name}.tsv.gz"]["use"] = "train / dev / test; en-zh since preset en-zh-more"
    return heldout


def _build_manual(name: str, pairs: list, out: Path, manifest: dict, excluded: set[str], before: tuple) -> set[str]:
    """docs and guides (added after en-zh's second session, one after the other): the training pairs lose every
    English text in excluded (every earlier file's held-out English and the GIMP manual's, as dedup keys), the
    held-out pages every English text the files named in before train on. Returns its held-out English."""
    sp = C.split_by_page_zh(pairs)
    trained_keys = {C.dedup_key(p.src) for f in before for p in real.read_pairs(out / f"{f}.tsv.gz", "train")}
    for s in ("dev", "test"):
        sp[s] = [p for p in sp[s] if C.dedup_key(p.src) not in trained_keys]
    sp["train"] = [p for p in sp["train"] if C.dedup_key(p.src) not in excluded]
    real.write_pairs(out / f"{name}.tsv.gz", [(s, p) for s in real.SPLITS for p in sp[s]], real.HEADER_ZH)
    manifest["files"][f"{name}.tsv.gz"] = {
        **_stats(pairs, sp),
        "licence": C.LICENCES[name],
        "pairs_by_book": dict(sorted(Counter(p.page.split("/")[0] for p in sp["train"]).items())),
        "split": f"by page: sha1({name}:page) < 0.04 → test, < 0.06 → dev, else train",
    }
    return {C.dedup_key(p.src) for s in ("dev", "test") for p in sp[s]}


def main(argv: list[str] | None = None) -> int:
    return debian_packages.main(
        __doc__, PACKAGES, build, OUT, lambda m: {k: v["by_split"] for k, v in m["files"].items()}, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
