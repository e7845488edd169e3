"""Rebuild the committed real-text corpus (transformer/corpus/data/) from Debian packages.

    sudo python3 scripts/build_real_corpus.py            # apt-get download + dpkg -x into a temp folder
    python3 scripts/build_real_corpus.py --debs DIR      # the .deb files already downloaded into DIR

It never installs anything: ``apt-get download`` fetches the .deb files and ``dpkg -x``
unpacks each into its own folder. The package versions, the counts and the licences go
to ``transformer/corpus/data/MANIFEST.json``. The output is byte-for-byte reproducible
for the same package versions (sorted pages, a fixed gzip mtime, a split by hash).
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/debian_packages.py, also when loaded by path
import debian_packages  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _corpus_modules():
    """transformer/corpus/real.py and manuals.py, loaded as a package of their own (they need nothing else of
    the package, and this script no torch)."""
    package = types.ModuleType("_corpus")
    package.__path__ = [str(ROOT / "transformer" / "corpus")]
    sys.modules["_corpus"] = package
    return importlib.import_module("_corpus.real"), importlib.import_module("_corpus.manuals")


real, manuals = _corpus_modules()

PACKAGES = {
    "libreoffice-help-en-us": ("libreoffice", real.LIBREOFFICE_EN),
    "libreoffice-help-fr": ("libreoffice", real.LIBREOFFICE_FR),
    "debian-handbook": ("handbook", None),
    "gnome-user-docs": ("gnome", None),
    **{name: ("ui", None) for name in real.CATALOGUES},
    **{name: ("apps", None) for name in real.HELP_PACKAGES},
    **{name: ("kde", None) for name in real.KDE_PACKAGES},
    "gimp-help-en": ("gimp", real.GIMP_EN),
    "gimp-help-fr": ("gimp", real.GIMP_FR),
}


def build(workdir: Path, out: Path, versions: dict[str, str]) -> dict:
    lo = list(
        manuals.extract_pages(
            workdir / "libreoffice-help-en-us" / real.LIBREOFFICE_EN,
            workdir / "libreoffice-help-fr" / real.LIBREOFFICE_FR,
            "libreoffice",
        )
    )
    hb = list(
        manuals.extract_pages(
            workdir / "debian-handbook" / real.HANDBOOK_EN, workdir / "debian-handbook" / real.HANDBOOK_FR, "handbook"
        )
    )
    gimp_roots = (workdir / "gimp-help-en" / real.GIMP_EN, workdir / "gimp-help-fr" / real.GIMP_FR)
    gi = list(manuals.extract_pages(*gimp_roots, "gimp"))  # section by section (manuals.align_by_anchor)
    gnome = list(
        manuals.extract_pages(
            workdir / "gnome-user-docs" / real.GNOME_EN, workdir / "gnome-user-docs" / real.GNOME_FR, "gnome"
        )
    )
    # The sources added after the first round lose every pair whose English is a GIMP paragraph of the
    # whole-page alignment that they were first cut against (so that they rebuild byte for byte); the GIMP
    # test set, aligned section by section since, then loses every pair whose English any training split has.
    gimp_english = {p.src for p in manuals.extract_pages(*gimp_roots, "gimp", by_anchor=False)}
    gnome = [p for p in gnome if p.src not in gimp_english]
    apps = [p for name in real.HELP_PACKAGES for p in manuals.extract_help(workdir / name) if p.src not in gimp_english]
    kde = [p for name in real.KDE_PACKAGES for p in manuals.extract_kde(workdir / name) if p.src not in gimp_english]
    ui = [
        p
        for name, path in real.CATALOGUES.items()
        for p in real.catalogue_pairs((workdir / name / path).read_bytes(), f"{name}/{Path(path).name}")
        if p.src not in gimp_english
    ]
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict = {"packages": versions, "licences": real.LICENCES, "files": {}}
    heldout: set[str] = set()
    every_trained: set[str] = set()
    # kde, added last, comes after ui so that the files before it rebuild byte for byte
    sources = (("libreoffice", lo), ("handbook", hb), ("gnome", gnome), ("apps", apps), ("ui", ui), ("kde", kde))
    for name, pairs in sources:
        # catalogues have no pages to hold out: training only
        splits = real.split_by_page(pairs, 0.0, 0.0) if name == "ui" else real.split_by_page(pairs)
        if name in ("gnome", "apps", "ui", "kde"):  # added later: none of the manuals' held-out English in training
            splits["train"] = [p for p in splits["train"] if p.src not in heldout]
        if name == "kde":  # and none of the other sources' training English in its held-out pages
            for s in ("dev", "test"):
                splits[s] = [p for p in splits[s] if p.src not in every_trained]
        every_trained |= {p.src for p in splits["train"]}
        heldout |= {p.src for s in ("dev", "test") for p in splits[s]}
        rows = [(s, p) for s in real.SPLITS for p in splits[s]]
        real.write_pairs(out / f"{name}.tsv.gz", rows)
        manifest["files"][f"{name}.tsv.gz"] = {
            "aligned_pairs": len(pairs),
            "unique_english": len({p.src for p in pairs}),
            "by_split": {s: len(v) for s, v in splits.items()},
            "pages_by_split": {s: len({p.page for p in v}) for s, v in splits.items()},
            "english_words_by_split": {s: sum(len(p.src.split()) for p in v) for s, v in splits.items()},
            "licence": real.LICENCES[name],
        }
    gimp = real.heldout_only(gi, every_trained)
    real.write_pairs(out / "gimp.tsv.gz", [("test", p) for p in gimp])
    manifest["files"]["gimp.tsv.gz"] = {
        "aligned_pairs": len(gi),
        "unique_english": len({p.src for p in gi}),
        "by_split": {"test": len(gimp)},
        "pages_by_split": {"test": len({p.page for p in gimp})},
        "licence": real.LICENCES["gimp"],
        "use": "out-of-source test only; never trained on",
    }
    manifest["split"] = "by page: sha1(source:page) < 0.04 → test, < 0.06 → dev, else train"
    manifest["sources_by_split"] = {
        s: dict(Counter(p.source for p in real.split_by_page(lo + hb + gnome + apps + kde)[s])) for s in real.SPLITS
    }
    for name, packages in (("apps", real.HELP_PACKAGES), ("kde", real.KDE_PACKAGES)):
        manifest["files"][f"{name}.tsv.gz"]["licences_by_package"] = {
            p: debian_packages.licences(workdir / p, p) for p in packages
        }
    manifest["sources_by_split"]["train"]["ui"] = manifest["files"]["ui.tsv.gz"]["by_split"]["train"]
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    return debian_packages.main(
        __doc__, PACKAGES, build, real.DATA_DIR, lambda m: {k: v["by_split"] for k, v in m["files"].items()}, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
