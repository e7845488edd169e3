"""Everyday English → French text from Debian packages: game dialogue, children's instructions, a dictionary.

Three sources, each read from a folder that ``dpkg -x`` unpacked (``scripts/build_everyday_corpus.py``
downloads and unpacks them, and records the versions):

- **Wesnoth** (``wesnoth-1.16-data`` and the campaign packages ``wesnoth-1.16-httt``, ``-trow``…; GPL-2+):
  the French gettext catalogues (``.mo``) of the game and of each campaign hold its dialogue and
  narration, whole sentences in an everyday register. One catalogue is one unit of the split:
  whole campaigns are held out (``HELD_OUT``), never single sentences.
- **GCompris** (``gcompris-qt-data``; GPL-3+): its French Qt catalogue
  (``translations/gcompris_fr.qm``, read by :func:`read_qm`) holds short instructions written for
  children. A message's context (one activity's file) is its unit of the split (a hash decides).
- **FreeDict** (``dict-freedict-eng-fra``; GPL-2+): an English-French dictionary in dictd format,
  read by :func:`read_dictd`; :func:`word_pairs` keeps one French word per English headword.

More games and programs, training only but for two Widelands scenarios (``CATALOGUE_PACKAGES``, read by
:func:`extract_game`; Tux Paint's stamps, Hedgewars' Lua locale table and FreeCol's properties files by their own
readers), feed ``games.tsv.gz``, ``objects.tsv.gz``, ``dialogue.tsv.gz`` and ``stories.tsv.gz``.

Every message goes through :func:`message_pairs`: strings with a format directive, markup or a
placeholder (``{...}``, ``%s``, ``<...>``, ``$var``, ``[tags]``, an entity, a backslash, an address)
are dropped, and so are French sides that read as English. No network, no Debian tools here.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from pathlib import Path

from .real import (
    _LETTER,
    SPLITS,
    RealCorpusError,
    RealPair,
    clean,
    page_split,
    read_catalogue,
    reads_as_english,
    sentence_like,
    split_paragraph,
)

WESNOTH_LOCALE = "usr/share/games/wesnoth/1.16/locale/fr/LC_MESSAGES"
# The Wesnoth packages read (the core data and every campaign Debian ships for 1.16)
WESNOTH_PACKAGES = (
    "wesnoth-1.16-data",
    "wesnoth-1.16-did",
    "wesnoth-1.16-dm",
    "wesnoth-1.16-dw",
    "wesnoth-1.16-ei",
    "wesnoth-1.16-httt",
    "wesnoth-1.16-l",
    "wesnoth-1.16-low",
    "wesnoth-1.16-nr",
    "wesnoth-1.16-sof",
    "wesnoth-1.16-sota",
    "wesnoth-1.16-sotbe",
    "wesnoth-1.16-thot",
    "wesnoth-1.16-trow",
    "wesnoth-1.16-tsg",
    "wesnoth-1.16-ttb",
    "wesnoth-1.16-utbs",
)
# Whole campaigns held out (the catalogue's name is the unit): The Sceptre of Fire for dev; The South Guard and
# The Hammer of Thursagan for test
HELD_OUT = {"wesnoth-sof": "dev", "wesnoth-tsg": "test", "wesnoth-thot": "test"}
# Four more games' French catalogues (games.tsv.gz): package → (source, catalogue folder of a {lang}, catalogues read).
# FreedroidRPG's NPC dialogue is the most conversational text Debian ships; Widelands' scenarios and tribes'
# encyclopedia; Freeciv's civilopedia and messages (not its nation names nor its ruleset editor); Warzone 2100's
# campaign briefings and messages.
GAME_CATALOGUES = {
    "freedroidrpg-data": (
        "freedroidrpg",
        "usr/share/locale/{lang}/LC_MESSAGES",
        ("freedroidrpg-dialogs", "freedroidrpg-data", "freedroidrpg"),
    ),
    "widelands-data": ("widelands", "usr/share/games/widelands/data/locale/{lang}/LC_MESSAGES", None),
    "freeciv-data": ("freeciv", "usr/share/locale/{lang}/LC_MESSAGES", ("freeciv-core",)),
    "warzone2100-data": ("warzone2100", "usr/share/locale/{lang}/LC_MESSAGES", ("warzone2100",)),
}
# Three more sources (objects.tsv.gz, training only): the French catalogues of Cataclysm: Dark Days Ahead (its
# items, food, furniture, places and NPC talk: the household words no other game names: "sofa", "kitchen",
# "coffee", "hospital") and of gbrainy (puzzles and proverbs); Tux Paint's stamps' one-sentence descriptions,
# written for children ("Grandma's old rag doll.", read by extract_stamps).
OBJECT_CATALOGUES = {
    "cataclysm-dda-data": ("cataclysm", "usr/share/locale/{lang}/LC_MESSAGES", ("cataclysm-dda",)),
    "gbrainy": ("gbrainy", "usr/share/locale/{lang}/LC_MESSAGES", ("gbrainy",)),
}
# Three games' dialogue (dialogue.tsv.gz, training only): Dink Smallwood's (FreeDink's) whole story, its characters'
# everyday talk ("Dink, it's getting late!"), from its French gettext catalogue; Hedgewars' missions' dialogue, from
# its Lua locale table (read_lua_locale); FreeCol's messages and Colonopedia, from its Java properties files
# (read_properties).
DIALOGUE_CATALOGUES = {"freedink-data": ("freedink", "usr/share/games/dink/dink/l10n/{lang}/LC_MESSAGES", ("dink",))}
# Stories, children's words and four more games (stories.tsv.gz, training only): Adonthell's role-playing game
# Waste's Edge, its whole story in its characters' talk ("Uh, hello again sir.", "Well, everybody knows that Elves can
# move with absolute silence."); Tux Paint's program, what it says to a child drawing ("No, don't erase it!", "Sky
# blue!"); eduActiv8's (pysiogame's) activities for children ("Type your answer and hit enter"); UFO: Alien
# Invasion's UFOpaedia, research reports and messages; Seven Kingdoms' encyclopedia and help; LordsAWar's messages
# ("Will no hero defend your honour?"); Plee the Bear's tutorial and dialogue ("Leave my son alone!").
STORY_CATALOGUES = {
    "adonthell-data": (
        "wastesedge",
        "usr/share/games/adonthell/games/wastesedge/locale/{lang}/LC_MESSAGES",
        ("wastesedge",),
    ),
    "tuxpaint-data": ("tuxpaint-program", "usr/share/locale/{lang}/LC_MESSAGES", ("tuxpaint",)),
    "pysiogame": ("eduactiv8", "usr/share/games/pysiogame/locale/{lang}/LC_MESSAGES", ("eduactiv8",)),
    "ufoai-misc": ("ufoai", "usr/share/games/ufoai/base/i18n/{lang}/LC_MESSAGES", ("ufoai",)),
    "7kaa-data": ("7kaa", "usr/share/games/locale/{lang}/LC_MESSAGES", ("7kaa",)),
    "lordsawar-data": ("lordsawar", "usr/share/locale/{lang}/LC_MESSAGES", ("lordsawar",)),
    "plee-the-bear": ("plee-the-bear", "usr/share/locale/{lang}/LC_MESSAGES", ("plee-the-bear",)),
}
# every package read by extract_game, whichever file its pairs go to
CATALOGUE_PACKAGES = {**GAME_CATALOGUES, **OBJECT_CATALOGUES, **DIALOGUE_CATALOGUES, **STORY_CATALOGUES}
HEDGEWARS_PACKAGE = "hedgewars-data"
HEDGEWARS_LOCALE = "usr/share/games/hedgewars/Data/Locale/{lang}.lua"
FREECOL_PACKAGE = "freecol"
FREECOL_STRINGS = "usr/share/games/freecol/strings/FreeColMessages{suffix}.properties"
STAMPS_PACKAGE = "tuxpaint-stamps-default"
STAMPS = "usr/share/tuxpaint/stamps"
# Whole Widelands scenarios held out (the catalogue is the unit; the other games have no smaller unit than a
# catalogue, so they train only): the Atlanteans' first for dev, the Empire's fourth for test
GAMES_HELD_OUT = {"scenario_atl01.wmf": "dev", "scenario_emp04.wmf": "test"}
GCOMPRIS_QM = "usr/share/gcompris-qt/translations/gcompris_fr.qm"

LICENCES = {
    "wesnoth": "GPL-2.0-or-later (Battle for Wesnoth 1.16, its campaigns' authors and the French translation team)",
    "gcompris": "GPL-3.0-or-later (GCompris, the KDE educational suite, its authors and French translators)",
    "freedict": "GPL-2.0-or-later (FreeDict English-French dictionary, its contributors)",
    "freedroidrpg": "GPL-2.0-or-later (FreedroidRPG, its authors and French translators)",
    "widelands": "GPL-2.0-or-later (Widelands, its authors and French translators)",
    "freeciv": "GPL-2.0-or-later (Freeciv, its authors and French translators)",
    "warzone2100": "GPL-2.0-or-later (Warzone 2100, its authors and French translators)",
    "cataclysm": "CC-BY-SA-3.0 (Cataclysm: Dark Days Ahead, its contributors and French translators)",
    "gbrainy": "GPL-2.0-or-later (gbrainy, its authors and French translators)",
    "tuxpaint": "GPL-2.0-or-later (Tux Paint's stamps, their authors and translators)",
    "freedink": "Zlib (Dink Smallwood's data, Seth A. Robinson; FreeDink's French translation, Sylvain Beucler)",
    "hedgewars": "GPL-2.0-only (Hedgewars' missions, their authors and French translators)",
    "freecol": "GPL-2.0-or-later (FreeCol, its authors and the translatewiki.net French translators)",
    "wastesedge": "GPL-2.0-or-later (Adonthell's Waste's Edge, its authors and French translators)",
    "tuxpaint-program": "GPL-2.0-or-later (Tux Paint, its authors and French translators)",
    "eduactiv8": "GPL-3.0-or-later (eduActiv8, packaged as pysiogame, its authors and French translators)",
    "ufoai": "GPL-2.0-or-later (UFO: Alien Invasion, its authors and French translators)",
    "7kaa": "GPL-2.0-or-later (Seven Kingdoms: Ancient Adversaries, Enlight Software, its authors and translators)",
    "lordsawar": "GPL-3.0-or-later (LordsAWar!, its authors and French translators)",
    "plee-the-bear": "GPL-2.0-or-later (Plee the Bear, its authors and French translators)",
}

# A format directive, markup or a placeholder: %s, {name}, <b>, $var, [tag], &amp;, a backslash, an address,
# a Qt accelerator's "&&" or an @ (Wesnoth's @variable and addresses)
UNSAFE = re.compile(r"%|[{}<>$\[\]\\@]|&\w*;?|https?:|www\.|\|")
_CONTEXT = re.compile(r"^[\w .-]{1,40}\^")  # Wesnoth's "female^Sir" contexts
_QUALIFIER = re.compile(r"^\?[^:]{1,40}:")  # Freeciv's "?plural:Ugandans", "?food (population):Grow" qualifiers
_TYPOGRAPHY = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2026": "...", "\u2014": "—", "\u202f": " "}
)


def normalise(text: str) -> str:
    """Typographic quotes and ellipses as a user types them (it's, "…", ...), whitespace collapsed."""
    return clean(text.translate(_TYPOGRAPHY))


def message_pairs(src: str, tgt: str, max_words: int = 60) -> list[tuple[str, str]]:
    """The (English, French) pairs one translated message gives: none when either side has a format
    directive, markup or a placeholder, or the French reads as English; otherwise its paragraphs (lines)
    paired when both sides have as many, each cut into sentences when both have as many (real.split_paragraph).
    Pairs longer than max_words English words, or without a letter, are dropped."""
    src = _CONTEXT.sub("", src.split("\x04", 1)[-1])
    if not src.strip() or not tgt.strip() or UNSAFE.search(src) or UNSAFE.search(tgt):
        return []
    a = [normalise(x) for x in src.splitlines() if x.strip()]
    b = [normalise(x) for x in tgt.splitlines() if x.strip()]
    paragraphs = list(zip(a, b)) if len(a) == len(b) else [(" ".join(a), " ".join(b))]
    out = []
    for p_src, p_tgt in paragraphs:
        for s, t in split_paragraph(p_src, p_tgt):
            s, t = s.strip(), t.strip()
            if not s or not t or s == t or not _LETTER.search(s) or len(s.split()) > max_words:
                continue
            if reads_as_english(t) or not 0.4 <= len(t) / len(s) <= 3.0:
                continue
            out.append((s, t))
    return out


def catalogue_messages(data: bytes, page: str, source: str, pairs=None) -> list[RealPair]:
    """Every pair of a gettext catalogue (.mo bytes), in msgid order; pairs(msgid, msgstr) cuts and filters a
    message (message_pairs, French; chinese.message_pairs_zh for a zh_CN catalogue)."""
    pairs = pairs or message_pairs
    return [
        RealPair(source, page, s, t)
        for key, value in sorted(read_catalogue(data, page).items())
        for s, t in pairs(key, value)
    ]


def extract_wesnoth(package_root: str | Path, locale: str = WESNOTH_LOCALE, pairs=None) -> list[RealPair]:
    """The pairs of each French catalogue a Wesnoth package ships; the page is the catalogue's name
    (wesnoth-httt, wesnoth-lib…), the unit of the split. locale and pairs read another language's
    catalogues (chinese.extract_wesnoth_zh)."""
    folder = Path(package_root) / locale
    out = []
    for path in sorted(folder.glob("*.mo")):
        out.extend(catalogue_messages(path.read_bytes(), path.stem, "wesnoth", pairs))
    return out


def extract_game(package_root: str | Path, package: str, lang: str = "fr", pairs=None) -> list[RealPair]:
    """The pairs of the catalogues CATALOGUE_PACKAGES names for one package, in lang's folder; the page is the
    catalogue's name, the unit of the split. pairs cuts and filters a message (French: message_pairs without
    Freeciv's qualifiers; chinese.message_pairs_zh for zh_CN)."""
    source, folder, names = CATALOGUE_PACKAGES[package]
    pairs = pairs or _unqualified_pairs
    out = []
    for path in sorted((Path(package_root) / folder.format(lang=lang)).glob("*.mo")):
        if names is None or path.stem in names:
            out.extend(catalogue_messages(path.read_bytes(), path.stem, source, pairs))
    return out


def read_stamp(text: str, locale: str = "fr") -> tuple[str, str] | None:
    """(English, translation) of one Tux Paint stamp description (.txt): its first line is the English, then one
    "locale.utf8=text" line per language; None when the stamp has no line for locale."""
    lines = text.splitlines()
    prefix = f"{locale}.utf8="
    for line in lines[1:]:
        if line.startswith(prefix):
            return lines[0].strip(), line[len(prefix) :].strip()
    return None


def extract_stamps(package_root: str | Path, locale: str = "fr", pairs=None) -> list[RealPair]:
    """The pairs of Tux Paint's stamp descriptions (message_pairs' rules, or pairs for another language); the page
    is the stamp's folder (animals/mammals, household/furniture…), in path order."""
    pairs = pairs or message_pairs
    root = Path(package_root) / STAMPS
    out = []
    for path in sorted(root.rglob("*.txt")):
        found = read_stamp(path.read_text(encoding="utf-8", errors="replace"), locale)
        if found:
            page = str(path.parent.relative_to(root))
            out.extend(RealPair("tuxpaint", page, s, t) for s, t in pairs(*found))
    return out


_LUA_ENTRY = re.compile(r'^\s*\["((?:[^"\\]|\\.)*)"\]\s*=\s*"((?:[^"\\]|\\.)*)"', re.M)
_LUA_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def _lua_string(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _LUA_ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def read_lua_locale(text: str) -> list[tuple[str, str]]:
    """(English, translation) of each entry of a Hedgewars Lua locale table (``["English"] = "French",``), in file
    order; entries commented out (``--``, the untranslated ones) are not read."""
    return [(_lua_string(a), _lua_string(b)) for a, b in _LUA_ENTRY.findall(text)]


def extract_hedgewars(package_root: str | Path, lang: str = "fr", pairs=None) -> list[RealPair]:
    """The pairs of Hedgewars' Lua locale table for lang (its missions' and campaigns' text); one page, "missions"."""
    pairs = pairs or message_pairs
    text = (Path(package_root) / HEDGEWARS_LOCALE.format(lang=lang)).read_text(encoding="utf-8")
    return [RealPair("hedgewars", "missions", s, t) for a, b in read_lua_locale(text) for s, t in pairs(a, b)]


def read_properties(text: str) -> dict[str, str]:
    """key → text of a Java properties file as FreeCol writes them: ``key=text`` lines (``#`` comments), with
    ``\\n`` a line break and ``\\uXXXX`` a character."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), value.strip())
        out[key.strip()] = value.replace("\\n", "\n")
    return out


def extract_freecol(package_root: str | Path, lang: str = "fr", pairs=None) -> list[RealPair]:
    """The pairs of FreeCol's messages: each key's English (FreeColMessages.properties) beside its text in lang's
    file, in the English file's order; one page, "messages"."""
    pairs = pairs or message_pairs
    root = Path(package_root)
    english = read_properties((root / FREECOL_STRINGS.format(suffix="")).read_text(encoding="utf-8"))
    other = read_properties((root / FREECOL_STRINGS.format(suffix=f"_{lang}")).read_text(encoding="utf-8"))
    return [
        RealPair("freecol", "messages", s, t)
        for key, text in english.items()
        if key in other
        for s, t in pairs(text, other[key])
    ]


def _unqualified_pairs(src: str, tgt: str) -> list[tuple[str, str]]:
    """message_pairs of a message without a Freeciv qualifier ("?plural:", on either side)."""
    return message_pairs(_QUALIFIER.sub("", src), _QUALIFIER.sub("", tgt))


# ---------------------------------------------------------------- Qt .qm
QM_MAGIC = bytes.fromhex("3cb86418caef9c95cd211cbf60a1bddd")
_QM_MESSAGES = 0x69
# message record tags (qtranslator.cpp): End, SourceText16, Translation, Context16, Obsolete1, SourceText,
# Context, Comment, Obsolete2
_TAG_END, _TAG_TRANSLATION, _TAG_OBSOLETE1, _TAG_SOURCE, _TAG_CONTEXT, _TAG_COMMENT = 1, 3, 5, 6, 7, 8


def read_qm(data: bytes, name: str = "catalogue") -> list[tuple[str, str, str]]:
    """(context, source text, translation) of every message of a Qt .qm file, in file order.

    Read from Qt's documented layout (qtranslator.cpp): a 16-byte magic, then sections (a tag byte and a
    big-endian length); the messages section is records of tagged fields, translations in UTF-16BE, source
    texts and contexts in UTF-8. A plural message keeps its first form; a message without a source text or a
    translation is skipped. Anything outside the file raises
    RealCorpusError.
    """
    if not data.startswith(QM_MAGIC):
        raise RealCorpusError(f"{name}: not a Qt translation file (bad magic number)")
    at, messages = len(QM_MAGIC), None
    while at + 5 <= len(data):
        tag, length = data[at], struct.unpack(">I", data[at + 1 : at + 5])[0]
        at += 5
        if at + length > len(data):
            raise RealCorpusError(f"{name}: a section runs past the end of the file")
        if tag == _QM_MESSAGES:
            messages = data[at : at + length]
        at += length
    if messages is None:
        return []
    out: list[tuple[str, str, str]] = []
    m, at = messages, 0
    context = source = translation = None

    def take(n: int) -> bytes:
        nonlocal at
        if at + n > len(m):
            raise RealCorpusError(f"{name}: a message runs past the end of its section")
        chunk = m[at : at + n]
        at += n
        return chunk

    while at < len(m):
        tag = take(1)[0]
        if tag == _TAG_END:
            if source and translation:
                out.append((context or "", source, translation))
            context = source = translation = None
        elif tag in (_TAG_TRANSLATION, 2, 4):
            length = struct.unpack(">I", take(4))[0]
            if length == 0xFFFFFFFF:
                continue
            raw = take(length)
            if tag == _TAG_TRANSLATION and translation is None:
                try:
                    translation = raw.decode("utf-16-be")
                except UnicodeDecodeError:
                    raise RealCorpusError(f"{name}: a translation that is not UTF-16") from None
        elif tag == _TAG_OBSOLETE1:
            take(4)
        elif tag in (_TAG_SOURCE, _TAG_CONTEXT, _TAG_COMMENT):
            length = struct.unpack(">I", take(4))[0]
            text = take(length).decode("utf-8", errors="replace")
            if tag == _TAG_SOURCE:
                source = text
            elif tag == _TAG_CONTEXT:
                context = text
        elif tag == 9:  # Obsolete2: no payload
            continue
        else:
            raise RealCorpusError(f"{name}: unknown message field tag {tag}")
    return out


def extract_gcompris(package_root: str | Path) -> list[RealPair]:
    """The pairs of GCompris's French catalogue; the page is the message's context (an activity's file)."""
    path = Path(package_root) / GCOMPRIS_QM
    out = []
    for context, source, translation in read_qm(path.read_bytes(), path.name):
        for s, t in message_pairs(source, translation):
            out.append(RealPair("gcompris", context or "gcompris", s, t))
    return sorted(out, key=lambda p: (p.page, p.src, p.tgt))


# ---------------------------------------------------------------- FreeDict (dictd)


def everyday_split(p: RealPair) -> str:
    """train / dev / test of a pair: Wesnoth by campaign (HELD_OUT), GCompris by activity (a hash of its
    context, as real.page_split), Widelands by scenario (GAMES_HELD_OUT), anything else training."""
    if p.source == "wesnoth":
        return HELD_OUT.get(p.page, "train")
    if p.source == "gcompris":
        return page_split(p.source, p.page)
    if p.source == "widelands":
        return GAMES_HELD_OUT.get(p.page, "train")
    return "train"


def split_everyday(
    pairs: Iterable[RealPair], exclude_train: set[str] = frozenset(), exclude_heldout: set[str] = frozenset()
) -> dict[str, list[RealPair]]:
    """De-duplicated pairs by split (whole campaigns or activities, never single sentences). Within a split each
    English text is kept once (its first French); a held-out English text that training has (here, or in
    exclude_heldout: the other corpora's training English) is dropped, and held-out splits keep sentence-like
    pairs only; a training English text in exclude_train (the other corpora's held-out English) is dropped."""
    by_split: dict[str, list[RealPair]] = {s: [] for s in SPLITS}
    seen: dict[str, set[str]] = {s: set() for s in SPLITS}
    for p in pairs:
        s = everyday_split(p)
        if p.src in seen[s] or (s == "train" and p.src in exclude_train):
            continue
        seen[s].add(p.src)
        by_split[s].append(p)
    for s in ("dev", "test"):
        by_split[s] = [
            p
            for p in by_split[s]
            if p.src not in seen["train"] and p.src not in exclude_heldout and sentence_like(p.src, p.tgt)
        ]
    return by_split
