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

The pages' HTML is read and aligned by :mod:`.manuals`; this module holds the pairs, the sentence rules, the
catalogues, the split and the committed files. No network, no Debian tools.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"«“(]?[A-ZÀ-Ý0-9])")


def sentences(text: str) -> list[str]:
    """A paragraph cut after . ! ? followed by a capital (good enough to pair sentences of a paragraph)."""
    return [s for s in _SENTENCE_END.split(text) if s]


def split_paragraph(src: str, tgt: str) -> list[tuple[str, str]]:
    """Sentence pairs when both sides have the same number of sentences, else the paragraph pair."""
    a, b = sentences(src), sentences(tgt)
    return list(zip(a, b)) if len(a) == len(b) else [(src, tgt)]


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


def read_catalogue(data: bytes, name: str = "catalogue") -> dict[str, str]:
    """{msgid: msgstr} of a gettext .mo file, read from its documented binary layout (either byte order).

    Plural messages keep their first forms; the header (the empty msgid) is left out. Nothing in the
    file is evaluated (gettext's own reader compiles the Plural-Forms expression); any offset or length
    outside the file, or text that is not UTF-8, raises RealCorpusError.
    """
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
