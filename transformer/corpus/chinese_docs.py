"""English → 简体中文 text from Debian's documentation and guides, Inkscape's tutorials, LibreOffice's interface and
the ITIL manual, KiCad's manuals and graphics programs' interfaces: the sources added after the first corpus
(:mod:`.chinese` holds the Chinese rules they share, the first sources and the split).
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

from .chinese import (
    EDU_MANUAL,
    FAQ,
    GRAPHICS_CATALOGUES,
    HANDBOOK_ZH,
    INSTALL_GUIDE,
    ITIL_MANUAL,
    KICAD_MANUALS,
    MAINT_GUIDE,
    OFFICE_UI,
    RAWTHERAPEE,
    REFERENCE_DIR,
    REFERENCE_PACKAGES,
    TUTORIALS,
    UI_MIN_WORDS,
    align_by_anchor_zh,
    dedup_key,
    extract_catalogues_zh,
    extract_pages_zh,
    interface_pairs_zh,
    length_agrees_zh,
    message_pairs_zh,
    sections_zh,
    split_paragraph_zh,
)
from .everyday import catalogue_messages
from .manuals import extract_pages, paragraphs_by_anchor, paragraphs_by_heading, read_page
from .real import HANDBOOK_EN, RealPair


# ---------------------------------------------------------------- Debian's own documentation
def extract_debian_docs_zh(workdir: str | Path) -> list[RealPair]:
    """The Debian Administrator's Handbook (``debian-handbook``: en-US beside zh-CN, each page aligned in order,
    real's French rule; pages named handbook/…) and Debian Reference (``debian-reference-en`` and ``-zh-cn``: each
    chapter's sections aligned by their ids, as the GIMP manual's; pages named reference/chNN), paragraphs cut
    into Chinese sentences; workdir holds one folder per package."""
    root = Path(workdir)
    hb = root / "debian-handbook"
    out = list(
        extract_pages(
            hb / HANDBOOK_EN, hb / HANDBOOK_ZH, "docs", {".html": "handbook"}, "handbook/", split=split_paragraph_zh
        )
    )
    en_dir, zh_dir = (root / name / REFERENCE_DIR for name in REFERENCE_PACKAGES)
    return out + list(_chapters_zh(en_dir, zh_dir, "docs", "reference/"))


def _chapters_zh(en_dir: Path, zh_dir: Path, source: str, prefix: str) -> Iterator[RealPair]:
    """Each name.en.html of en_dir beside zh_dir's name.zh-cn.html, section by section (sections_zh); pages named
    prefix + name."""
    for en_page in sorted(en_dir.glob("*.en.html")):
        chapter = en_page.name.removesuffix(".en.html")
        zh_page = zh_dir / f"{chapter}.zh-cn.html"
        if zh_page.is_file():
            pairs = align_by_anchor_zh(read_page(en_page), read_page(zh_page))
            yield from (RealPair(source, prefix + chapter, s, t) for s, t in pairs)


def extract_debian_guides_zh(workdir: str | Path) -> list[RealPair]:
    """Debian's guides with a zh_CN twin, each page's sections aligned by their ids (sections_zh): the Installation
    Guide (one page per file; pages named install/…), the New Maintainers' Guide (maint/chapter) and the Debian FAQ
    (faq/chapter), and the Debian Edu manual, one page per language, so each of its sections is a page
    (edu/section id); workdir holds one folder per package."""
    root = Path(workdir)
    package, folder, en, zh = INSTALL_GUIDE
    pages = extract_pages_zh(root / package / folder / en, root / package / folder / zh, "guides")
    out = [dataclasses.replace(p, page="install/" + p.page.removesuffix(".html")) for p in pages]
    for prefix, ((en_pkg, en_folder), (zh_pkg, zh_folder)) in (("maint/", MAINT_GUIDE), ("faq/", FAQ)):
        out.extend(_chapters_zh(root / en_pkg / en_folder, root / zh_pkg / zh_folder, "guides", prefix))
    (en_pkg, en_file), (zh_pkg, zh_file) = EDU_MANUAL
    if (root / en_pkg / en_file).is_file() and (root / zh_pkg / zh_file).is_file():
        sections = sections_zh(read_page(root / en_pkg / en_file), read_page(root / zh_pkg / zh_file))
        out.extend(RealPair("guides", f"edu/{anchor}", s, t) for anchor, pairs in sections.items() for s, t in pairs)
    return out


# ---------------------------------------------------------------- Inkscape's tutorials
_SVG_TEXT = ("{http://www.w3.org/2000/svg}text", "{http://www.w3.org/2000/svg}flowPara")


def svg_texts(svg: str) -> list[str]:
    """The texts of an SVG document in document order: each <text> (its <tspan> lines joined by a space) or
    <flowPara>, whitespace collapsed, empty ones left out."""
    root = ElementTree.fromstring(svg)
    texts = (" ".join(" ".join(el.itertext()).split()) for el in root.iter() if el.tag in _SVG_TEXT)
    return [t for t in texts if t]


def align_tutorial_zh(en_svg: str, zh_svg: str) -> list[tuple[str, str]]:
    """Pairs of one Inkscape tutorial: its texts in order, English beside Chinese, cut into sentences
    (split_paragraph_zh). A tutorial ends with its authors and the year of its layout; a translation adds its
    translators' line between them, so the texts before the authors are paired only when both have as many."""
    en, zh = svg_texts(en_svg), svg_texts(zh_svg)
    if len(en) < 2 or len(zh) != len(en) + 1:
        return []
    return [p for x, y in zip(en[:-2], zh[: len(en) - 2]) for p in split_paragraph_zh(x, y)]


def extract_tutorials_zh(package_root: str | Path) -> list[RealPair]:
    """Inkscape's tutorials (``inkscape-tutorials``: tutorial-NAME.svg beside tutorial-NAME.zh_CN.svg), each
    aligned by align_tutorial_zh; pages named inkscape/NAME, sorted."""
    folder = Path(package_root) / TUTORIALS[1]
    out = []
    for en_page in sorted(folder.glob("tutorial-*.svg")):
        name = en_page.name.removesuffix(".svg")
        zh_page = folder / f"{name}.zh_CN.svg"
        if "." in name or not zh_page.is_file():
            continue
        pairs = align_tutorial_zh(en_page.read_text(encoding="utf-8"), zh_page.read_text(encoding="utf-8"))
        out.extend(RealPair("tutorials", f"inkscape/{name.removeprefix('tutorial-')}", s, t) for s, t in pairs)
    return out


# ---------------------------------------------------------------- LibreOffice's interface, the ITIL manual
# LibreOffice's older accelerator mark: "~Location" in English, "位置(~L)" or "~Mozilla" in Chinese ("(~)" is text)
_TILDE = re.compile(r"~(?=\w)")
_ZH_TILDE = re.compile(r"\(~\w\)")


def extract_office_ui_zh(package_root: str | Path, min_words: int = UI_MIN_WORDS) -> list[RealPair]:
    """LibreOffice's own interface (``libreoffice-l10n-zh-cn``: one zh_CN catalogue per module, its msgids the
    English), message by message as the other interface catalogues (interface_pairs_zh, at least min_words English
    words), its "~" accelerators removed too; pages named libreoffice/MODULE.mo, sorted."""
    out = []

    def pairs(src: str, tgt: str) -> list[tuple[str, str]]:
        return interface_pairs_zh(_TILDE.sub("", src), _TILDE.sub("", _ZH_TILDE.sub("", tgt)), min_words)

    for path in sorted((Path(package_root) / OFFICE_UI[1]).glob("*.mo")):
        out.extend(catalogue_messages(path.read_bytes(), f"libreoffice/{path.name}", "office_ui", pairs))
    return out


# a translation's own heading before the text (its table of contents' title), absent from the English
_EXTRA_HEADING_ZH = 10


def align_in_order_zh(en: list[str], zh: list[str]) -> list[tuple[str, str]]:
    """Paragraphs paired in order, cut into sentences (split_paragraph_zh), when the Chinese has as many as the
    English after dropping at most two short leading paragraphs the English lacks (a translation's "目录"); else
    nothing: a page whose paragraphs do not correspond is never guessed at."""
    extra = len(zh) - len(en)
    if not 0 <= extra <= 2 or any(len(dedup_key(x)) > _EXTRA_HEADING_ZH for x in zh[:extra]):
        return []
    return [p for x, y in zip(en, zh[extra:]) for p in split_paragraph_zh(x, y)]


def extract_itil_zh(workdir: str | Path) -> list[RealPair]:
    """The Debian Edu legacy ITIL manual (``debian-edu-doc-legacy-en`` / ``-zh-cn``), one page per language whose
    section ids are generated (``idm…``, different in each language), so its paragraphs are paired in order
    (align_in_order_zh): the text, then the footnotes; page "itil"; workdir holds one folder per package."""
    (en_pkg, en_file), (zh_pkg, zh_file) = ITIL_MANUAL
    root = Path(workdir)
    if not (root / en_pkg / en_file).is_file() or not (root / zh_pkg / zh_file).is_file():
        return []
    en, zh = (
        [x for xs in paragraphs_by_anchor(read_page(f)).values() for x in xs]
        for f in (root / en_pkg / en_file, root / zh_pkg / zh_file)
    )
    return [RealPair("itil", "itil", s, t) for s, t in align_in_order_zh(en, zh)]


# ---------------------------------------------------------------- KiCad's manuals
def align_by_heading_zh(en_html: str, zh_html: str) -> list[tuple[str, str]]:
    """Pairs of one KiCad manual page: the k-th section's paragraphs in English beside the k-th section's in Chinese,
    in order, where both pages have as many headings and the section as many paragraphs (sections that differ give
    nothing), cut into sentences (split_paragraph_zh); a pair whose lengths disagree (length_agrees_zh) is dropped."""
    a, b = paragraphs_by_heading(en_html), paragraphs_by_heading(zh_html)
    if len(a) != len(b):
        return []
    pairs = [p for xs, ys in zip(a, b) if len(xs) == len(ys) for x, y in zip(xs, ys) for p in split_paragraph_zh(x, y)]
    return [(s, t) for s, t in pairs if length_agrees_zh(s, t)]


def extract_kicad_zh(workdir: str | Path) -> list[RealPair]:
    """KiCad's manuals (``kicad-doc-en`` / ``kicad-doc-zh``), each page beside its Chinese twin (align_by_heading_zh);
    pages named kicad/NAME, sorted; workdir holds one folder per package."""
    (en_pkg, en_dir), (zh_pkg, zh_dir) = KICAD_MANUALS
    en_root, zh_root = Path(workdir) / en_pkg / en_dir, Path(workdir) / zh_pkg / zh_dir
    out = []
    for en_page in sorted(en_root.glob("*.html")) if en_root.is_dir() else ():
        zh_page = zh_root / en_page.name
        if zh_page.is_file():
            pairs = align_by_heading_zh(read_page(en_page), read_page(zh_page))
            out.extend(RealPair("kicad", f"kicad/{en_page.stem}", s, t) for s, t in pairs)
    return out


_RT_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")


def read_rawtherapee_language(text: str) -> dict[str, str]:
    """A RawTherapee language file: KEY;text lines; "#" lines are comments and a translation file marks each key
    it has not translated with "!" (left out here); "\\n" is a line break in the text (its lines are joined by a
    space), <b>…</b> its markup and &amp; its entities (both become plain text)."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(";")
        if sep and key and not key.startswith(("#", "!")) and key.strip() == key:
            out[key] = " ".join(html.unescape(_RT_TAG.sub("", value.replace("\\n", " "))).split())
    return out


def extract_rawtherapee_zh(package_root: str | Path, min_words: int = UI_MIN_WORDS) -> list[RealPair]:
    """RawTherapee's interface (``rawtherapee-data``): each key of its "Chinese (Simplified)" language file beside
    the same key of "default" (the English), by message_pairs_zh's rules (a text with "&" left out, as markup),
    at least min_words English words (it has no menu accelerators); the page is rawtherapee/KEY's first word (the
    tool or panel: TP, PREFERENCES…). The HISTORY_ keys are left out: the edit history's abbreviated labels ("W -
    Final - Contrast balance"), which the translation spells out."""
    _, folder, en_name, zh_name = RAWTHERAPEE
    root = Path(package_root) / folder
    if not (root / en_name).is_file() or not (root / zh_name).is_file():
        return []
    en = read_rawtherapee_language((root / en_name).read_text(encoding="utf-8", errors="replace"))
    zh = read_rawtherapee_language((root / zh_name).read_text(encoding="utf-8", errors="replace"))
    return [
        RealPair("graphics", f"rawtherapee/{key.split('_')[0]}", s, t)
        for key in sorted(en.keys() & zh.keys())
        if not key.startswith("HISTORY_")
        for s, t in message_pairs_zh(en[key], zh[key])
        if len(s.split()) >= min_words
    ]


def extract_graphics_zh(workdir: str | Path) -> list[RealPair]:
    """Graphics programs other than GIMP: the zh_CN catalogues of GRAPHICS_CATALOGUES (extract_catalogues_zh,
    pages package/catalogue.mo) and RawTherapee's language files (extract_rawtherapee_zh); workdir holds one folder
    per package."""
    root = Path(workdir)
    out = [p for name in GRAPHICS_CATALOGUES for p in extract_catalogues_zh(root / name, name, source="graphics")]
    return out + extract_rawtherapee_zh(root / RAWTHERAPEE[0])
