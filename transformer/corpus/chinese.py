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

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

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
    paragraphs_by_id,
    read_page,
)
from .real import (
    _ACCELERATOR,
    _LETTER,
    GNOME_EN,
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
