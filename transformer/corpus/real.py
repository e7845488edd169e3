"""Real parallel text from Debian packages: extraction, alignment, de-duplication and a split by page.

Three sources, each an HTML manual shipped per language by Debian (``apt-get download``
and ``dpkg -x``; ``scripts/build_real_corpus.py`` does both and records the versions):

- LibreOffice help (``libreoffice-help-en-us`` / ``libreoffice-help-fr``, MPL-2.0): the
  same pages under the same paths, every paragraph carrying the same ``par_id…`` /
  ``hd_id…`` id in both languages, so pairs align exactly by (page, id).
- The Debian Administrator's Handbook (``debian-handbook``, GPL-2+ or CC-BY-SA-3.0):
  en-US / fr-FR pages whose ``<div class="para">`` paragraphs align in order, used only
  on pages where both languages have the same number of paragraphs.
- GNOME's desktop help (``gnome-user-docs``, CC-BY-SA-3.0): Mallard ``.page`` files whose
  ``<p>`` and ``<title>`` elements align in order, same rule.
- The interface strings of four image editors (``inkscape``, ``krita-l10n``, ``darktable``,
  ``digikam-data``; GPL): their French gettext catalogues (``.mo``), one pair per message,
  read by :func:`catalogue_pairs`. Training only: the vocabulary of layers, brushes and
  filters, which neither manual above has.
- The help of GNOME and MATE applications (``HELP_PACKAGES``: eog, gThumb, Shotwell, Evince, Evolution,
  the MATE user guide…; CC-BY-SA-3.0, GFDL or GPL, per package): every application folder under
  ``usr/share/help/C`` with a French twin, Mallard ``.page`` files (<p>, <title>) or DocBook ``.xml`` /
  ``.docbook`` files (<para>, <title>) aligned in order, same rule (:func:`extract_help`).
- The handbooks of KDE applications (``KDE_PACKAGES``: KolourPaint, Okular, KStars, Marble,
  KPhotoAlbum, Konqueror…; GFDL-1.2-or-later or GPL, per package): each handbook ships as one
  ``index.cache.bz2`` per language under ``usr/share/doc/HTML/{en,fr}/<app>``, the HTML that KDE's help
  browser shows, one ``<FILENAME filename=…>`` chunk per page; the ``<p>`` paragraphs of a page present in
  both aligned in order, same rule (:func:`extract_kde`).
- The GIMP manual (``gimp-help-en`` / ``gimp-help-fr``, GFDL-1.2): ``<p>`` paragraphs in
  order under each stable id (a section, a glossary entry), same rule per id
  (:func:`align_by_anchor`). It is the out-of-source test set and is never trained on; no
  training pair's English is one of its sentences.

A paragraph pair whose English and French split into the same number of sentences is
cut into sentence pairs. Inline markup becomes plain text; the variants a page hides
(``<span hidden class="MAC">`` and the like) are dropped, the default one is kept.

The split is by page: a page's pairs all go to one of train / dev / test (a hash of the
page's path decides), so no sentence of a held-out page is trained on. A source
sentence that occurs in the training split is removed from the held-out ones.

No network, no Debian tools: these functions read unpacked folders or HTML strings.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
SKIP = frozenset(("script", "style", "pre"))
LIBREOFFICE_ID = re.compile(r"^(par|hd)_id")
SPLITS = ("train", "dev", "test")

# Where each package unpacks its pages (relative to the dpkg -x folder).
LIBREOFFICE_EN = "usr/share/libreoffice/help/en-US"
LIBREOFFICE_FR = "usr/share/libreoffice/help/fr"
HANDBOOK_EN = "usr/share/doc/debian-handbook/html/en-US"
HANDBOOK_FR = "usr/share/doc/debian-handbook/html/fr-FR"
GIMP_EN = "usr/share/gimp/2.0/help/en"
GIMP_FR = "usr/share/gimp/2.0/help/fr"
GNOME_EN = "usr/share/help/C/gnome-help"
GNOME_FR = "usr/share/help/fr/gnome-help"
HELP_EN = "usr/share/help/C"
HELP_FR = "usr/share/help/fr"
# Debian packages whose applications' help has a French translation (GNOME's Mallard pages, MATE's DocBook);
# gnome-user-docs is its own corpus ("gnome")
HELP_PACKAGES = (
    "accerciser", "aisleriot", "anjuta-common", "baobab", "brasero-common", "cheese-common", "devhelp-common",
    "easytag", "engrampa-common", "eog", "eom-common", "epiphany-browser-data", "evince-common",
    "evolution-common", "file-roller", "five-or-more", "four-in-a-row", "gedit-common", "glade",
    "gnome-boxes", "gnome-calculator", "gnome-chess", "gnome-clocks", "gnome-connections", "gnome-devel-docs",
    "gnome-dictionary", "gnome-klotski", "gnome-logs", "gnome-mahjongg", "gnome-mines", "gnome-music",
    "gnome-nibbles", "gnome-photos", "gnome-robots", "gnome-sudoku", "gnome-system-monitor", "gnome-taquin",
    "gnome-terminal-data", "gnome-tetravex", "goobox", "gthumb-data", "gucharmap", "hamster-time-tracker",
    "hitori", "iagno", "lightsoff", "mate-terminal-common", "mate-user-guide", "mate-utils-common",
    "ocrfeeder", "orca", "pitivi", "pluma-common", "polari", "quadrapassel", "rhythmbox-data", "seahorse",
    "shotwell-common", "simple-scan", "sound-juicer", "swell-foop", "tali", "totem-common", "zenity-common",
)
# Debian packages of KDE applications whose handbook has a French translation (usr/share/doc/HTML/fr/...)
KDE_PACKAGES = (
    "akregator", "ark", "blinken", "bomber", "bovo", "cantor", "cervisia", "dragonplayer", "filelight", "granatier",
    "juk", "k3b-i18n", "kalzium-data", "kamera", "kamoso", "kapman", "kapptemplate", "katomic", "kblackbox",
    "kblocks", "kbounce", "kbreakout", "kbruch", "kcachegrind", "kcalc", "kcharselect", "kde-cli-tools-data",
    "kde-config-cddb", "kde-config-cron", "kdepim-runtime", "kdf", "kdiamond", "keditbookmarks", "kfind", "kfloppy",
    "kfourinline", "kgamma5", "kget", "kgoldrunner", "kgpg", "khotkeys-data", "kigo", "kile-doc", "killbots",
    "kimagemapeditor", "kinfocenter", "kio-audiocd", "kio-extras-data", "kio-gopher", "kio", "kiriki", "kiten",
    "kjumpingcube", "klickety", "klines", "kmag", "kmahjongg", "kmail", "kmenuedit", "kmines", "kmix", "kmousetool",
    "kmouth", "kmplot", "knavalbattle", "knetwalk", "knights", "knotes", "kolf", "kollision", "kolourpaint",
    "konqueror", "konquest", "konversation-data", "kpat", "kphotoalbum", "krdc", "kreversi", "krfb", "kruler",
    "kshisen", "ksirk", "ksnakeduel", "kspaceduel", "ksquares", "kstars-data", "ksudoku", "ksystemlog", "kteatime",
    "ktimer", "ktorrent-data", "ktouch-data", "ktuberling-data", "kturtle", "kubrick", "kwin-data", "lokalize",
    "lskat-data", "marble-data", "okular", "palapeli-data", "partitionmanager", "picmi", "plasma-workspace-data",
    "powerdevil-data", "skanlite", "skrooge-common", "step", "sweeper", "tellico-doc",
)
KDE_EN = "usr/share/doc/HTML/en"
KDE_FR = "usr/share/doc/HTML/fr"
# package -> its French catalogue (the interface strings of image editors)
CATALOGUES = {
    "inkscape": "usr/share/locale/fr/LC_MESSAGES/inkscape.mo",
    "krita-l10n": "usr/share/locale/fr/LC_MESSAGES/krita.mo",
    "darktable": "usr/share/locale/fr/LC_MESSAGES/darktable.mo",
    "digikam-data": "usr/share/locale/fr/LC_MESSAGES/digikam.mo",
}

LICENCES = {
    "libreoffice": "MPL-2.0 (LibreOffice help, The Document Foundation)",
    "handbook": "GPL-2.0-or-later or CC-BY-SA-3.0 (The Debian Administrator's Handbook, R. Hertzog and R. Mas)",
    "gnome": "CC-BY-SA-3.0 (GNOME Desktop Help, the GNOME Documentation Project)",
    "ui": "GPL-2.0-or-later / GPL-3.0-or-later (the interface translations of Inkscape, Krita, darktable and "
    "digiKam, their translation teams)",
    "apps": "CC-BY-SA-3.0, GFDL-1.1-or-later or GPL-2.0-or-later, per package (the help of GNOME and MATE "
    "applications, their authors and French translators; each package's licences in MANIFEST.json)",
    "kde": "GFDL-1.2-or-later, as each KDE handbook's notice says (the handbooks of KDE applications, the KDE "
    "documentation team and French translators; each package's licences in MANIFEST.json)",
    "gimp": "GFDL-1.2 (GNU Image Manipulation Program User Manual, the GIMP Documentation Team)",
}


@dataclass(frozen=True)
class RealPair:
    """One aligned sentence (or short paragraph) pair and where it comes from."""

    source: str  # "libreoffice" | "handbook" | "gnome" | "apps" | "kde" | "ui" | "gimp"
    page: str  # the page's path inside its manual (the unit of the split); a catalogue's file name
    src: str
    tgt: str


def clean(text: str) -> str:
    """Whitespace collapsed, no tabs or newlines (the TSV's separators), stripped."""
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"«“(]?[A-ZÀ-Ý0-9])")


def sentences(text: str) -> list[str]:
    """A paragraph cut after . ! ? followed by a capital (good enough to pair sentences of a paragraph)."""
    return [s for s in _SENTENCE_END.split(text) if s]


def split_paragraph(src: str, tgt: str) -> list[tuple[str, str]]:
    """Sentence pairs when both sides have the same number of sentences, else the paragraph pair."""
    a, b = sentences(src), sentences(tgt)
    return list(zip(a, b)) if len(a) == len(b) else [(src, tgt)]


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


_LETTER = re.compile(r"[^\W\d_]")
_WORD = re.compile(r"[a-zà-ÿ]+")
# function words that tell an untranslated (English) French side from a French one
ENGLISH_WORDS = frozenset("the and of to is are you with for this that it can be in by from your which".split())
FRENCH_WORDS = frozenset(
    "le la les de des du et est sont vous avec pour ce cette il peut être dans sur par un une ou qui que au aux".split()
)


def reads_as_english(text: str) -> bool:
    """Whether text has more English function words than French ones: a French page that was never
    translated (the GIMP manual's French edition keeps its licence and its appendix on writing the manual
    in English, with French quotes: « Strong Redo »)."""
    words = _WORD.findall(text.lower())
    return sum(w in ENGLISH_WORDS for w in words) > sum(w in FRENCH_WORDS for w in words)


def sentence_like(src: str, tgt: str) -> bool:
    """A translated sentence: 4-60 English words, a capital first, a final . ! ? or :, a French side that
    differs from the English, reads as French and is of comparable length."""
    w = src.split()
    if not 4 <= len(w) <= 60 or src == tgt or reads_as_english(tgt):
        return False
    if not (src[0].isupper() and tgt[0].isupper()) or src[-1] not in ".!?:" or tgt[-1] not in ".!?:":
        return False
    if len(_LETTER.findall(src)) < 0.6 * len(src.replace(" ", "")):
        return False
    return 0.6 <= len(tgt) / len(src) <= 2.2


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
    import bz2

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


def read_catalogue(data: bytes, name: str = "catalogue") -> dict[str, str]:
    """{msgid: msgstr} of a gettext .mo file, read from its documented binary layout (either byte order).

    Plural messages keep their first forms; the header (the empty msgid) is left out. Nothing in the
    file is evaluated (gettext's own reader compiles the Plural-Forms expression); any offset or length
    outside the file, or text that is not UTF-8, raises RealCorpusError.
    """
    import struct

    if len(data) < 28:
        raise RealCorpusError(f"{name}: not a gettext catalogue (too short)")
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        raise RealCorpusError(f"{name}: not a gettext catalogue (bad magic number)")
    _, n, originals, translations = struct.unpack(order + "4I", data[4:20])

    def string(table: int, i: int) -> str:
        at = table + 8 * i
        if at + 8 > len(data):
            raise RealCorpusError(f"{name}: string table outside the file")
        length, offset = struct.unpack(order + "2I", data[at : at + 8])
        if offset + length > len(data):
            raise RealCorpusError(f"{name}: string outside the file")
        try:
            return data[offset : offset + length].decode("utf-8").split("\x00")[0]
        except UnicodeDecodeError:
            raise RealCorpusError(f"{name}: a string that is not UTF-8") from None

    if n > len(data) // 16:
        raise RealCorpusError(f"{name}: more messages than the file can hold")
    out = {}
    for i in range(n):
        key = string(originals, i)
        if key:
            out[key] = string(translations, i)
    return out


_FORMAT = re.compile(r"%|\{\w*\}|<[a-zA-Z/]|&\w+;|\\|https?:")
_ACCELERATOR = re.compile(r"(?<![\w&])&(?=\w)|(?<=\w)&(?=\w)|(?<![\w])_(?=\w)")


def catalogue_pairs(data: bytes, page: str, source: str = "ui") -> list[RealPair]:
    """The (English, French) messages of a gettext catalogue (.mo bytes), one pair per message, sorted.

    The message context ("ctx\\x04msgid") is dropped, and so are the menu accelerators (_File, &File).
    Untranslated messages and any with a format directive (%s, {0}), markup, an entity, a backslash
    or a web address are skipped: they are not sentences a model should learn to copy.
    """
    out = []
    for key, value in sorted(read_catalogue(data, page).items()):
        src = key.split("\x04", 1)[-1]
        if not src or not value or _FORMAT.search(src) or _FORMAT.search(value):
            continue
        src, tgt = clean(_ACCELERATOR.sub("", src)), clean(_ACCELERATOR.sub("", value))
        if src and tgt and src != tgt and _LETTER.search(src):
            out.append(RealPair(source, page, src, tgt))
    return out


def page_split(source: str, page: str, dev_share: float = 0.02, test_share: float = 0.04) -> str:
    """train / dev / test for a page, from a hash of its path (stable across machines and runs)."""
    h = int.from_bytes(hashlib.sha1(f"{source}:{page}".encode()).digest()[:8], "big") / 2**64
    return "test" if h < test_share else "dev" if h < test_share + dev_share else "train"


def split_by_page(
    pairs: Iterable[RealPair], dev_share: float = 0.02, test_share: float = 0.04, sentences_only: bool = True
) -> dict[str, list[RealPair]]:
    """De-duplicated pairs by split. Within a split each English text is kept once (its first French);
    a held-out English text that also occurs in training is dropped from the held-out split. With
    sentences_only, held-out splits keep sentence-like pairs only (training keeps every pair)."""
    by_split: dict[str, list[RealPair]] = {s: [] for s in SPLITS}
    seen: dict[str, set[str]] = {s: set() for s in SPLITS}
    for p in pairs:
        s = page_split(p.source, p.page, dev_share, test_share)
        if p.src == p.tgt or not _LETTER.search(p.src):  # untranslated, or no words at all
            continue
        if p.src not in seen[s]:
            seen[s].add(p.src)
            by_split[s].append(p)
    for s in ("dev", "test"):
        keep = [p for p in by_split[s] if p.src not in seen["train"]]
        by_split[s] = [p for p in keep if sentence_like(p.src, p.tgt)] if sentences_only else keep
    return by_split


def heldout_only(pairs: Iterable[RealPair], exclude: set[str]) -> list[RealPair]:
    """An out-of-source test set: sentence-like pairs, each English text once, none that training saw."""
    out, seen = [], set()
    for p in pairs:
        if p.src in seen or p.src in exclude or not sentence_like(p.src, p.tgt):
            continue
        seen.add(p.src)
        out.append(p)
    return out


# ---------------------------------------------------------------- committed files
DATA_DIR = Path(__file__).parent / "data"
HEADER = "source\tpage\tsplit\ten\tfr"
HEADER_ZH = "source\tpage\tsplit\ten\tzh"  # the English → Chinese corpora (data/zh/)
HEADERS = (HEADER, HEADER_ZH)


def write_pairs(path: str | Path, pairs: Iterable[tuple[str, RealPair]], header: str = HEADER) -> int:
    """Write (split, pair) rows as gzip TSV (fixed mtime, so a rebuild gives the same bytes)."""
    n = 0
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write((header + "\n").encode())
        for split, p in pairs:
            gz.write(f"{p.source}\t{p.page}\t{split}\t{clean(p.src)}\t{clean(p.tgt)}\n".encode())
            n += 1
    return n


class RealCorpusError(ValueError):
    """A corpus file that is not the five-column TSV this module writes."""


def read_pairs(path: str | Path, split: str | None = None) -> list[RealPair]:
    """The pairs of a file written by write_pairs (all, or those of one split)."""
    out = []
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            header = fh.readline().rstrip("\n")
            if header not in HEADERS:
                raise RealCorpusError(f"{path}: expected header {HEADER!r}, found {header[:80]!r}")
            for lineno, line in enumerate(fh, start=2):
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 5:
                    raise RealCorpusError(f"{path}, line {lineno}: expected 5 fields, found {len(parts)}")
                source, page, s, en, fr = parts
                if split is None or s == split:
                    out.append(RealPair(source, page, en, fr))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise RealCorpusError(f"cannot read {path}: {exc}") from None
    return out


def real_files() -> dict[str, Path]:
    """The committed corpus files by name: English → French ones by their name (libreoffice), English → Chinese
    ones under zh/ (zh/libreoffice)."""
    files = {p.name.split(".")[0]: p for p in sorted(DATA_DIR.glob("*.tsv.gz"))}
    files.update({"zh/" + p.name.split(".")[0]: p for p in sorted(DATA_DIR.glob("zh/*.tsv.gz"))})
    return files


def load_real(split: str, names: Iterable[str] = ("libreoffice", "handbook")) -> list[tuple[str, str]]:
    """(English, French) pairs of one split of the committed corpora (gimp holds only "test")."""
    files = real_files()
    out = []
    for name in names:
        if name not in files:
            raise RealCorpusError(f"no committed corpus {name!r} in {DATA_DIR} (have {sorted(files)})")
        out.extend((p.src, p.tgt) for p in read_pairs(files[name], split))
    return out
