"""English → 简体中文 parallel text from Debian packages: the Chinese forms of alignment, de-duplication,
the "reads as English" filter and the split by page.

Chinese is written without spaces, so the French rules (:mod:`transformer.corpus.real`) do not carry over:

- sentences end at 。！？ (or a full-width ；), not at ". " before a capital (:func:`zh_sentences`);
- a paragraph pair is cut into sentence pairs when the English and the Chinese have as many sentences
  (:func:`split_paragraph_zh`);
- a target "reads as English" (untranslated) when under a third of its letters are CJK characters
  (:func:`cjk_share`, :func:`reads_as_chinese`);
- the whitespace inside Chinese text is an artefact of line breaks in the source files: a space between two
  CJK characters is removed (:func:`normalise_zh`), and de-duplication compares texts without any
  whitespace (:func:`dedup_key`);
- a held-out pair is sentence-like by Chinese measures (:func:`sentence_like_zh`): Chinese takes about a third
  of the characters English does.

Sources (``scripts/build_zh_corpus.py`` downloads and unpacks them and records the versions):

- LibreOffice help (``libreoffice-help-en-us`` / ``libreoffice-help-zh-cn``, MPL-2.0): paragraphs aligned
  by their ``par_id`` / ``hd_id`` (:func:`align_by_id_zh`), split by page;
- Wesnoth 1.16 (core data and every campaign; GPL-2+): the ``zh_CN`` gettext catalogues, dialogue and
  narration, split by whole campaign (dev: Sceptre of Fire; test: South Guard + Hammer of Thursagan), as
  the French everyday corpus;
- the GIMP manual (``gimp-help-en`` / ``gimp-help-zh-cn``, GFDL-1.2), aligned section by section: the
  out-of-source test, never trained on.

Added after the ``en-zh`` checkpoint (preset ``en-zh-more``), with the French extractors given ``lang="zh_CN"`` and
:func:`split_paragraph_zh`: GNOME's desktop help (:func:`extract_gnome_zh`) and the GNOME / MATE applications'
help (:func:`extract_help_zh`), both split by page; the zh_CN interface catalogues of those applications and of
four image editors (:func:`extract_catalogues_zh`, :func:`interface_pairs_zh`: accelerators removed, messages of
3+ English words), training only. The KDE handbooks (:func:`extract_kde_zh`) were measured and left out (71 pairs).

Added later: household text (:func:`extract_objects_zh`), Debian's documentation (:func:`extract_debian_docs_zh`) and
guides (:func:`extract_debian_guides_zh`), and Inkscape's tutorials (:func:`extract_tutorials_zh`: each SVG's texts in
order beside its zh_CN twin's; training only); then LibreOffice's own interface (:func:`extract_office_ui_zh`) and the
Debian Edu legacy ITIL manual (:func:`extract_itil_zh`: paragraphs in order, :func:`align_in_order_zh`), training only.

No network, no Debian tools: these functions read unpacked folders or strings.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from xml.etree import ElementTree

from .everyday import (
    OBJECT_CATALOGUES,
    STAMPS_PACKAGE,
    catalogue_messages,
    extract_game,
    extract_stamps,
    extract_wesnoth,
)
from .manuals import (
    extract_help,
    extract_kde,
    extract_pages,
    paragraphs_by_anchor,
    paragraphs_by_heading,
    paragraphs_by_id,
    read_page,
)
from .real import (
    _ACCELERATOR,
    _LETTER,
    GNOME_EN,
    HANDBOOK_EN,
    SPLITS,
    RealPair,
    clean,
    page_split,
    sentences,
)

LIBREOFFICE_ZH = "usr/share/libreoffice/help/zh-CN"
GIMP_ZH = "usr/share/gimp/2.0/help/zh_CN"
HANDBOOK_ZH = "usr/share/doc/debian-handbook/html/zh-CN"
# Debian Reference: one page per chapter, every language in one folder (ch01.en.html beside ch01.zh-cn.html)
REFERENCE_DIR = "usr/share/debian-reference"
REFERENCE_PACKAGES = ("debian-reference-en", "debian-reference-zh-cn")
# Debian's guides with a zh_CN twin (zh/guides): folder per language, or one folder with name.en.html beside
# name.zh-cn.html (the Reference's layout), or one page per language (the Edu manual)
INSTALL_GUIDE = ("installation-guide-amd64", "usr/share/doc/installation-guide-amd64", "en", "zh_CN")
MAINT_GUIDE = (
    ("maint-guide", "usr/share/doc/maint-guide/html"),
    ("maint-guide-zh-cn", "usr/share/doc/maint-guide-zh-cn/html"),
)
FAQ = (("debian-faq", "usr/share/doc/debian/FAQ"), ("debian-faq-zh-cn", "usr/share/doc/debian/FAQ/zh-cn"))
EDU_MANUAL = (
    ("debian-edu-doc-en", "usr/share/doc/debian-edu-doc-en/debian-edu-bookworm-manual.html"),
    ("debian-edu-doc-zh-cn", "usr/share/doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.html"),
)
TUTORIALS = ("inkscape-tutorials", "usr/share/inkscape/tutorials")
# LibreOffice's own interface in zh_CN (the msgids are its English): zh/office_ui
OFFICE_UI = ("libreoffice-l10n-zh-cn", "usr/lib/libreoffice/program/resource/zh_CN/LC_MESSAGES")
# The Debian Edu legacy ITIL manual, one page per language with generated section ids: zh/itil
ITIL_MANUAL = (
    ("debian-edu-doc-legacy-en", "usr/share/doc/debian-edu-doc-legacy-en/debian-edu-itil-manual.html"),
    ("debian-edu-doc-legacy-zh-cn", "usr/share/doc/debian-edu-doc-legacy-zh-cn/debian-edu-itil-manual.html"),
)
ITIL_PACKAGES = tuple(name for name, _ in ITIL_MANUAL)
# KiCad 6's manuals (Asciidoctor HTML, one page per program), English beside their Chinese translation: zh/kicad
KICAD_MANUALS = (
    ("kicad-doc-en", "usr/share/doc/kicad/help/en"),
    ("kicad-doc-zh", "usr/share/doc/kicad/help/zh"),
)
KICAD_PACKAGES = tuple(name for name, _ in KICAD_MANUALS)
# Graphics programs other than GIMP with a zh_CN interface: their zh_CN catalogues, and RawTherapee's language
# files (KEY;text lines, "default" the English): zh/graphics
GRAPHICS_CATALOGUES = (
    "blender-data",
    "dia-common",
    "drawing",
    "gwenview",
    "hugin-data",
    "kolourpaint",
    "libmypaint-common",
    "synfigstudio",
)
RAWTHERAPEE = ("rawtherapee-data", "usr/share/rawtherapee/languages", "default", "Chinese (Simplified)")
GRAPHICS_PACKAGES = (*GRAPHICS_CATALOGUES, RAWTHERAPEE[0])
GUIDES_PACKAGES = (INSTALL_GUIDE[0], *(name for pair in (MAINT_GUIDE, FAQ, EDU_MANUAL) for name, _ in pair))
WESNOTH_LOCALE_ZH = "usr/share/games/wesnoth/1.16/locale/zh_CN/LC_MESSAGES"

GNOME_ZH = "usr/share/help/zh_CN/gnome-help"
HELP_LANG_ZH = "zh_CN"  # usr/share/help/zh_CN, usr/share/doc/HTML/zh_CN
CATALOGUES_ZH = "usr/share/locale/zh_CN/LC_MESSAGES"
UI_MIN_WORDS = 3  # an interface message of fewer English words is a bare label ("Cyan", "Stop loading"): dropped

LICENCES = {
    "libreoffice": "MPL-2.0 (LibreOffice help, The Document Foundation and its Chinese translators)",
    "everyday": "GPL-2.0-or-later (Battle for Wesnoth 1.16, its campaigns' authors and the Simplified Chinese "
    "translation team)",
    "gimp": "GFDL-1.2 (GNU Image Manipulation Program User Manual, the GIMP Documentation Team)",
    "gnome": "CC-BY-SA-3.0 (GNOME Desktop Help, the GNOME Documentation Project and its Chinese translators)",
    "apps": "CC-BY-SA-3.0, GFDL-1.1-or-later or GPL-2.0-or-later, per package (the help of GNOME and MATE "
    "applications, their authors and Chinese translators; each package's licences in MANIFEST.json)",
    "ui": "GPL-2.0-or-later / GPL-3.0-or-later / LGPL, per package (the zh_CN interface catalogues of GNOME and "
    "MATE applications, Inkscape, Krita, darktable and digiKam, their translation teams; each package's licences "
    "in MANIFEST.json)",
    "docs": "GPL-2.0-or-later or CC-BY-SA-3.0 (The Debian Administrator's Handbook, R. Hertzog and R. Mas, and its "
    "Chinese translators); GPL-2.0-or-later (Debian Reference, Osamu Aoki, and its Chinese translators)",
    "guides": "GPL-2.0 (Debian GNU/Linux Installation Guide, the Debian Installer team); GPL-2.0-or-later, MIT "
    "(Debian New Maintainers' Guide, Josip Rodin, Osamu Aoki); the Debian FAQ's permission notice (verbatim and "
    "modified copies under an identical notice, LICENCES.md; Software in the Public Interest); GPL-2.0-or-later "
    "(Debian Edu manual, its authors); each with its Chinese translators",
    "tutorials": "GPL (Inkscape's tutorials, their authors and Chinese translators; the package's copyright file: "
    '"GNU GPL; some portions public domain")',
    "office_ui": "MPL-2.0 (LibreOffice's interface, The Document Foundation and its Chinese translators)",
    "itil": "GPL-3.0-or-later (Debian Edu / Skolelinux ITIL Manual, K. Yrvin, A. Johansen and others, and its Chinese "
    "translators)",
    "kicad": "GPL-3.0-or-later or CC-BY-3.0-or-later (KiCad's manuals, their contributors and Chinese translators)",
    "graphics": "each program's licence, with its authors and Chinese translators (MANIFEST.json, licences_by_package):"
    " Blender, Dia, Gwenview, Hugin, Synfig Studio GPL-2.0-or-later; Drawing, RawTherapee GPL-3.0-or-later; "
    "KolourPaint BSD-2-Clause; libmypaint ISC",
    "objects": "CC-BY-SA-3.0 (Cataclysm: Dark Days Ahead, its contributors and Chinese translators); GPL-2.0-or-later "
    "(gbrainy, its authors and Chinese translators); GPL-2.0-or-later (Tux Paint's stamps, their authors and "
    "translators)",
}

# CJK Unified Ideographs (with extension A) and the compatibility block: what "a Chinese character" means here
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ZH_SENTENCE_END = re.compile(r"(?<=[。！？；])(?![」』”’）)])|(?<=[。！？；][」』”’）)])")
_SPACE_BETWEEN_CJK = re.compile(
    r"(?<=[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef])\s+"
    r"(?=[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef])"
)
_ZH_FINAL = "。！？：.!?:"


def cjk_share(text: str) -> float:
    """The share of CJK characters among the letters of text (0 when it has none)."""
    letters = _LETTER.findall(text)
    return sum(bool(_CJK.match(c)) for c in letters) / len(letters) if letters else 0.0


def reads_as_chinese(text: str, minimum: float = 1 / 3) -> bool:
    """Whether text is Chinese rather than untranslated English: at least `minimum` of its letters are CJK
    characters (a Chinese sentence keeps English names and menu entries: "选择 文件 ▸ 打开" is still Chinese)."""
    return cjk_share(text) >= minimum


def normalise_zh(text: str) -> str:
    """Whitespace collapsed, and none left between two CJK characters or full-width punctuation marks."""
    return _SPACE_BETWEEN_CJK.sub("", clean(text))


def dedup_key(text: str) -> str:
    """What two texts that differ only in whitespace share (Chinese needs none)."""
    return re.sub(r"\s+", "", text)


def zh_sentences(text: str) -> list[str]:
    """A Chinese paragraph cut after 。！？ or ；(a closing quote or bracket stays with its sentence)."""
    return [s.strip() for s in _ZH_SENTENCE_END.split(text) if s.strip()]


def split_paragraph_zh(src: str, tgt: str) -> list[tuple[str, str]]:
    """Sentence pairs when the English and the Chinese have as many sentences, else the paragraph pair."""
    src, tgt = clean(src), normalise_zh(tgt)
    a, b = sentences(src), zh_sentences(tgt)
    return list(zip(a, b)) if len(a) == len(b) else [(src, tgt)]


def align_by_id_zh(en_html: str, zh_html: str) -> list[tuple[str, str]]:
    """Pairs of one LibreOffice page: the k-th occurrence of an id in English with the k-th in Chinese."""
    zh: dict[tuple[str, int], str] = {}
    seen: dict[str, int] = {}
    for key, text in paragraphs_by_id(zh_html):
        seen[key] = seen.get(key, 0) + 1
        zh[(key, seen[key])] = text
    out, seen = [], {}
    for key, text in paragraphs_by_id(en_html):
        seen[key] = seen.get(key, 0) + 1
        other = zh.get((key, seen[key]))
        if other:
            out.extend(split_paragraph_zh(text, other))
    return out


def sections_zh(en_html: str, zh_html: str) -> dict[str, list[tuple[str, str]]]:
    """{stable id: its pairs} of one DocBook page: under each stable id in both languages, the paragraphs in order
    where both have as many (real.align_by_anchor's rule, Chinese sentences); sections without a pair left out."""
    a, b = paragraphs_by_anchor(en_html), paragraphs_by_anchor(zh_html)
    out = {}
    for anchor, xs in a.items():
        ys = b.get(anchor)
        if ys and len(xs) == len(ys):
            pairs = [p for x, y in zip(xs, ys) for p in split_paragraph_zh(x, y)]
            if pairs:
                out[anchor] = pairs
    return out


def align_by_anchor_zh(en_html: str, zh_html: str) -> list[tuple[str, str]]:
    """Pairs of one GIMP page, section by section (sections_zh), in page order."""
    return [p for pairs in sections_zh(en_html, zh_html).values() for p in pairs]


def extract_pages_zh(en_root: str | Path, zh_root: str | Path, source: str) -> Iterator[RealPair]:
    """Every aligned pair of the pages present under both roots, sorted by path: LibreOffice's .xhp-rendered
    .html pages by id ("libreoffice"), the GIMP manual's by section ("gimp")."""
    en_root, zh_root = Path(en_root), Path(zh_root)
    align = align_by_id_zh if source == "libreoffice" else align_by_anchor_zh
    for en_page in sorted(p for p in en_root.rglob("*.html") if p.is_file()):
        rel = en_page.relative_to(en_root).as_posix()
        zh_page = zh_root / rel
        if not zh_page.is_file():
            continue
        en, zh = read_page(en_page), read_page(zh_page)
        for src, tgt in align(en, zh):
            yield RealPair(source, rel, src, tgt)


# ---------------------------------------------------------------- gettext catalogues (Wesnoth)
# A format directive, markup or a placeholder (everyday.UNSAFE's rule)
_UNSAFE = re.compile(r"%|[{}<>$\[\]\\@]|&\w*;?|https?:|www\.|\|")
_CONTEXT = re.compile(r"^[\w .-]{1,40}\^")
_TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u2026": "...", "\u202f": " "})


def message_pairs_zh(src: str, tgt: str, max_words: int = 60) -> list[tuple[str, str]]:
    """The (English, Chinese) pairs one translated message gives: none when either side has a format directive,
    markup or a placeholder, or the Chinese does not read as Chinese; otherwise its lines paired when both sides
    have as many, each cut into sentences when both have as many. Pairs longer than max_words English words,
    without a letter, or with a Chinese side of implausible length (under 0.1 or over 1.5 characters per English
    character) are dropped."""
    src = _CONTEXT.sub("", src.split("\x04", 1)[-1])
    if not src.strip() or not tgt.strip() or _UNSAFE.search(src) or _UNSAFE.search(tgt):
        return []
    a = [clean(x.translate(_TYPOGRAPHY)) for x in src.splitlines() if x.strip()]
    b = [normalise_zh(x) for x in tgt.splitlines() if x.strip()]
    paragraphs = list(zip(a, b)) if len(a) == len(b) else [(" ".join(a), "".join(b))]
    out = []
    for p_src, p_tgt in paragraphs:
        for s, t in split_paragraph_zh(p_src, p_tgt):
            if not s or not t or not _LETTER.search(s) or len(s.split()) > max_words:
                continue
            if not reads_as_chinese(t) or not 0.1 <= len(t) / len(s) <= 1.5:
                continue
            out.append((s, t))
    return out


# a menu accelerator as zh_CN catalogues write it: "文件(_F)", "打开(&O)", full-width brackets too
_ZH_ACCELERATOR = re.compile(r"\s*[(（][_&][A-Za-z0-9]?[)）]")


def interface_pairs_zh(src: str, tgt: str, min_words: int = 1) -> list[tuple[str, str]]:
    """The pairs one message of a program's interface catalogue gives: message_pairs_zh's rules once the menu
    accelerators are gone (_File / &File in English, "文件(_F)" / "文件(&F)" in Chinese, real._ACCELERATOR's and
    _ZH_ACCELERATOR's forms), keeping pairs of at least min_words English words (a sentence, not a bare label)."""
    src = _ACCELERATOR.sub("", src.split("\x04", 1)[-1])
    tgt = _ACCELERATOR.sub("", _ZH_ACCELERATOR.sub("", tgt))
    return [(s, t) for s, t in message_pairs_zh(src, tgt) if len(s.split()) >= min_words]


def extract_wesnoth_zh(package_root: str | Path) -> list[RealPair]:
    """The pairs of each zh_CN catalogue a Wesnoth package ships; the page is the catalogue's name."""
    return extract_wesnoth(package_root, WESNOTH_LOCALE_ZH, message_pairs_zh)


# ---------------------------------------------------------------- GNOME / MATE help, interface catalogues
def extract_gnome_zh(package_root: str | Path) -> list[RealPair]:
    """The GNOME desktop help (gnome-user-docs): C beside zh_CN Mallard pages aligned in order (real's rule),
    paragraphs cut into Chinese sentences."""
    root = Path(package_root)
    return list(extract_pages(root / GNOME_EN, root / GNOME_ZH, "gnome", split=split_paragraph_zh))


def extract_help_zh(package_root: str | Path) -> list[RealPair]:
    """The help of one package's GNOME / MATE applications with a zh_CN twin (real.extract_help's rule)."""
    return list(extract_help(package_root, "apps", HELP_LANG_ZH, split_paragraph_zh))


def extract_kde_zh(package_root: str | Path) -> list[RealPair]:
    """The KDE handbooks of one package with a zh_CN twin (real.extract_kde's rule). Measured, not shipped:
    Debian 12's KDE packages hold 8 zh_CN handbooks giving 71 pairs (docs/corpus.md)."""
    return list(extract_kde(package_root, "kde", HELP_LANG_ZH, split_paragraph_zh))


def extract_catalogues_zh(
    package_root: str | Path, package: str, min_words: int = UI_MIN_WORDS, source: str = "ui"
) -> list[RealPair]:
    """Every zh_CN gettext catalogue (.mo) a package ships, message by message (interface_pairs_zh, at least
    min_words English words); the page is package/catalogue.mo, sorted by catalogue name; the pairs' source is
    source (the corpus they go to)."""
    out = []
    for path in sorted((Path(package_root) / CATALOGUES_ZH).glob("*.mo")):
        pairs = lambda s, t: interface_pairs_zh(s, t, min_words)  # noqa: E731
        out.extend(catalogue_messages(path.read_bytes(), f"{package}/{path.name}", source, pairs))
    return out


def extract_objects_zh(workdir: str | Path) -> list[RealPair]:
    """The zh_CN twins of the French objects corpus (everyday.OBJECT_CATALOGUES' zh_CN catalogues: Cataclysm: Dark
    Days Ahead, gbrainy; Tux Paint's stamp descriptions), message_pairs_zh's rules; workdir holds one folder per
    package."""
    root = Path(workdir)
    out = [p for name in OBJECT_CATALOGUES for p in extract_game(root / name, name, "zh_CN", message_pairs_zh)]
    return out + extract_stamps(root / STAMPS_PACKAGE, "zh_CN", message_pairs_zh)


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


# ---------------------------------------------------------------- filters and the split
def sentence_like_zh(src: str, tgt: str) -> bool:
    """A translated sentence: 4-60 English words, a capital first and a final . ! ? or :, a Chinese side that
    reads as Chinese, ends as a sentence (。！？：or ASCII . ! ? :) and has 0.15-0.9 characters per English
    character (whitespace not counted)."""
    w = src.split()
    if not 4 <= len(w) <= 60 or not reads_as_chinese(tgt):
        return False
    if not src[0].isupper() or src[-1] not in ".!?:" or tgt[-1] not in _ZH_FINAL:
        return False
    if len(_LETTER.findall(src)) < 0.6 * len(src.replace(" ", "")):
        return False
    return length_agrees_zh(src, tgt)


def length_agrees_zh(src: str, tgt: str) -> bool:
    """0.15-0.9 Chinese characters per English character, whitespace not counted: what a translation of the same
    text has (a Chinese side that also translates the next paragraph has more)."""
    return 0.15 <= len(dedup_key(tgt)) / max(1, len(dedup_key(src))) <= 0.9


def keep_pair(p: RealPair) -> bool:
    """A pair worth training on: English with a letter, Chinese that reads as Chinese."""
    return bool(_LETTER.search(p.src)) and reads_as_chinese(p.tgt)


def split_by_page_zh(
    pairs: Iterable[RealPair],
    dev_share: float = 0.02,
    test_share: float = 0.04,
    split_of=None,
) -> dict[str, list[RealPair]]:
    """De-duplicated pairs by split (by page: split_of(pair), default a hash of its page, real.page_split).
    Within a split each English text is kept once (its first Chinese), compared without whitespace; pairs whose
    Chinese does not read as Chinese are dropped; a held-out English text that also occurs in training is dropped
    from the held-out split, and held-out splits keep sentence-like pairs only."""
    split_of = split_of or (lambda p: page_split(p.source, p.page, dev_share, test_share))
    by_split: dict[str, list[RealPair]] = {s: [] for s in SPLITS}
    seen: dict[str, set[str]] = {s: set() for s in SPLITS}
    for p in pairs:
        if not keep_pair(p):
            continue
        s, key = split_of(p), dedup_key(p.src)
        if key not in seen[s]:
            seen[s].add(key)
            by_split[s].append(p)
    for s in ("dev", "test"):
        keep = [p for p in by_split[s] if dedup_key(p.src) not in seen["train"]]
        by_split[s] = [p for p in keep if sentence_like_zh(p.src, p.tgt)]
    return by_split


def heldout_only_zh(pairs: Iterable[RealPair], exclude: set[str]) -> list[RealPair]:
    """An out-of-source test set: sentence-like pairs, each English text once, none whose English training saw
    (compared without whitespace)."""
    out, seen = [], {dedup_key(x) for x in exclude}
    for p in pairs:
        key = dedup_key(p.src)
        if key in seen or not sentence_like_zh(p.src, p.tgt):
            continue
        seen.add(key)
        out.append(p)
    return out
