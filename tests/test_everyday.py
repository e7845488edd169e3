"""Everyday text: extraction of each source from tiny files made here (no apt), the filters, the split by
campaign, the committed files, and the en-fr preset's machinery (init_from, corpus weights, float16 snapshots,
resume)."""

from __future__ import annotations

import dataclasses
import gzip
import struct

import pytest
import torch
from conftest import stopped_run
from test_real_corpus import _mo

from transformer.checkpoint import load_checkpoint
from transformer.corpus import everyday as E
from transformer.corpus import freedict, real
from transformer.corpus.real import RealCorpusError, RealPair
from transformer.corpus.tatoeba import without_test_sentences
from transformer.training import PRESETS, Trainer, TrainingError
from transformer.training.data import load_training_examples


# ---------------------------------------------------------------- filters
def write_qm(messages: list[tuple[str, str, str]]) -> bytes:
    """A minimal .qm holding (context, source, translation) messages: the inverse of everyday.read_qm."""
    body = b""
    for context, source, translation in messages:
        t = translation.encode("utf-16-be")
        s, c = source.encode(), context.encode()
        body += bytes([E._TAG_TRANSLATION]) + struct.pack(">I", len(t)) + t
        body += bytes([E._TAG_SOURCE]) + struct.pack(">I", len(s)) + s
        body += bytes([E._TAG_CONTEXT]) + struct.pack(">I", len(c)) + c
        body += bytes([E._TAG_END])
    return E.QM_MAGIC + bytes([E._QM_MESSAGES]) + struct.pack(">I", len(body)) + body


@pytest.mark.parametrize(
    "src, tgt",
    [
        ("Hello {name}, welcome.", "Bonjour {name}, bienvenue."),
        ("You have %d gold.", "Vous avez %d pièces d'or."),
        ("Units with a <i>hero</i> marker are vital.", "Les unités <i>héros</i> sont vitales."),
        ("Give $unit.name a sword.", "Donnez une épée à $unit.name."),
        ("Press [Enter] to go on.", "Appuyez sur [Entrée] pour continuer."),
        ("Tom &amp; Jerry are here.", "Tom &amp; Jerry sont là."),
        ("See https://wesnoth.org for more.", "Voir https://wesnoth.org pour plus."),
        ("The cat is on the table.", "The cat is on the table, you see."),  # French that reads as English
        ("The cat is on the table.", "The cat is on the table."),  # untranslated
    ],
)

def test_messages_with_markup_placeholders_or_english_french_are_dropped(src, tgt):
    assert E.message_pairs(src, tgt) == []


def test_a_message_is_cut_into_lines_and_sentences_and_normalised():
    pairs = E.message_pairs(
        "female^We must hurry. The bridge is falling!\nWhere\u2019s the king\u2026",
        "Nous devons nous d\u00e9p\u00eacher. Le pont s'effondre\u00a0!\nO\u00f9 est le roi\u2026",
    )
    assert pairs == [
        ("We must hurry.", "Nous devons nous dépêcher."),
        ("The bridge is falling!", "Le pont s'effondre !"),
        ("Where's the king...", "Où est le roi..."),
    ]
    # unequal sentence counts keep the paragraph whole
    assert E.message_pairs("Go now. Run!", "Partez vite !") == [("Go now. Run!", "Partez vite !")]


# ---------------------------------------------------------------- Wesnoth (.mo)
def test_wesnoth_catalogues_give_pairs_named_by_campaign(tmp_path):
    folder = tmp_path / "wesnoth-1.16-tsg" / E.WESNOTH_LOCALE
    folder.mkdir(parents=True)
    messages = {
        "": "Content-Type: text/plain; charset=UTF-8\n",
        "The village is burning!": "Le village brûle !",
        "Move $unit to the keep.": "Déplacez $unit vers le donjon.",
        "Deoran": "Deoran",
        "dialog\x04I know the way.": "Je connais le chemin.",
    }
    (folder / "wesnoth-tsg.mo").write_bytes(_mo(messages))
    pairs = E.extract_wesnoth(tmp_path / "wesnoth-1.16-tsg")
    assert pairs == [  # in msgid order (the context is part of the msgid)
        RealPair("wesnoth", "wesnoth-tsg", "The village is burning!", "Le village brûle !"),
        RealPair("wesnoth", "wesnoth-tsg", "I know the way.", "Je connais le chemin."),
    ]


# ---------------------------------------------------------------- the other games (.mo)
def _catalogues(root, package: str, catalogues: dict[str, dict[str, str]]) -> str:
    """Write package's .mo catalogues (name → messages) where CATALOGUE_PACKAGES looks; its source."""
    source, locale, _ = E.CATALOGUE_PACKAGES[package]
    folder = root / package / locale.format(lang="fr")
    folder.mkdir(parents=True, exist_ok=True)
    for name, messages in catalogues.items():
        (folder / f"{name}.mo").write_bytes(_mo({"": "Content-Type: text/plain; charset=UTF-8\n", **messages}))
    return source


def test_game_catalogues_read_the_named_ones_and_drop_freeciv_qualifiers(tmp_path):
    freeciv = {
        "?plural:The workers are happy today.": "Les ouvriers sont heureux aujourd'hui.",
        "?food (population):The city grows quickly.": "La ville grandit vite.",
        "Build a city near the river.": "Construisez une ville près de la rivière.",
        "Your treasury holds %d gold.": "Votre trésor contient %d pièces d'or.",
    }
    # nation names: not a catalogue freeciv is read for
    nations = {"The Ugandans are here.": "Les Ougandais sont là."}
    source = _catalogues(tmp_path, "freeciv-data", {"freeciv-core": freeciv, "freeciv-nations": nations})
    pairs = E.extract_game(tmp_path / "freeciv-data", "freeciv-data")
    assert source == "freeciv" and pairs == [
        RealPair("freeciv", "freeciv-core", "The city grows quickly.", "La ville grandit vite."),
        RealPair("freeciv", "freeciv-core", "The workers are happy today.", "Les ouvriers sont heureux aujourd'hui."),
        RealPair(
            "freeciv", "freeciv-core", "Build a city near the river.", "Construisez une ville près de la rivière."
        ),
    ]  # msgid order: "?plural:…" sorts before "Build…"
    # Widelands: every catalogue, each scenario a page; whole scenarios held out
    pages = ("scenario_atl01.wmf", "scenario_emp04.wmf", "scenario_bar01.wmf")
    _catalogues(
        tmp_path,
        "widelands-data",
        {p: {f"We reached the coast in {p[9:12]}.": "Nous avons atteint la côte."} for p in pages},
    )
    names = E.GAME_CATALOGUES["widelands-data"][2]
    pairs = E.extract_game(tmp_path / "widelands-data", "widelands-data")
    assert names is None and [p.page for p in pairs] == [
        "scenario_atl01.wmf",
        "scenario_bar01.wmf",
        "scenario_emp04.wmf",
    ]
    assert {p.page: E.everyday_split(p) for p in pairs} == {
        "scenario_atl01.wmf": "dev",
        "scenario_bar01.wmf": "train",
        "scenario_emp04.wmf": "test",
    }


# ---------------------------------------------------------------- the objects: Cataclysm, gbrainy (.mo), Tux Paint
def test_object_catalogues_and_stamp_descriptions(tmp_path):
    messages = {"A comfortable sofa.": "Un canapé confortable.", "You drink %s.": "Vous buvez %s."}
    other = {"A cup of coffee.": "Une tasse de café."}  # a catalogue not named
    _catalogues(tmp_path, "cataclysm-dda-data", {"cataclysm-dda": messages, "other": other})
    assert E.extract_game(tmp_path / "cataclysm-dda-data", "cataclysm-dda-data") == [
        RealPair("cataclysm", "cataclysm-dda", "A comfortable sofa.", "Un canapé confortable.")
    ]
    # a stamp: English first, then one "locale.utf8=" line per language; typography as a user types it
    stamp = "Grandma\u2019s old rag doll.\nde.utf8=Omas alte Stoffpuppe.\nfr.utf8=Une poup\u00e9e de grand-m\u00e8re.\n"
    assert E.read_stamp(stamp) == ("Grandma\u2019s old rag doll.", "Une poup\u00e9e de grand-m\u00e8re.")
    assert E.read_stamp(stamp, "zh_CN") is None
    root = tmp_path / E.STAMPS_PACKAGE / E.STAMPS
    (root / "people" / "toys").mkdir(parents=True)
    (root / "people" / "toys" / "doll.txt").write_text(stamp, encoding="utf-8")
    (root / "people" / "toys" / "penny.txt").write_text("A coin ($.01).\nfr.utf8=Une pi\u00e8ce (0,01 $).\n")
    (root / "people" / "nobody.txt").write_text("A man.\nde.utf8=Ein Mann.\n", encoding="utf-8")
    assert E.extract_stamps(tmp_path / E.STAMPS_PACKAGE) == [
        RealPair("tuxpaint", "people/toys", "Grandma's old rag doll.", "Une poup\u00e9e de grand-m\u00e8re.")
    ]  # the placeholder-like "$" drops the coin; a stamp without French gives nothing
    assert E.everyday_split(RealPair("tuxpaint", "people/toys", "A doll.", "Une poup\u00e9e.")) == "train"


# ---------------------------------------------------------------- the dialogue: FreeDink (.mo), Hedgewars, FreeCol
def test_dialogue_sources_freedink_hedgewars_lua_and_freecol_properties(tmp_path):
    dink = {"Dink, it's getting late!": "Dink, il se fait tard !", "I found &mcrap gold.": "J'ai trouvé &mcrap d'or."}
    assert _catalogues(tmp_path, "freedink-data", {"dink": dink, "other": {"Hi there.": "Salut."}}) == "freedink"
    assert E.extract_game(tmp_path / "freedink-data", "freedink-data") == [
        RealPair("freedink", "dink", "Dink, it's getting late!", "Dink, il se fait tard !")
    ]  # Dink's "&mcrap" variables are placeholders; only the catalogue named is read
    # Hedgewars: a Lua table; escaped quotes read, lines commented out (untranslated) not read
    lua = (
        "locale = {\n"
        '      ["You\'re welcome!"] = "De rien !",\n'
        '      ["He said \\"run\\"."] = "Il a dit \\"cours\\".", -- A_Classic_Fairytale\n'
        '--      ["Where are they?"] = "",\n'
        '      ["Press [Jump] to jump."] = "Appuyez sur [Saut] pour sauter.",\n'
        "}\n"
    )
    assert E.read_lua_locale(lua) == [
        ("You're welcome!", "De rien !"),
        ('He said "run".', 'Il a dit "cours".'),
        ("Press [Jump] to jump.", "Appuyez sur [Saut] pour sauter."),
    ]
    path = tmp_path / E.HEDGEWARS_PACKAGE / E.HEDGEWARS_LOCALE.format(lang="fr")
    path.parent.mkdir(parents=True)
    path.write_text(lua, encoding="utf-8")
    assert E.extract_hedgewars(tmp_path / E.HEDGEWARS_PACKAGE) == [
        RealPair("hedgewars", "missions", "You're welcome!", "De rien !"),
        RealPair("hedgewars", "missions", 'He said "run".', 'Il a dit "cours".'),
    ]  # the [tag] is markup
    # FreeCol: key=text, the English file beside the French one, paired by key in the English file's order
    english = "# FreeCol\nmodel.goods.fish.description=Fish is food.\\nIt feeds the colony.\ncli.help=Show help\n"
    english += "model.unit.name=%unit% arrives\nonlyEnglish=Not translated yet.\n"
    french = "model.unit.name=%unit% arrive\ncli.help=Afficher l\\u2019aide\n"
    french += "model.goods.fish.description=Le poisson est de la nourriture.\\nIl nourrit la colonie.\n"
    assert E.read_properties(english)["model.goods.fish.description"] == "Fish is food.\nIt feeds the colony."
    assert E.read_properties(french)["cli.help"] == "Afficher l\u2019aide"
    folder = tmp_path / E.FREECOL_PACKAGE
    for suffix, text in (("", english), ("_fr", french)):
        path = folder / E.FREECOL_STRINGS.format(suffix=suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert E.extract_freecol(folder) == [
        RealPair("freecol", "messages", "Fish is food.", "Le poisson est de la nourriture."),
        RealPair("freecol", "messages", "It feeds the colony.", "Il nourrit la colonie."),
        RealPair("freecol", "messages", "Show help", "Afficher l'aide"),
    ]  # lines paired one by one; typography as a user types it; the %placeholder% dropped
    assert E.everyday_split(RealPair("freedink", "dink", "Hi.", "Salut.")) == "train"


def test_story_sources_waste_s_edge_tux_paint_and_eduactiv8(tmp_path):
    """stories.tsv.gz's three catalogues, each where its package keeps it, only the catalogue named read."""
    wastesedge = {"Uh, hello again sir.": "Eh, re-bonjour, monsieur.", "%s gold": "%s pièces d'or"}
    tuxpaint = {"No, don't erase it!": "Non, ne l'efface pas !"}
    eduactiv8 = {"Type your answer and hit enter": "Écris ta réponse puis tape entrée"}
    sources = {
        "adonthell-data": _catalogues(tmp_path, "adonthell-data", {"wastesedge": wastesedge, "other": tuxpaint}),
        "tuxpaint-data": _catalogues(tmp_path, "tuxpaint-data", {"tuxpaint": tuxpaint, "tuxpaint-config": eduactiv8}),
        "pysiogame": _catalogues(tmp_path, "pysiogame", {"eduactiv8": eduactiv8}),
    }
    assert sources == {"adonthell-data": "wastesedge", "tuxpaint-data": "tuxpaint-program", "pysiogame": "eduactiv8"}
    got = [p for name in E.STORY_CATALOGUES for p in E.extract_game(tmp_path / name, name)]
    assert got == [
        RealPair("wastesedge", "wastesedge", "Uh, hello again sir.", "Eh, re-bonjour, monsieur."),
        RealPair("tuxpaint-program", "tuxpaint", "No, don't erase it!", "Non, ne l'efface pas !"),
        RealPair("eduactiv8", "eduactiv8", "Type your answer and hit enter", "Écris ta réponse puis tape entrée"),
    ]  # the %s message is a format directive; the other catalogues beside them are not read
    assert {p.source for p in got} <= set(E.LICENCES)


# ---------------------------------------------------------------- GCompris (.qm)
def test_qm_catalogue_reads_context_source_and_translation(tmp_path):
    messages = [
        ("ActivityInfo", "Click on the red balloon.", "Clique sur le ballon rouge."),
        ("ActivityInfo", "Use the arrow keys to move.", "Utilise les flèches pour te déplacer."),
        ("Data", "Count the apples in the basket.", "Compte les pommes dans le panier."),
        ("Data", "Drag %1 to the box.", "Fais glisser %1 dans la boîte."),
    ]
    data = write_qm(messages)
    assert E.read_qm(data) == messages
    root = tmp_path / "gcompris-qt-data"
    (root / E.GCOMPRIS_QM).parent.mkdir(parents=True)
    (root / E.GCOMPRIS_QM).write_bytes(data)
    pairs = E.extract_gcompris(root)
    assert [(p.page, p.src, p.tgt) for p in pairs] == [(c, s, t) for c, s, t in messages[:3]]
    assert all(p.source == "gcompris" for p in pairs)


def test_qm_read_skips_obsolete_fields_and_refuses_bad_files():
    # a record with an Obsolete1 hash (tag 5, 4 bytes) and a null translation (length 0xFFFFFFFF) before the real one
    body = bytes([5]) + b"\0\0\0\1" + bytes([3]) + b"\xff\xff\xff\xff"
    t = "Bonjour".encode("utf-16-be")
    body += bytes([3]) + struct.pack(">I", len(t)) + t + bytes([6]) + struct.pack(">I", 5) + b"Hello" + bytes([1])
    data = E.QM_MAGIC + bytes([0x42]) + struct.pack(">I", 0) + bytes([0x69]) + struct.pack(">I", len(body)) + body
    assert E.read_qm(data) == [("", "Hello", "Bonjour")]
    with pytest.raises(RealCorpusError, match="not a Qt translation"):
        E.read_qm(b"\0" * 40)
    with pytest.raises(RealCorpusError, match="past the end"):
        E.read_qm(E.QM_MAGIC + bytes([0x69]) + struct.pack(">I", 100) + b"\1")


# ---------------------------------------------------------------- FreeDict (dictd)
def _dictd(entries: list[str]) -> tuple[str, bytes]:
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def num(n: int) -> str:
        out = ""
        while True:
            out = b64[n % 64] + out
            n //= 64
            if not n:
                return out

    body, index = b"", []
    for text in entries:
        raw = text.encode()
        head = text.split(" /", 1)[0].split("\n", 1)[0]
        index.append(f"{head.lower().replace('-', '')}\t{num(len(body))}\t{num(len(raw))}")
        body += raw
    return "\n".join(sorted(index)) + "\n", body


def test_freedict_entries_give_the_most_common_french_word(tmp_path):
    index, body = _dictd(
        [
            "00-database-info\nEnglish-French FreeDict Dictionary\n",
            "cat /kæt/\n1. mégère, peau de vache\n2. chat\n",
            "sofa /soufə/\ncanapé\n",
            "well-known /welnoun/\nconnu\n",
            "Adam /ædəm/\nAdam\n",
            "Add %s /x/\najouter %s\n",
        ]
    )
    entries = freedict.read_dictd(index, body)
    assert entries["cat"] == [["mégère", "peau de vache"], ["chat"]] and "well-known" in entries
    counts = freedict.FrenchEvidence(
        [
            RealPair("x", "p", "The cat sleeps.", "Le chat dort."),
            RealPair("x", "p", "A shrew.", "Une mégère."),
            RealPair("x", "p", "The old shrew.", "La vieille mégère."),
        ]
    )
    assert counts.score("cat", "chat") == (1, 1) and counts.score("cat", "mégère") == (0, 2)
    pairs = freedict.word_pairs(entries, counts)
    assert [(p.src, p.tgt) for p in pairs] == [("cat", "chat"), ("sofa", "canapé"), ("well-known", "connu")]
    root = tmp_path / "dict"
    (root / freedict.FREEDICT_INDEX).parent.mkdir(parents=True)
    (root / freedict.FREEDICT_INDEX).write_text(index, encoding="utf-8")
    (root / freedict.FREEDICT_DICT).write_bytes(gzip.compress(body))
    assert freedict.extract_freedict(root, counts) == pairs


# ---------------------------------------------------------------- the split
def test_split_holds_out_whole_campaigns_and_shares_no_english_with_training():
    def pair(page, src, source="wesnoth"):
        return RealPair(source, page, src, "Une phrase française assez longue pour compter.")

    pairs = [
        pair("wesnoth-httt", "We must cross the river before dawn."),
        pair("wesnoth-httt", "Who goes there?"),
        pair("wesnoth-sof", "The dwarves are forging the sceptre now."),
        pair("wesnoth-sof", "Who goes there?"),  # also trained on: dropped from dev
        pair("wesnoth-tsg", "The bandits are attacking the village."),
        pair("wesnoth-thot", "The hammer was lost long ago, they say."),
        pair("wesnoth-tsg", "Short one."),  # not sentence-like: dropped from test
        pair("wesnoth-tsg", "A manual sentence that training already has."),
        pair("wesnoth-httt", "A held-out manual sentence never trained on."),
    ]
    splits = E.split_everyday(
        pairs,
        exclude_train={"A held-out manual sentence never trained on."},
        exclude_heldout={"A manual sentence that training already has."},
    )
    assert {p.page for p in splits["train"]} == {"wesnoth-httt"}
    assert [p.src for p in splits["train"]] == ["We must cross the river before dawn.", "Who goes there?"]
    assert [p.src for p in splits["dev"]] == ["The dwarves are forging the sceptre now."]
    assert {p.page for p in splits["test"]} == {"wesnoth-tsg", "wesnoth-thot"} and len(splits["test"]) == 2
    # a GCompris activity goes whole to one split, by the same hash as the manuals' pages
    gc = [pair(f"activity{i}", f"Click on the number {i} now.", "gcompris") for i in range(200)]
    by = E.split_everyday(gc)
    for s, ps in by.items():
        assert all(real.page_split("gcompris", p.page) == s for p in ps)
    assert by["dev"] and by["test"]


def test_committed_everyday_corpus():
    files = real.real_files()
    assert {"everyday", "everyday_words"} <= set(files)
    every = real.read_pairs(files["everyday"])
    by = {s: real.read_pairs(files["everyday"], s) for s in real.SPLITS}
    assert len(by["train"]) > 20000 and len(by["dev"]) > 300 and len(by["test"]) > 800
    assert {p.page for p in by["dev"] if p.source == "wesnoth"} == {"wesnoth-sof"}
    assert {p.page for p in by["test"] if p.source == "wesnoth"} == {"wesnoth-tsg", "wesnoth-thot"}
    assert not {p.page for p in by["train"]} & {"wesnoth-sof", "wesnoth-tsg", "wesnoth-thot"}
    assert {p.source for p in every} == {"wesnoth", "gcompris"}
    heldout = {p.src for s in ("dev", "test") for p in by[s]}
    manuals_train = {s for s, _ in real.load_real("train", ("libreoffice", "handbook", "gnome", "apps", "kde", "ui"))}
    assert not heldout & {p.src for p in by["train"]} and not heldout & manuals_train
    assert not [p for p in every if E.UNSAFE.search(p.src) or E.UNSAFE.search(p.tgt)]
    assert not [p for p in every if real.reads_as_english(p.tgt)]
    # no GIMP: nothing from the out-of-source test set
    assert not {p.src for p in every} & {p.src for p in real.read_pairs(files["gimp"])}
    words = real.read_pairs(files["everyday_words"])
    assert len(words) > 4000 and {p.source for p in words} == {"freedict"}
    assert dict((p.src, p.tgt) for p in words)["sofa"] == "canapé"
    assert (real.DATA_DIR / "LICENCES.md").read_text().count("everyday") >= 2
    from transformer.inspection.training_data import real_data_entry

    entry = real_data_entry(("everyday", "everyday_words"), real.DATA_DIR / "MANIFEST.json")
    assert entry["everyday"]["pairs"] == len(by["train"]) and entry["everyday_words"]["pairs"] == len(words)
    assert entry["everyday"]["packages"]["wesnoth-1.16-tsg"] == "1:1.16.9-1"
    assert entry["everyday_words"]["packages"] == {"dict-freedict-eng-fra": "2022.04.21-1"}


def test_committed_games_corpus():
    files = real.real_files()
    every = real.read_pairs(files["games"])
    by = {s: real.read_pairs(files["games"], s) for s in real.SPLITS}
    assert len(by["train"]) > 20000 and len(by["dev"]) > 150 and len(by["test"]) > 200
    assert {p.source for p in every} == {"freedroidrpg", "widelands", "freeciv", "warzone2100"}
    assert {p.page for p in by["dev"]} == {"scenario_atl01.wmf"} and {p.page for p in by["test"]} == {
        "scenario_emp04.wmf"
    }
    assert not [p for p in every if E.UNSAFE.search(p.src) or E.UNSAFE.search(p.tgt)]
    assert not [p for p in every if p.source == "freeciv" and p.src.startswith("?")]  # qualifiers removed
    # no English shared between the games' held-out scenarios and any training text, nor the other way round
    heldout = {p.src for s in ("dev", "test") for p in by[s]}
    trained = {
        s
        for s, _ in real.load_real(
            "train", ("libreoffice", "handbook", "gnome", "apps", "kde", "ui", "everyday", "everyday_words")
        )
    }
    assert not heldout & (trained | {p.src for p in by["train"]})
    everyday_heldout = {s for split in ("dev", "test") for s, _ in real.load_real(split, ("everyday",))}
    gimp = {p.src for p in real.read_pairs(files["gimp"])}
    assert not {p.src for p in by["train"]} & (everyday_heldout | gimp)
    from transformer.inspection.training_data import real_data_entry

    entry = real_data_entry(("games",), real.DATA_DIR / "MANIFEST.json")
    assert entry["games"]["pairs"] == len(by["train"]) and entry["games"]["packages"]["widelands-data"] == "2:1.1-3"


@pytest.mark.parametrize(
    "name, sources, min_pairs, package, version, english",
    [
        # household words the games lack
        ("objects", {"cataclysm", "gbrainy", "tuxpaint"}, 10000, "gbrainy", "1:2.4.6-1", ("sofa", "kitchen", "coffee")),
        # the talk of everyday life, as a class types it
        ("dialogue", {"freedink", "hedgewars", "freecol"}, 6000, "freecol", "1.0.0-1", ("late!", "welcome!")),
        # a role-playing game's story, what children's programs say, four more games
        (
            "stories",
            {"wastesedge", "tuxpaint-program", "eduactiv8", "ufoai", "7kaa", "lordsawar", "plee-the-bear"},
            8000,
            "adonthell-data",
            "0.3.8-1",
            ("hello", "erase", "hero"),
        ),
    ],
)
def test_committed_training_only_corpus(name, sources, min_pairs, package, version, english):
    from transformer.inspection.training_data import real_data_entry

    files = real.real_files()
    train = real.read_pairs(files[name])
    assert len(train) > min_pairs and {s for s in real.SPLITS if real.read_pairs(files[name], s)} == {"train"}
    assert {p.source for p in train} == sources
    assert not [p for p in train if E.UNSAFE.search(p.src) or E.UNSAFE.search(p.tgt)]
    # none of its English is held out anywhere (manuals, everyday campaigns, games' scenarios, GIMP)
    heldout = {s for split in ("dev", "test") for s, _ in real.load_real(split, ("everyday", "games", "libreoffice"))}
    assert not {p.src for p in train} & (heldout | {p.src for p in real.read_pairs(files["gimp"])})
    text = " ".join(p.src.lower() for p in train)
    assert all(f" {w}" in text for w in english)
    entry = real_data_entry((name,), real.DATA_DIR / "MANIFEST.json")
    assert entry[name]["pairs"] == len(train) and entry[name]["packages"][package] == version


def test_en_fr_dialogue_preset_adds_the_dialogue_to_en_fr_objects():
    dialogue, objects = PRESETS["en-fr-dialogue"], PRESETS["en-fr-objects"]
    assert dialogue.init_from == "checkpoints/en-fr" and dialogue.real_data == (*objects.real_data, "dialogue")
    assert dict(dialogue.real_repeat) == {"everyday": 4, "games": 2, "objects": 2, "dialogue": 3}
    assert dialogue.lr_factor < objects.lr_factor and dialogue.average_every == 300


def test_en_fr_stories_preset_adds_the_stories_to_en_fr_dialogue():
    stories, dialogue = PRESETS["en-fr-stories"], PRESETS["en-fr-dialogue"]
    assert stories.init_from == "checkpoints/en-fr" and stories.real_data == (*dialogue.real_data, "stories")
    assert dict(stories.real_repeat) == {"everyday": 4, "games": 2, "objects": 2, "dialogue": 3, "stories": 3}
    assert stories.lr_factor == dialogue.lr_factor and stories.average_every == 300 and stories.checkpoint_every == 100


def test_en_fr_objects_preset_adds_the_objects_to_en_fr_games():
    objects, games = PRESETS["en-fr-objects"], PRESETS["en-fr-games"]
    assert objects.init_from == "checkpoints/en-fr" and objects.real_data == (*games.real_data, "objects")
    assert dict(objects.real_repeat) == {"everyday": 4, "games": 2, "objects": 2}


def test_en_fr_games_preset_adds_the_games_to_en_frs_corpora():
    games, base = PRESETS["en-fr-games"], PRESETS["en-fr"]
    assert games.init_from == "checkpoints/en-fr" and games.real_data == (*base.real_data, "games")
    assert dict(games.real_repeat) == {"everyday": 4, "games": 2} and games.batch_tokens == 8000


# ---------------------------------------------------------------- the en-fr preset's machinery
TINY = dataclasses.replace(PRESETS["tiny"], steps=6, snapshot_steps=(2,), checkpoint_every=100)


def test_real_repeat_weights_a_corpus_and_refuses_unknown_names():
    base = dataclasses.replace(TINY, real_data=("everyday_words",))
    once = load_training_examples(base)
    thrice = load_training_examples(dataclasses.replace(base, real_repeat=(("everyday_words", 3),)))
    # less the pairs whose English is a public test sentence (corpus.tatoeba.without_test_sentences)
    words = len(without_test_sentences(real.load_real("train", ("everyday_words",)), lambda p: p[0]))
    assert len(thrice) - len(once) == 2 * words
    with pytest.raises(TrainingError, match="real_repeat"):
        load_training_examples(dataclasses.replace(base, real_repeat=(("kde", 2),)))


@pytest.mark.slow
def test_init_from_float16_snapshots_and_resume(tmp_path):
    start = tmp_path / "start"
    Trainer(dataclasses.replace(TINY, steps=3, snapshot_steps=()), start).train()
    cfg = dataclasses.replace(TINY, init_from=str(start), snapshot_steps=(0, 2), snapshot_dtype="float16")
    straight = tmp_path / "straight"
    Trainer(cfg, straight).train()
    # step 0 is the starting checkpoint's weights (in float16), the tokenizer is the same
    s0, first = load_checkpoint(straight / "snapshots" / "step-000000"), load_checkpoint(start)
    for (name, a), b in zip(first.model.state_dict().items(), s0.model.state_dict().values(), strict=True):
        torch.testing.assert_close(a.half().float(), b, rtol=0, atol=0, msg=name)
    assert s0.tokenizer.files() == first.tokenizer.files()
    size = (straight / "snapshots" / "step-000002" / "model.safetensors").stat().st_size
    assert size < 0.6 * (straight / "model.safetensors").stat().st_size
    final = load_checkpoint(straight)
    assert final.card["init_from"]["path"] == str(start) and final.card["init_from"]["step"] == 3
    assert final.card["train_config"]["init_from"] == str(start)
    # stopped after step 4 and resumed: the same weights as the straight run
    out = tmp_path / "resumed"
    assert stopped_run(cfg, out, 4)["stopped"]
    Trainer(cfg, out).train()
    resumed = load_checkpoint(out)
    assert resumed.card["init_from"]["path"] == str(start)
    for k, v in final.model.state_dict().items():
        torch.testing.assert_close(v, resumed.model.state_dict()[k], rtol=0, atol=0)
    with pytest.raises(TrainingError, match="init_from"):
        Trainer(dataclasses.replace(cfg, init_from="no/such/folder"), tmp_path / "bad").train()


def test_en_fr_preset_continues_the_default_on_everyday_text():
    cfg = PRESETS["en-fr"]
    assert cfg.init_from == "checkpoints/real-kde-align" and cfg.snapshot_dtype == "float16"
    assert {"everyday", "everyday_words"} <= set(cfg.real_data) and dict(cfg.real_repeat)["everyday"] > 1
    assert len(cfg.snapshot_steps) <= 2 and cfg.align_pronoun == PRESETS["real-kde-align"].align_pronoun
    assert cfg.corpus.variant_share > 0  # the coreference corpus, typed variants included
    card = load_checkpoint(real.DATA_DIR.parents[2] / cfg.init_from).card
    assert card["train_config"]["model_overrides"] == cfg.model_overrides


@pytest.mark.slow  # trains
def test_the_cards_vocabulary_counts_a_repeated_corpus_once(tmp_path):
    """The unseen- and rare-word notes read the card's vocabulary: the everyday words are in it, counted once
    however much real_repeat weights them."""
    cfg = dataclasses.replace(TINY, steps=1, snapshot_steps=(), real_data=("everyday_words",))
    once, thrice = tmp_path / "once", tmp_path / "thrice"
    Trainer(cfg, once).train()
    Trainer(dataclasses.replace(cfg, real_repeat=(("everyday_words", 3),)), thrice).train()
    a, b = load_checkpoint(once).card["vocabulary"], load_checkpoint(thrice).card["vocabulary"]
    assert a["rare"] == b["rare"] and "sofa" in a["rare"]
    from transformer.vocabulary import Vocabulary

    vocab = Vocabulary.from_card_entry(b)
    assert vocab.unseen("the sofa") == [] and ("sofa", a["rare"]["sofa"]) in vocab.rare_in("the sofa")
