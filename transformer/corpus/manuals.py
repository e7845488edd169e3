"""The HTML manuals' text, paired: every paragraph of an English page beside its French (or Chinese) twin.

How each manual aligns (:mod:`.real`'s docstring tells the sources): LibreOffice's help by paragraph id
(:func:`align_by_id`), Mallard and DocBook help pages and the Debian handbook in order when both languages have as
many paragraphs (:func:`align_in_order`), the GIMP manual by section anchor (:func:`align_by_anchor`), KDE's
handbooks from their ``index.cache.bz2`` (:func:`extract_kde`). No network, no Debian tools: these functions read
unpacked folders or HTML strings.
"""

from __future__ import annotations

import bz2
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

from .real import (
    HELP_EN,
    KDE_EN,
    LIBREOFFICE_ID,
    RealPair,
    clean,
    split_paragraph,
)

VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
SKIP = frozenset(("script", "style", "pre"))


class _Collector(HTMLParser):
    """Collects the text of every element that ``wants(tag, attrs)`` selects (outermost only),
    skipping scripts, styles, <pre> blocks and hidden variants (hidden + class)."""

    def __init__(self, wants) -> None:
        super().__init__(convert_charrefs=True)
        self.wants = wants
        self.depth = 0  # open elements below the captured one
        self.skip = 0  # open elements of a skipped subtree
        self.key: str | None = None
        self.buf: list[str] = []
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        a = dict(attrs)
        if self.skip:
            self.skip += 1
            return
        if tag in SKIP or ("hidden" in a and a.get("class")):
            self.skip = 1
            return
        if self.key is not None:
            self.depth += 1
            return
        key = self.wants(tag, a)
        if key is not None:
            self.key, self.depth, self.buf = key, 0, []

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.skip:
            self.skip -= 1
            return
        if self.key is None:
            return
        if self.depth:
            self.depth -= 1
            return
        self.found.append((self.key, clean("".join(self.buf))))
        self.key = None

    def handle_data(self, data: str) -> None:
        if self.key is not None and not self.skip:
            self.buf.append(data)


def _collect(html: str, wants) -> list[tuple[str, str]]:
    parser = _Collector(wants)
    parser.feed(html)
    parser.close()
    return [(k, t) for k, t in parser.found if t]


# DocBook's generated ids (idm51076): they differ between the two languages' pages, so they anchor nothing
GENERATED_ID = re.compile(r"^idm?\d+$")
HEADINGS = ("h2", "h3", "h4", "h5", "h6")


def paragraphs_by_anchor(html: str) -> dict[str, list[str]]:
    """The <p> paragraphs of a DocBook HTML page (the GIMP manual) grouped by the last stable id (a section's,
    a glossary entry's) that opened before them, each group in page order."""
    anchor = ""

    def wants(tag: str, a: dict) -> str | None:
        nonlocal anchor
        if a.get("id") and not GENERATED_ID.match(a["id"]):
            anchor = a["id"]
        return anchor if tag == "p" else None

    groups: dict[str, list[str]] = {}
    for key, text in _collect(html, wants):
        groups.setdefault(key, []).append(text)
    return groups


def paragraphs_by_heading(html: str) -> list[list[str]]:
    """The <p> paragraphs of an Asciidoctor HTML page (the KiCad manuals) grouped by section: group k holds the
    paragraphs after the page's k-th <h2>-<h6> heading (group 0 those before the first), each in page order; a
    translation keeps the headings but rewrites their generated ids, so sections are told apart by position."""
    heading = 0

    def wants(tag: str, a: dict) -> int | None:
        nonlocal heading
        if tag in HEADINGS:
            heading += 1
        return heading if tag == "p" else None

    found = _collect(html, wants)
    groups: list[list[str]] = [[] for _ in range(heading + 1)]
    for key, text in found:
        groups[key].append(text)
    return groups


def paragraphs_by_id(html: str) -> list[tuple[str, str]]:
    """(id, text) of every element whose id starts par_id / hd_id (LibreOffice help)."""
    return _collect(html, lambda tag, a: a["id"] if LIBREOFFICE_ID.match(a.get("id") or "") else None)


def paragraphs_in_order(html: str, kind: str) -> list[str]:
    """The paragraphs of a page in order: kind "handbook" reads <div class="para">, "gimp" reads <p>,
    "gnome" (Mallard XML) reads <p> and <title>, "docbook" (DocBook XML) reads <para> and <title>."""
    if kind == "handbook":
        wants = lambda tag, a: "p" if tag == "div" and "para" in (a.get("class") or "").split() else None  # noqa: E731
    elif kind == "gimp":
        wants = lambda tag, a: "p" if tag == "p" else None  # noqa: E731
    elif kind == "gnome":
        wants = lambda tag, a: "p" if tag in ("p", "title") else None  # noqa: E731
    elif kind == "docbook":
        wants = lambda tag, a: "p" if tag in ("para", "title") else None  # noqa: E731
    else:
        raise ValueError(f"unknown page kind {kind!r}")
    return [t for _, t in _collect(html, wants)]


def align_by_id(en_html: str, fr_html: str) -> list[tuple[str, str]]:
    """Pairs of one LibreOffice page: the k-th occurrence of an id in English with the k-th in French."""
    fr: dict[tuple[str, int], str] = {}
    seen: dict[str, int] = {}
    for key, text in paragraphs_by_id(fr_html):
        seen[key] = seen.get(key, 0) + 1
        fr[(key, seen[key])] = text
    out, seen = [], {}
    for key, text in paragraphs_by_id(en_html):
        seen[key] = seen.get(key, 0) + 1
        other = fr.get((key, seen[key]))
        if other:
            out.extend(split_paragraph(text, other))
    return out


def align_in_order(en_html: str, fr_html: str, kind: str, split=None) -> list[tuple[str, str]]:
    """Pairs of one page aligned in order, or [] when the two pages differ in paragraph count. split(src, tgt)
    cuts a paragraph pair into sentence pairs (default split_paragraph; chinese.split_paragraph_zh for Chinese)."""
    split = split or split_paragraph
    a, b = paragraphs_in_order(en_html, kind), paragraphs_in_order(fr_html, kind)
    if len(a) != len(b):
        return []
    return [p for x, y in zip(a, b) for p in split(x, y)]


def align_by_anchor(en_html: str, fr_html: str) -> list[tuple[str, str]]:
    """Pairs of one GIMP page: under each stable id present in both languages, the paragraphs aligned in
    order where both have as many. A section whose counts differ loses only its own pairs, and entries that
    each language sorts by its own terms (the glossary: "Alpha" first in English, "Adoucir" in French) pair
    by their ids, not by their rank."""
    a, b = paragraphs_by_anchor(en_html), paragraphs_by_anchor(fr_html)
    out = []
    for anchor, xs in a.items():
        ys = b.get(anchor)
        if ys and len(xs) == len(ys):
            out.extend(p for x, y in zip(xs, ys) for p in split_paragraph(x, y))
    return out


def read_page(path: Path) -> str:
    """A page's text, undecodable bytes replaced (a page is never refused for one bad byte)."""
    return path.read_text(encoding="utf-8", errors="replace")


# the page kind of each file suffix in applications' help: GNOME's Mallard pages, MATE's DocBook manuals
HELP_KINDS = {".page": "gnome", ".xml": "docbook", ".docbook": "docbook"}


def extract_pages(
    en_root: str | Path,
    fr_root: str | Path,
    source: str,
    kinds: dict[str, str] | None = None,
    prefix: str = "",
    by_anchor: bool | None = None,
    split=None,
) -> Iterator[RealPair]:
    """Every aligned pair of the pages present under both roots (sorted by path, so the order is fixed).

    kinds maps a file suffix to its page kind (default: the source's own pages, ``.page`` for "gnome",
    ``.html`` otherwise); prefix goes before each page's path in its name. by_anchor (default: for "gimp")
    aligns each section on its own (:func:`align_by_anchor`) instead of the whole page in order. split cuts a
    paragraph pair of a page aligned in order into sentences (align_in_order's; fr_root may then hold
    another language's pages: chinese.split_paragraph_zh for zh_CN ones).
    """
    by_anchor = source == "gimp" if by_anchor is None else by_anchor
    en_root, fr_root = Path(en_root), Path(fr_root)
    kinds = kinds or {".page" if source == "gnome" else ".html": source}
    for en_page in sorted(p for p in en_root.rglob("*") if p.suffix in kinds and p.is_file()):
        rel = en_page.relative_to(en_root).as_posix()
        fr_page = fr_root / rel
        if not fr_page.is_file():
            continue
        en, fr = read_page(en_page), read_page(fr_page)
        if source == "libreoffice":
            pairs = align_by_id(en, fr)
        elif by_anchor:
            pairs = align_by_anchor(en, fr)
        else:
            pairs = align_in_order(en, fr, kinds[en_page.suffix], split)
        for src, tgt in pairs:
            yield RealPair(source, prefix + rel, src, tgt)


def extract_help(package_root: str | Path, source: str = "apps", lang: str = "fr", split=None) -> Iterator[RealPair]:
    """Every aligned pair of one unpacked package's application help: each folder under HELP_EN with a
    twin in lang (French: HELP_FR; "zh_CN" reads usr/share/help/zh_CN) (gnome-help, the desktop's own help,
    excepted), each Mallard or DocBook page aligned in order by its kind, its paragraphs cut by split
    (extract_pages). Pages are named app/path."""
    en_help, fr_help = Path(package_root) / HELP_EN, Path(package_root) / Path(HELP_EN).parent / lang
    if not en_help.is_dir():
        return
    for app in sorted(p for p in en_help.iterdir() if p.is_dir() and p.name != "gnome-help"):
        yield from extract_pages(app, fr_help / app.name, source, HELP_KINDS, prefix=f"{app.name}/", split=split)


_CACHE_PAGE = re.compile(r'<FILENAME filename="([^"]+)">(.*?)</FILENAME>', re.S)


def cache_pages(data: bytes) -> dict[str, str]:
    """{page name: HTML} of a KDE handbook's ``index.cache.bz2`` (the pages kdoctools rendered, each inside a
    ``<FILENAME filename="name.html">`` chunk)."""
    return dict(_CACHE_PAGE.findall(bz2.decompress(data).decode("utf-8", errors="replace")))


def extract_kde(package_root: str | Path, source: str = "kde", lang: str = "fr", split=None) -> Iterator[RealPair]:
    """Every aligned pair of one unpacked package's KDE handbooks: each ``index.cache.bz2`` under KDE_FR (under
    usr/share/doc/HTML/<lang> for another lang: "zh_CN") with an English twin under KDE_EN; the <p> paragraphs
    of every page present in both aligned in order (the GIMP manual's rule), cut by split (align_in_order).
    Pages are named app/page.html (app/sub/page.html for a handbook in a subfolder)."""
    en_root, fr_root = Path(package_root) / KDE_EN, Path(package_root) / Path(KDE_EN).parent / lang
    if not fr_root.is_dir():
        return
    for fr_cache in sorted(fr_root.rglob("index.cache.bz2")):
        rel = fr_cache.parent.relative_to(fr_root).as_posix()
        en_cache = en_root / rel / "index.cache.bz2"
        if not en_cache.is_file():
            continue
        en, fr = cache_pages(en_cache.read_bytes()), cache_pages(fr_cache.read_bytes())
        for name in sorted(en.keys() & fr.keys()):
            for src, tgt in align_in_order(en[name], fr[name], "gimp", split):
                yield RealPair(source, f"{rel}/{name}", src, tgt)


