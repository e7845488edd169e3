"""Real parallel text: extraction from tiny HTML pages (no apt), the split by page, the committed files."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from transformer.corpus import manuals, real
from transformer.corpus.manuals import align_by_anchor, align_by_id, align_in_order, extract_pages
from transformer.corpus.real import (
    RealCorpusError,
    RealPair,
    load_real,
    page_split,
    read_pairs,
    sentence_like,
    split_by_page,
    write_pairs,
)

LO_EN = {
    "text/shared/find.html": """<html><head><title>Find</title><script>var x = "<p id='par_id9'>no</p>";</script></head>
<body><div id="DisplayArea">
<h1 id="hd_id701" dir="auto">Find Bar</h1>
<p id="par_id3147762" class="paragraph">The <span class="menuitem">Find</span> toolbar can be used to
  quickly search the contents of documents.</p>
<p id="par_id211" dir="auto">Use the shortcut <span class="switchinline"><span hidden="true" class="MAC">
  <span class="keycode">Command</span></span><span hidden="true"><span class="keycode">Ctrl</span></span></span>
  <span class="keycode">+ F</span> to open the toolbar.</p>
<p id="par_id500">Only in English.</p>
<img src="x.svg" alt="an icon">
</div></body></html>""",
    "text/shared/select.html": """<html><body>
<p id="par_id1">Select the file that you want to open.</p><p id="par_id2">The selected file opens.</p>
</body></html>""",
}
LO_FR = {
    "text/shared/find.html": """<html><body><div id="DisplayArea">
<h1 id="hd_id701" dir="auto">Barre Rechercher</h1>
<p id="par_id211" dir="auto">Utilisez le raccourci <span class="switchinline"><span hidden="true" class="MAC">
  <span class="keycode">Commande</span></span><span hidden="true"><span class="keycode">Ctrl</span></span></span>
  <span class="keycode">+ F</span> pour ouvrir la barre d'outils.</p>
<p id="par_id3147762" class="paragraph">La barre d'outils <span class="menuitem">Rechercher</span> peut être
  utilisée pour rechercher rapidement du contenu dans les documents.</p>
</div></body></html>""",
    "text/shared/select.html": """<html><body>
<p id="par_id1">Sélectionnez le fichier que vous voulez ouvrir.</p><p id="par_id2">Le fichier sélectionné s'ouvre.</p>
</body></html>""",
}


def _write(root: Path, pages: dict[str, str]) -> Path:
    for rel, html in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(html, encoding="utf-8")
    return root


def test_libreoffice_pages_align_by_id_not_by_order(tmp_path):
    en, fr = _write(tmp_path / "en", LO_EN), _write(tmp_path / "fr", LO_FR)
    pairs = list(extract_pages(en, fr, "libreoffice"))
    assert [(p.page, p.src, p.tgt) for p in pairs] == [
        ("text/shared/find.html", "Find Bar", "Barre Rechercher"),
        (
            "text/shared/find.html",
            "The Find toolbar can be used to quickly search the contents of documents.",
            "La barre d'outils Rechercher peut être utilisée pour rechercher rapidement du contenu dans les documents.",
        ),
        # the hidden MAC variant is dropped, the default (hidden, no class) kept; whitespace collapsed
        (
            "text/shared/find.html",
            "Use the shortcut Ctrl + F to open the toolbar.",
            "Utilisez le raccourci Ctrl + F pour ouvrir la barre d'outils.",
        ),
        (
            "text/shared/select.html",
            "Select the file that you want to open.",
            "Sélectionnez le fichier que vous voulez ouvrir.",
        ),
        ("text/shared/select.html", "The selected file opens.", "Le fichier sélectionné s'ouvre."),
    ]
    assert all(p.source == "libreoffice" for p in pairs)  # "Only in English." has no French: left out


def test_repeated_ids_pair_by_occurrence():
    en = '<p id="par_id1">One.</p><p id="par_id1">Two words here.</p>'
    fr = '<p id="par_id1">Un.</p><p id="par_id1">Deux mots ici.</p>'
    assert align_by_id(en, fr) == [("One.", "Un."), ("Two words here.", "Deux mots ici.")]


def test_in_order_pages_need_equal_counts_and_split_sentences():
    en = '<div class="para">First sentence here. Second one follows.</div><pre>code</pre><div class="para">Last.</div>'
    fr = '<div class="para">Première phrase ici. La seconde suit.</div><pre>code</pre><div class="para">Fin.</div>'
    assert align_in_order(en, fr, "handbook") == [
        ("First sentence here.", "Première phrase ici."),
        ("Second one follows.", "La seconde suit."),
        ("Last.", "Fin."),
    ]
    assert align_in_order(en, '<div class="para">Une seule.</div>', "handbook") == []  # counts differ: none
    assert align_in_order("<p>Open the image.</p>", "<p>Ouvrez l'image.</p>", "gimp") == [
        ("Open the image.", "Ouvrez l'image.")
    ]
    with pytest.raises(ValueError):
        align_in_order(en, fr, "wiki")


GLOSSARY_EN = """<div class="glossary"><dl>
<dt><a id="glossary-alpha"></a><span class="glossterm">Alpha</span><a id="idm51076" class="indexterm"></a></dt>
<dd><p>An alpha value indicates the transparency of a pixel.</p></dd>
<dt><a id="glossary-feathering"></a><span class="glossterm">Feathering</span><a id="idm51090"></a></dt>
<dd><p>Feathering softens the edges of a selection.</p><p>Brushes can also have feathered edges.</p></dd>
</dl></div>
<div class="sect1"><h2><a id="gimp-tips"></a>Tips</h2><p>Save your work often.</p><p>Only in English.</p></div>"""
GLOSSARY_FR = """<div class="glossary"><dl>
<dt><a id="glossary-feathering"></a><span class="glossterm">Adoucir</span><a id="idm50647" class="indexterm"></a></dt>
<dd><p>Adoucir estompe les bords d’une sélection.</p><p></p>
<p>Les brosses peuvent aussi avoir des bords adoucis.</p></dd>
<dt><a id="glossary-alpha"></a><span class="glossterm">Alpha</span><a id="idm50660"></a></dt>
<dd><p>La valeur alpha indique la transparence d’un pixel.</p></dd>
</dl></div>
<div class="sect1"><h2><a id="gimp-tips"></a>Astuces</h2><p>Enregistrez souvent votre travail.</p></div>"""


def test_gimp_pages_align_section_by_section_by_their_stable_ids():
    # each language sorts its glossary by its own terms, so the whole page in order pairs wrong entries
    # (same counts, once the empty <p> is dropped); the ids pair them right, DocBook's generated
    # idm… ids anchor nothing, and a section whose counts differ loses only its own pairs
    shifted = align_in_order(GLOSSARY_EN, GLOSSARY_FR.replace("<p>Enregistrez", "<p>x</p><p>Enregistrez"), "gimp")
    alpha = "An alpha value indicates the transparency of a pixel."
    assert shifted[0] == (alpha, "Adoucir estompe les bords d’une sélection.")
    assert align_by_anchor(GLOSSARY_EN, GLOSSARY_FR) == [
        (alpha, "La valeur alpha indique la transparence d’un pixel."),
        ("Feathering softens the edges of a selection.", "Adoucir estompe les bords d’une sélection."),
        ("Brushes can also have feathered edges.", "Les brosses peuvent aussi avoir des bords adoucis."),
    ]
    assert manuals.paragraphs_by_anchor(GLOSSARY_EN)["gimp-tips"] == ["Save your work often.", "Only in English."]


def test_gimp_extraction_aligns_by_anchor_unless_told_otherwise(tmp_path):
    en = _write(tmp_path / "en", {"glossary.html": GLOSSARY_EN})
    fr = _write(tmp_path / "fr", {"glossary.html": GLOSSARY_FR})
    pairs = list(extract_pages(en, fr, "gimp"))
    assert [p.tgt for p in pairs][:1] == ["La valeur alpha indique la transparence d’un pixel."]
    assert {p.page for p in pairs} == {"glossary.html"}
    assert list(extract_pages(en, fr, "gimp", by_anchor=False)) == []  # 5 paragraphs against 4: the page is lost


def _mo(messages: dict[str, str], order: str = "<") -> bytes:
    """A gettext .mo file holding messages (its documented layout: header, two tables, the strings)."""
    import struct

    keys = sorted(messages)
    ids = b"".join(k.encode() + b"\0" for k in keys)
    strs = b"".join(messages[k].encode() + b"\0" for k in keys)
    n, start = len(keys), 28 + 16 * len(keys)
    table_o, table_t, pos = [], [], start
    for k in keys:
        table_o.append((len(k.encode()), pos))
        pos += len(k.encode()) + 1
    for k in keys:
        table_t.append((len(messages[k].encode()), pos))
        pos += len(messages[k].encode()) + 1
    head = struct.pack(order + "7I", 0x950412DE, 0, n, 28, 28 + 8 * n, 0, 0)
    body = b"".join(struct.pack(order + "2I", *t) for t in table_o + table_t)
    return head + body + ids + strs


def test_catalogue_pairs_read_a_mo_file_without_gettext():
    import gettext
    import io

    messages = {
        "": "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n",
        "_Open Layer": "_Ouvrir le calque",
        "layers dock\x04Merge &Down": "&Fusionner vers le bas",
        "Brush size": "Taille de la brosse",
        "Saved %d images": "%d images enregistrées",  # a format directive: skipped
        "<b>Bold</b> text": "Texte en <b>gras</b>",  # markup: skipped
        "Untranslated": "",
        "Rock & Roll": "Rock & Roll",  # the same on both sides: skipped
    }
    data = _mo(messages)
    assert real.read_catalogue(data) == {k: v for k, v in messages.items() if k}
    ours = real.read_catalogue(data)
    theirs = gettext.GNUTranslations(io.BytesIO(data))._catalog  # the standard library agrees
    assert all(theirs[k] == v for k, v in ours.items() if v)
    pairs = real.catalogue_pairs(data, "krita-l10n/krita.mo")
    assert [(p.src, p.tgt) for p in pairs] == [
        ("Brush size", "Taille de la brosse"),
        ("Open Layer", "Ouvrir le calque"),
        ("Merge Down", "Fusionner vers le bas"),
    ]
    assert {p.source for p in pairs} == {"ui"} and {p.page for p in pairs} == {"krita-l10n/krita.mo"}
    big_endian = _mo({"Brush size": "Taille de la brosse"}, ">")
    assert real.read_catalogue(big_endian) == {"Brush size": "Taille de la brosse"}


@pytest.mark.parametrize(
    "data, match",
    [
        (b"", "too short"),
        (b"\x00" * 40, "magic"),
        (_mo({"Brush size": "Taille"})[:40], "outside the file"),  # cut inside the tables
        (_mo({"Brush size": "Taille"})[:-3], "outside the file"),  # cut inside a string
        (_mo({"Brush size": "Taille"})[:8] + b"\xff\xff\xff\x7f" + _mo({"Brush size": "Taille"})[12:], "more messages"),
        (_mo({"Brush size": "Taille"}).replace(b"Taille", b"Ta\xffle"), "UTF-8"),
    ],
)
def test_a_bad_catalogue_is_refused_with_its_reason(data, match):
    with pytest.raises(RealCorpusError, match=match):
        real.catalogue_pairs(data, "bad.mo")


def test_mallard_pages_align_in_order(tmp_path):
    page = """<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/" type="topic" id="files-select">
  <info><credit type="author"><name>Someone</name></credit><desc>{desc}</desc></info>
  <title>{title}</title>
  <p>{p1}</p>
  <steps><item><p>{p2}</p></item></steps>
</page>"""
    en = page.format(
        desc="Press Ctrl.",
        title="Select files by pattern",
        p1="You can select files in a folder. Press Ctrl+S.",
        p2="Type the pattern.",
    )
    fr = page.format(
        desc="Appuyez sur Ctrl.",
        title="Sélection de fichiers par motif",
        p1="Vous pouvez sélectionner des fichiers. Appuyez sur Ctrl+S.",
        p2="Saisissez le motif.",
    )
    for lang, text in (("C", en), ("fr", fr)):
        (tmp_path / lang).mkdir()
        (tmp_path / lang / "files-select.page").write_text(text, encoding="utf-8")
    (tmp_path / "C" / "only-english.page").write_text(en, encoding="utf-8")
    pairs = list(extract_pages(tmp_path / "C", tmp_path / "fr", "gnome"))
    assert [(p.src, p.tgt) for p in pairs] == [
        ("Select files by pattern", "Sélection de fichiers par motif"),
        ("You can select files in a folder.", "Vous pouvez sélectionner des fichiers."),
        ("Press Ctrl+S.", "Appuyez sur Ctrl+S."),
        ("Type the pattern.", "Saisissez le motif."),
    ]
    assert {p.page for p in pairs} == {"files-select.page"} and {p.source for p in pairs} == {"gnome"}


def test_sentence_like():
    assert sentence_like("The selected file opens in a new window.", "Le fichier sélectionné s'ouvre.")
    assert not sentence_like("Find Bar", "Barre Rechercher")  # a heading
    assert not sentence_like("Use the same text here.", "Use the same text here.")  # untranslated
    assert not sentence_like("=SUM(A1;B2;C3;D4) returns 10.", "=SOMME(A1;B2;C3;D4) renvoie 10.")  # a formula
    # a French page left in English, but for its quotes (the GIMP manual's licence and appendix)
    redo = "An alternate version of Redo is “Strong Redo”, which skips changes in visibility of layers."
    assert not sentence_like(redo, redo.replace("“", "« ").replace("”", " »"))
    assert real.reads_as_english("You must set the editor for :")
    assert not real.reads_as_english("Vous devez choisir l’éditeur de la page : Kate, par exemple.")


def test_split_is_by_page_and_held_out_pages_share_nothing_with_training():
    pairs = [
        RealPair(
            "libreoffice",
            f"text/p{i}.html",
            f"Sentence number {i % 40} of page {i} here.",
            f"Phrase numéro {i % 40} de la page {i} ici.",
        )
        for i in range(400)
    ] + [
        # the same English on many pages: kept once in training, never in a held-out split
        RealPair("libreoffice", f"text/p{i}.html", "Click the OK button to close the dialog.", "Cliquez sur OK.")
        for i in range(400)
    ]
    splits = split_by_page(pairs, dev_share=0.1, test_share=0.1)
    pages = {s: {p.page for p in v} for s, v in splits.items()}
    assert pages["train"] and pages["dev"] and pages["test"]
    assert not (pages["train"] & pages["test"]) and not (pages["train"] & pages["dev"])
    assert not (pages["dev"] & pages["test"])
    for s, v in splits.items():  # each page went wholly to the split its hash names
        assert all(page_split(p.source, p.page, 0.1, 0.1) == s for p in v)
    train_src = {p.src for p in splits["train"]}
    assert not any(p.src in train_src for p in splits["test"] + splits["dev"])
    assert sum(p.src == "Click the OK button to close the dialog." for p in splits["train"]) == 1
    # the hash depends on the page alone: the same page always lands in the same split
    assert page_split("libreoffice", "text/p7.html") == page_split("libreoffice", "text/p7.html")


def test_write_read_roundtrip_and_bad_files(tmp_path):
    rows = [("train", RealPair("handbook", "a.html", "Hello there, world.", "Bonjour à tous."))]
    path = tmp_path / "x.tsv.gz"
    assert write_pairs(path, rows) == 1
    first = path.read_bytes()
    write_pairs(path, rows)
    assert path.read_bytes() == first  # byte-for-byte reproducible (no timestamp in the gzip header)
    assert read_pairs(path) == [rows[0][1]] and read_pairs(path, "test") == []
    bad = tmp_path / "bad.tsv.gz"
    bad.write_bytes(gzip.compress(b"source\tpage\n"))
    with pytest.raises(RealCorpusError, match="header"):
        read_pairs(bad)
    bad.write_bytes(b"not gzip")
    with pytest.raises(RealCorpusError, match="cannot read"):
        read_pairs(bad)


def test_application_help_aligns_mallard_and_docbook_pages_per_application(tmp_path):
    mallard = '<page xmlns="http://projectmallard.org/1.0/"><title>{t}</title><p>{p}</p></page>'
    docbook = "<chapter><title>{t}</title><para>{p}</para><sect1><para>{q}</para></sect1></chapter>"
    pages = {
        "eog/zoom.page": (
            mallard.format(t="Zoom in", p="Press the plus key to zoom in."),
            mallard.format(t="Zoomer", p="Appuyez sur la touche plus pour zoomer."),
        ),
        "mate-user-guide/gosbasic.xml": (
            docbook.format(t="Basic skills", p="Click the menu.", q="Drag the window."),
            docbook.format(t="Compétences de base", p="Cliquez sur le menu.", q="Faites glisser la fenêtre."),
        ),
        # the desktop's own help is the "gnome" corpus, not an application's
        "gnome-help/files.page": (mallard.format(t="Files", p="Open it."), mallard.format(t="Fichiers", p="Ouvrez.")),
    }
    for rel, (en, fr) in pages.items():
        for lang, text in ((real.HELP_EN, en), (real.HELP_FR, fr)):
            path = tmp_path / lang / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    (tmp_path / real.HELP_EN / "eog" / "english-only.page").write_text(mallard.format(t="A", p="B."), encoding="utf-8")
    (tmp_path / real.HELP_EN / "eog" / "figures").mkdir()  # not a page
    pairs = list(manuals.extract_help(tmp_path))
    assert [(p.page, p.src, p.tgt) for p in pairs] == [
        ("eog/zoom.page", "Zoom in", "Zoomer"),
        ("eog/zoom.page", "Press the plus key to zoom in.", "Appuyez sur la touche plus pour zoomer."),
        ("mate-user-guide/gosbasic.xml", "Basic skills", "Compétences de base"),
        ("mate-user-guide/gosbasic.xml", "Click the menu.", "Cliquez sur le menu."),
        ("mate-user-guide/gosbasic.xml", "Drag the window.", "Faites glisser la fenêtre."),
    ]
    assert {p.source for p in pairs} == {"apps"}
    assert list(manuals.extract_help(tmp_path / "no-help-here")) == []


def _cache(pages: dict[str, str]) -> bytes:
    import bz2

    return bz2.compress("".join(f'<FILENAME filename="{n}">{h}</FILENAME>' for n, h in pages.items()).encode())


def test_kde_handbooks_align_the_pages_of_both_caches_in_order(tmp_path):
    page = "<html><body><h1>{t}</h1><p>{p}</p><td><p>{q}</p></td><div id='footer_text'>{t}</div></body></html>"
    en = {
        "tool-brush.html": page.format(t="Brush", p="Click and drag to draw freehand.", q="Hold Shift."),
        "english-only.html": page.format(t="New", p="Not translated yet.", q="None."),
        # a page whose French lost a paragraph aligns nothing (the in-order rule)
        "uneven.html": "<p>One.</p><p>Two.</p>",
    }
    fr = {
        "tool-brush.html": page.format(t="Brosse", p="Cliquez-glissez pour dessiner à main levée.", q="Maintenez Maj."),
        "uneven.html": "<p>Un et deux.</p>",
    }
    for lang, pages in ((real.KDE_EN, en), (real.KDE_FR, fr)):
        (tmp_path / lang / "kolourpaint").mkdir(parents=True)
        (tmp_path / lang / "kolourpaint" / "index.cache.bz2").write_bytes(_cache(pages))
    (tmp_path / real.KDE_EN / "okular").mkdir()  # no French twin: skipped
    (tmp_path / real.KDE_EN / "okular" / "index.cache.bz2").write_bytes(_cache({"a.html": "<p>Open.</p>"}))
    pairs = list(manuals.extract_kde(tmp_path))
    assert [(p.source, p.page, p.src, p.tgt) for p in pairs] == [
        (
            "kde",
            "kolourpaint/tool-brush.html",
            "Click and drag to draw freehand.",
            "Cliquez-glissez pour dessiner à main levée.",
        ),
        ("kde", "kolourpaint/tool-brush.html", "Hold Shift.", "Maintenez Maj."),
    ]
    assert manuals.cache_pages(_cache(en)).keys() == en.keys()
    assert list(manuals.extract_kde(tmp_path / "no-handbook-here")) == []


def test_committed_corpus():
    files = real.real_files()
    french = {"libreoffice", "handbook", "gnome", "apps", "kde", "ui", "gimp", "everyday", "everyday_words"}
    french |= {"games", "objects", "dialogue", "stories", "tatoeba", "public_tests"}
    chinese = {"zh/tatoeba", "zh/public_tests"}
    chinese |= {"zh/libreoffice", "zh/everyday", "zh/gimp", "zh/gnome", "zh/apps", "zh/ui", "zh/objects"}  # → Chinese
    chinese |= {"zh/docs", "zh/guides", "zh/tutorials", "zh/office_ui", "zh/itil", "zh/kicad", "zh/graphics"}
    assert set(files) == french | chinese
    assert all(p.stat().st_size < 30 * 2**20 for p in files.values())
    test = load_real("test")
    train = load_real("train")
    assert len(train) > 30000 and 500 < len(test) < 3000
    assert not {s for s, _ in test} & {s for s, _ in train}
    gimp = read_pairs(files["gimp"])
    assert len(gimp) > 1000 and all(p.source == "gimp" for p in gimp)
    assert load_real("train", ("gimp",)) == []  # the out-of-source set has no training split
    assert not {p.src for p in gimp} & {s for s, _ in train}
    # aligned section by section: the glossary's entries pair by their ids (each language sorts its own
    # terms), and no French side is a page the French edition left in English
    gimp_fr = {p.src: p.tgt for p in gimp}
    assert gimp_fr["An Alpha value indicates the transparency of a pixel."] == "L’Alpha se rapporte à la transparence."
    assert not [p for p in gimp if real.reads_as_english(p.tgt)]
    # the sources added later: GNOME's help split by page, the editors' catalogues training only; none
    # of their training English is a held-out sentence of the manuals or of the GIMP manual
    added = load_real("train", ("gnome", "apps", "kde", "ui"))
    assert len(added) > 40000 and load_real("test", ("ui",)) == [] and load_real("test", ("gnome",))
    apps = read_pairs(files["apps"])
    assert len({p.page.split("/")[0] for p in apps}) > 50 and load_real("test", ("apps",))
    assert not {p.page.split("/")[0] for p in apps} & {"gnome-help"}
    kde = read_pairs(files["kde"])
    assert len({p.page.split("/")[0] for p in kde}) > 80 and load_real("test", ("kde",))
    # the KDE handbooks' held-out pages share no English with any source's training split
    assert not {s for s, _ in load_real("test", ("kde",)) + load_real("dev", ("kde",))} & {s for s, _ in train + added}
    heldout = {s for s, _ in test + load_real("dev")} | {p.src for p in gimp}
    assert not heldout & {s for s, _ in added}
    assert {p.page for p in read_pairs(files["ui"])} == {
        "inkscape/inkscape.mo",
        "krita-l10n/krita.mo",
        "darktable/darktable.mo",
        "digikam-data/digikam.mo",
    }
    assert (real.DATA_DIR / "LICENCES.md").is_file() and "MPL-2.0" in (real.DATA_DIR / "LICENCES.md").read_text()
    with pytest.raises(RealCorpusError, match="no committed corpus"):
        load_real("train", ("wikipedia",))


def test_mixed_training_set_vocabulary_counts_rare_words():
    from transformer.corpus import CorpusSpec, generate
    from transformer.vocabulary import Vocabulary, training_vocabulary

    train = generate(CorpusSpec(n_examples=200))[0] + [("The selected file opens.", "x"), ("The selected cell.", "y")]
    vocab = training_vocabulary(train)
    assert vocab.unseen("The selected zebra opens") == ["zebra"]
    assert vocab.rare_in("the selected file opens the dog") == [("selected", 2), ("file", 1), ("opens", 1)]
    assert "dog" in vocab.classes["animals"]
    assert Vocabulary.from_card_entry(vocab.to_card()) == vocab


def test_training_summary_from_a_card():
    from transformer.inspection.training_data import Scores, Session, real_data_entry, training_summary

    entry = real_data_entry(("libreoffice", "handbook"), real.DATA_DIR / "MANIFEST.json")
    assert entry["libreoffice"]["packages"] == {
        "libreoffice-help-en-us": "4:7.4.7-1+deb12u14",
        "libreoffice-help-fr": "4:7.4.7-1+deb12u14",
    }
    assert entry["handbook"]["licence"].startswith("GPL-2.0-or-later or CC-BY-SA-3.0")
    card = {
        "train_config": {
            "real_data": ["libreoffice", "handbook"],
            "corpus": {"n_examples": 40000, "variant_share": 0.4},
        },
        "real_data": entry,
        "step": 900,
        "wall_time_s": 3600.0,
    }
    s = training_summary(card)
    assert (s.generated, s.variant_share, s.steps, s.minutes) == (40000, 0.4, 900, 60.0)
    assert s.sessions == (Session("cpu", 60.0, 900),)  # a card without sessions: its one run
    # a card continued in several sessions: the kept ones, each where it ran
    sessions = [
        {"kept": False, "device": "cuda", "minutes": 4.0, "steps": [0, 133]},
        {"kept": True, "device": "cuda", "minutes": 4.0, "steps": [0, 3938]},
        {"kept": True, "device": "cpu", "minutes": 90.0, "steps": [3938, 8410], "threads": 2},
        {"kept": True, "device": "tpu", "minutes": 1.0, "steps": [8410, 8411]},  # unknown: skipped
    ]
    many = training_summary({**card, "sessions": sessions, "device": "cuda"})
    assert many.sessions == (Session("cuda", 4.0, 3938), Session("cpu", 90.0, 4472, 2)) and many.minutes == 94.0
    # weights averaged from several steps (python -m transformer average): those steps; a malformed record: none
    assert s.averaged == ()
    averaged = [{"name": "step-00700", "step": 700}, {"name": "tiny", "step": 900}]
    assert training_summary({**card, "averaged_from": averaged}).averaged == (700, 900)
    assert training_summary({**card, "averaged_from": [{"step": "700"}, 3]}).averaged == ()
    assert s.real_pairs == entry["libreoffice"]["pairs"] + entry["handbook"]["pairs"] > 40000
    assert [r.name for r in s.real] == ["handbook", "libreoffice"]
    # not a real-text card, or a damaged one: nothing, or what can be read
    assert training_summary({"train_config": {"corpus": {}}}) is None
    assert training_summary("nonsense") is None
    damaged = training_summary({**card, "real_data": {"x": {"pairs": "many", "packages": 3}}, "step": None})
    assert damaged.real[0].pairs == 0 and damaged.real[0].packages == () and damaged.steps == 0
    # numbers JSON allows but Python cannot hold as they are (json.loads reads NaN, Infinity, 10**400): read as 0
    hostile = json.loads('{"pairs": NaN, "pages": Infinity, "licence": "x"}')
    broken = training_summary({**card, "real_data": {"x": hostile}, "step": 10**400, "wall_time_s": -math.inf})
    assert (broken.real[0].pairs, broken.real[0].pages, broken.steps, broken.minutes) == (0, 0, 0, 0.0)
    assert (
        training_summary({**card, "real_coref": {"real": {"chrf": math.nan}, "gimp": {"chrf": 10**400}}}).scores is None
    )
    # the figures on text never trained on: greedy, and under the card's beam search when it was measured
    assert s.scores is None
    greedy = {"real": {"chrf": 58.62}, "gimp": {"chrf": 43.69}}
    assert training_summary({**card, "real_coref": greedy}).scores == Scores(58.62, 43.69)
    beam = {"beam_size": 4, "alpha": 3.0, "real": {"chrf": 60.29}, "gimp": {"chrf": 45.02}}
    both = training_summary({**card, "real_coref": {**greedy, "beam": beam}}).scores
    assert both == Scores(58.62, 43.69, 60.29, 45.02, 4, 3.0)
    everyday = {
        "everyday_eval": {"everyday_test": {"chrf": 45.47}},
        "everyday_eval_beam": {"everyday_test": {"chrf": 47.92}},
    }
    assert training_summary({**card, "real_coref": {**greedy, "beam": beam}, **everyday}).scores == Scores(
        58.62, 43.69, 60.29, 45.02, 4, 3.0, 45.47, 47.92
    )
    assert training_summary({**card, "real_coref": {"real": {"chrf": "high"}}}).scores is None
    assert training_summary({**card, "real_coref": {**greedy, "beam": {"real": 3}}}).scores == Scores(58.62, 43.69)


def test_zh_scores_read_bleu_defensively():
    from transformer.inspection.training_data import Scores, zh_scores_of

    greedy = {"held_out": {"bleu": 37.96}, "gimp": {"bleu": 9.36}, "everyday_test": {"bleu": 11.38}}
    beam = {"held_out": {"bleu": 38.54}, "gimp": {"bleu": 10.21}, "everyday_test": {"bleu": 12.47}}
    card = {"zh_eval": greedy, "zh_eval_beam": beam, "decoding": {"beam_size": 4, "alpha": 4.0}}
    assert zh_scores_of(card) == Scores(37.96, 9.36, 38.54, 10.21, 4, 4.0, 11.38, 12.47)
    assert zh_scores_of({"zh_eval": greedy}) == Scores(37.96, 9.36, everyday=11.38)  # no beam measured
    assert zh_scores_of({}) is None and zh_scores_of({"zh_eval": {"held_out": {"bleu": "high"}}}) is None
    assert zh_scores_of({"zh_eval": greedy, "zh_eval_beam": "broken", "decoding": 3}).beam_held_out is None
