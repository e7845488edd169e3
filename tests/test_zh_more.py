"""More English → 简体中文 sources (issue 34, after the en-zh checkpoint): the French extractors read with a zh_CN
twin (GNOME / MATE help, KDE handbooks), the zh_CN interface catalogues, the build script's three new files (the
earlier three unchanged byte for byte) and the en-zh-more preset, on tiny fixtures with Chinese text."""

from __future__ import annotations

import bz2
import importlib.util

import pytest
from test_real_corpus import _mo

from transformer.corpus import chinese as C
from transformer.corpus import chinese_docs as D
from transformer.corpus import everyday as E
from transformer.corpus import manuals, real
from transformer.layout import REPO_ROOT
from transformer.training import PRESETS

MALLARD = """<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/" type="topic" id="t">
  <info><desc>{d}</desc></info>
  <title>{t}</title>
  <p>{p}</p>
</page>"""
DOCBOOK = "<article><sect1><title>{t}</title><para>{p}</para></sect1></article>"


def _write(root, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- help pages with a zh_CN twin
def test_gnome_help_pages_align_in_order_and_cut_chinese_sentences(tmp_path):
    _write(
        tmp_path,
        f"{real.GNOME_EN}/mouse-doubleclick.page",
        MALLARD.format(
            d="Set the speed.", t="Adjust the double-click speed", p="Open the Activities overview. Click Mouse."
        ),
    )
    _write(
        tmp_path,
        f"{C.GNOME_ZH}/mouse-doubleclick.page",
        MALLARD.format(d="设置速度。", t="调整双击 速度", p="打开活动概览。点击鼠标。"),
    )
    _write(tmp_path, f"{real.GNOME_EN}/english-only.page", MALLARD.format(d="A.", t="B", p="C."))
    pairs = C.extract_gnome_zh(tmp_path)
    assert [(p.source, p.page, p.src, p.tgt) for p in pairs] == [
        ("gnome", "mouse-doubleclick.page", "Adjust the double-click speed", "调整双击速度"),  # 双击 速度: one word
        ("gnome", "mouse-doubleclick.page", "Open the Activities overview.", "打开活动概览。"),  # cut at 。
        ("gnome", "mouse-doubleclick.page", "Click Mouse.", "点击鼠标。"),
    ]


def test_application_help_reads_the_zh_cn_twin_of_mallard_and_docbook(tmp_path):
    pages = {
        "eog/zoom.page": (
            MALLARD.format(d="x", t="Zoom in", p="Press the plus key to zoom in."),
            MALLARD.format(d="x", t="放大", p="按加号键放大。"),
        ),
        "mate-user-guide/gosbasic.xml": (
            DOCBOOK.format(t="Basic skills", p="Click the menu. Drag the window."),
            DOCBOOK.format(t="基本技能", p="点击菜单。拖动窗口。"),
        ),
        "gnome-help/files.page": (
            MALLARD.format(d="x", t="Files", p="Open it."),
            MALLARD.format(d="x", t="文件", p="打开。"),
        ),
    }
    for rel, (en, zh) in pages.items():
        _write(tmp_path, f"{real.HELP_EN}/{rel}", en)
        _write(tmp_path, f"usr/share/help/zh_CN/{rel}", zh)
        _write(tmp_path, f"{real.HELP_FR}/{rel}", en.replace("Zoom in", "Zoomer"))  # French is not read
    pairs = C.extract_help_zh(tmp_path)
    assert [(p.page, p.src, p.tgt) for p in pairs] == [
        ("eog/zoom.page", "Zoom in", "放大"),
        ("eog/zoom.page", "Press the plus key to zoom in.", "按加号键放大。"),
        ("mate-user-guide/gosbasic.xml", "Basic skills", "基本技能"),
        ("mate-user-guide/gosbasic.xml", "Click the menu.", "点击菜单。"),
        ("mate-user-guide/gosbasic.xml", "Drag the window.", "拖动窗口。"),
    ]
    assert {p.source for p in pairs} == {"apps"}  # gnome-help is the "gnome" corpus
    # the French default is unchanged: the same tree read for French gives the French twin
    assert [p.tgt for p in manuals.extract_help(tmp_path)][:1] == ["Zoomer"]
    assert C.extract_help_zh(tmp_path / "no-help-here") == []


def test_kde_handbooks_read_the_zh_cn_cache(tmp_path):
    def cache(pages: dict[str, str]) -> bytes:
        return bz2.compress("".join(f'<FILENAME filename="{n}">{h}</FILENAME>' for n, h in pages.items()).encode())

    for lang, p in (
        (real.KDE_EN, "<p>Type the name of the file. Press Enter.</p>"),
        ("usr/share/doc/HTML/zh_CN", "<p>输入文件名。按回车键。</p>"),
    ):
        (tmp_path / lang / "kfind").mkdir(parents=True)
        (tmp_path / lang / "kfind" / "index.cache.bz2").write_bytes(cache({"using-kfind.html": p}))
    assert [(p.source, p.page, p.src, p.tgt) for p in C.extract_kde_zh(tmp_path)] == [
        ("kde", "kfind/using-kfind.html", "Type the name of the file.", "输入文件名。"),
        ("kde", "kfind/using-kfind.html", "Press Enter.", "按回车键。"),
    ]
    assert list(manuals.extract_kde(tmp_path)) == []  # no French twin


# ---------------------------------------------------------------- interface catalogues
def test_interface_messages_lose_accelerators_labels_and_placeholders():
    assert C.interface_pairs_zh("_Reuse the active window", "重用活动窗口(_R)") == [
        ("Reuse the active window", "重用活动窗口")
    ]
    assert C.interface_pairs_zh("&Open the file", "打开文件（&O）") == [
        ("Open the file", "打开文件")
    ]  # KDE's &, full-width
    assert C.interface_pairs_zh("menu\x04Save the image", "保存图像") == [
        ("Save the image", "保存图像")
    ]  # context dropped
    assert C.interface_pairs_zh("User name", "用户名(_)") == [("User name", "用户名")]
    assert C.interface_pairs_zh("Stop loading", "停止载入", min_words=3) == []  # a bare label
    assert C.interface_pairs_zh("Could not open %s", "无法打开 %s") == []  # a format directive
    assert C.interface_pairs_zh("Show the grid", "Show the grid") == []  # untranslated
    assert C.interface_pairs_zh("Pause the game. Resume it later.", "暂停游戏。稍后继续。") == [
        ("Pause the game.", "暂停游戏。"),
        ("Resume it later.", "稍后继续。"),
    ]


def test_catalogues_of_a_package_are_read_by_file(tmp_path):
    folder = tmp_path / C.CATALOGUES_ZH
    folder.mkdir(parents=True)
    (folder / "gedit.mo").write_bytes(
        _mo({"_Save the document": "保存文档(_S)", "Cyan": "青色", "Replace all %d matches": "替换全部 %d 处"})
    )
    (folder / "gedit-plugins.mo").write_bytes(_mo({"Sort the selected lines": "对选中的行排序"}))
    pairs = C.extract_catalogues_zh(tmp_path, "gedit-common")
    assert [(p.source, p.page, p.src, p.tgt) for p in pairs] == [
        ("ui", "gedit-common/gedit-plugins.mo", "Sort the selected lines", "对选中的行排序"),
        ("ui", "gedit-common/gedit.mo", "Save the document", "保存文档"),
    ]
    assert [p.src for p in C.extract_catalogues_zh(tmp_path, "gedit-common", min_words=1)] == [
        "Sort the selected lines",
        "Cyan",
        "Save the document",
    ]


# ---------------------------------------------------------------- the build script and the preset
GIMP_EN = "Select the layer you want to move."


def _built_before(tmp_path):
    """The build script, loaded by path, run on 30 LibreOffice pages and one GIMP page (GIMP's English: "Select the
    layer you want to move."): (the module, the work folder, the versions, the folder it wrote)."""
    spec = importlib.util.spec_from_file_location("build_zh_corpus", REPO_ROOT / "scripts" / "build_zh_corpus.py")
    build_zh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_zh)
    work = tmp_path / "work"
    lo_en, lo_zh = (
        work / "libreoffice-help-en-us" / real.LIBREOFFICE_EN,
        work / "libreoffice-help-zh-cn" / C.LIBREOFFICE_ZH,
    )
    for i in range(30):
        _write(lo_en, f"text/p{i}.html", f'<p id="par_id{i}">Click the button number {i} to open it.</p>')
        _write(lo_zh, f"text/p{i}.html", f'<p id="par_id{i}">点击第{i}个按钮打开它。</p>')
    _write(
        work / "gimp-help-en" / real.GIMP_EN, "a.html", '<div id="s"><p>Select the layer you want to move.</p></div>'
    )
    _write(work / "gimp-help-zh-cn" / C.GIMP_ZH, "a.html", '<div id="s"><p>选择要移动的图层。</p></div>')
    versions = {p: "1" for p in build_zh.PACKAGES}
    before = tmp_path / "before"
    build_zh.build(work, before, versions)
    return build_zh, work, versions, before


def test_the_build_adds_gnome_apps_ui_and_leaves_the_earlier_files_as_they_were(tmp_path):
    build_zh, work, versions, before = _built_before(tmp_path)
    # now the new sources' packages: 30 GNOME pages, one application's help, two catalogues
    for i in range(30):
        _write(
            work / "gnome-user-docs" / real.GNOME_EN,
            f"p{i}.page",
            MALLARD.format(d="x", t=f"Topic number {i}", p=f"Open the settings panel number {i} now."),
        )
        _write(
            work / "gnome-user-docs" / C.GNOME_ZH,
            f"p{i}.page",
            MALLARD.format(d="x", t=f"第{i}个主题", p=f"现在打开第{i}个设置面板。"),
        )
    _write(
        work / "eog" / real.HELP_EN,
        "eog/zoom.page",
        MALLARD.format(d="x", t="Zoom in", p="Press the plus key to zoom in."),
    )
    _write(work / "eog" / "usr/share/help/zh_CN", "eog/zoom.page", MALLARD.format(d="x", t="放大", p="按加号键放大。"))
    (work / "eog" / C.CATALOGUES_ZH).mkdir(parents=True)
    (work / "eog" / C.CATALOGUES_ZH / "eog.mo").write_bytes(
        _mo({"Show the image gallery": "显示图片廊", "Select the layer you want to move.": "选择要移动的图层。"})
    )
    (work / "inkscape" / C.CATALOGUES_ZH).mkdir(parents=True)
    held = next(i for i in range(30) if real.page_split("libreoffice", f"text/p{i}.html") != "train")
    held_en = f"Click the button number {held} to open it."  # a held-out LibreOffice sentence: never trained on
    (work / "inkscape" / C.CATALOGUES_ZH / "inkscape.mo").write_bytes(_mo({held_en: f"点击第{held}个按钮打开它。"}))
    # the objects: a Cataclysm zh_CN catalogue (one message a held-out LibreOffice sentence) and a Tux Paint stamp
    catalogues = work / "cataclysm-dda-data" / E.OBJECT_CATALOGUES["cataclysm-dda-data"][1].format(lang="zh_CN")
    catalogues.mkdir(parents=True)
    (catalogues / "cataclysm-dda.mo").write_bytes(
        _mo({"A comfortable old sofa.": "一张舒适的旧沙发。", held_en: f"点击第{held}个按钮打开它。"})
    )
    stamps = work / E.STAMPS_PACKAGE / E.STAMPS / "animals"
    stamps.mkdir(parents=True)
    (stamps / "frog.txt").write_text("A frog.\nfr.utf8=Une grenouille.\nzh_CN.utf8=青蛙。\n", encoding="utf-8")
    after = tmp_path / "after"
    manifest = build_zh.build(work, after, versions)
    assert [(p.source, p.page, p.src, p.tgt) for p in real.read_pairs(after / "objects.tsv.gz")] == [
        ("cataclysm", "cataclysm-dda", "A comfortable old sofa.", "一张舒适的旧沙发。"),
        ("tuxpaint", "animals", "A frog.", "青蛙。"),
    ]  # training only, without the held-out sentence
    assert manifest["files"]["objects.tsv.gz"]["by_split"] == {"train": 2, "dev": 0, "test": 0}
    for name in ("libreoffice.tsv.gz", "everyday.tsv.gz", "gimp.tsv.gz"):  # the en-zh checkpoint's files
        assert (after / name).read_bytes() == (before / name).read_bytes()
    build_zh.build(work, tmp_path / "again", versions)
    assert all((after / n).read_bytes() == (tmp_path / "again" / n).read_bytes() for n in ("gnome.tsv.gz", "ui.tsv.gz"))
    gnome = {s: real.read_pairs(after / "gnome.tsv.gz", s) for s in real.SPLITS}
    for s, ps in gnome.items():  # whole pages, by the hash
        assert all(real.page_split("gnome", p.page) == s for p in ps)
    assert len(gnome["train"]) == 2 * len({p.page for p in gnome["train"]})  # a title and a sentence a page
    assert all(C.sentence_like_zh(p.src, p.tgt) for s in ("dev", "test") for p in gnome[s])  # no bare titles
    assert [(p.src, p.tgt) for p in real.read_pairs(after / "apps.tsv.gz")] == [
        ("Zoom in", "放大"),
        ("Press the plus key to zoom in.", "按加号键放大。"),
    ]
    ui = real.read_pairs(after / "ui.tsv.gz")
    # training only; neither GIMP's English nor LibreOffice's held-out English is trained on
    assert held_en in {p.src for s in ("dev", "test") for p in real.read_pairs(after / "libreoffice.tsv.gz", s)}
    assert [(p.page, p.src) for p in ui] == [("eog/eog.mo", "Show the image gallery")]
    assert manifest["files"]["ui.tsv.gz"]["by_split"] == {"train": 1, "dev": 0, "test": 0}
    assert (
        "gnome-user-docs" in manifest["packages"]
        and manifest["files"]["gnome.tsv.gz"]["licence"] == C.LICENCES["gnome"]
    )


def test_en_zh_more_preset_adds_the_new_corpora_to_en_zh():
    base, more = PRESETS["en-zh"], PRESETS["en-zh-more"]
    assert base.real_data == ("zh/libreoffice", "zh/everyday")  # unchanged: the first en-zh was trained on it
    assert more.real_data == (*base.real_data, "zh/gnome", "zh/apps", "zh/ui")
    assert set(more.real_data) <= set(real.real_files())
    # beside the corpora, only what a 300 s GPU run beside three others needed: no snapshot, a longer loop
    changed = {"real_data", "snapshot_steps", "time_limit_s"}
    assert more.snapshot_steps == () and more.time_limit_s == 300.0
    assert {f: getattr(more, f) for f in base.__dataclass_fields__ if f not in changed} == {
        f: getattr(base, f) for f in base.__dataclass_fields__ if f not in changed
    }
    # its rival in the same run: the first en-zh's weights and vocabularies continued on the same corpora
    cont = PRESETS["en-zh-continued"]
    assert cont.init_from == "checkpoints/en-zh" and cont.real_data == more.real_data
    # and its CPU continuation: the shipped weights, the same corpora, CPU-sized batches, resumable every 100 steps
    cpu = PRESETS["en-zh-cpu"]
    assert cpu.init_from == "checkpoints/en-zh" and cpu.real_data == more.real_data
    assert (cpu.batch_tokens, cpu.checkpoint_every, cpu.snapshot_steps) == (8000, 100, ())
    assert cpu.time_limit_s > 0
    # en-zh's second session: the CPU continuation with the everyday Chinese text beside the same five corpora
    objects = PRESETS["en-zh-objects"]
    assert objects.init_from == "checkpoints/en-zh" and objects.real_data == (*more.real_data, "zh/objects")
    assert (objects.batch_tokens, objects.checkpoint_every, objects.real_repeat) == (8000, 100, more.real_repeat)


def test_committed_zh_objects_corpus():
    files = real.real_files()
    train = real.read_pairs(files["zh/objects"])
    assert len(train) > 50000 and {p.source for p in train} == {"cataclysm", "gbrainy", "tuxpaint"}
    assert not [s for s in ("dev", "test") if real.read_pairs(files["zh/objects"], s)]
    heldout = {C.dedup_key(p.src) for s in ("dev", "test") for p in real.read_pairs(files["zh/libreoffice"], s)}
    heldout |= {C.dedup_key(p.src) for s in ("dev", "test") for p in real.read_pairs(files["zh/everyday"], s)}
    heldout |= {C.dedup_key(p.src) for p in real.read_pairs(files["zh/gimp"])}
    assert not {C.dedup_key(p.src) for p in train} & heldout
    assert all(C.reads_as_chinese(p.tgt) for p in train[:2000])


# ---------------------------------------------------------------- Debian's own documentation (zh/docs)
HANDBOOK_PAGE = '<html><body><div class="para">{a}</div><div class="para">{b}</div></body></html>'
REFERENCE_PAGE = '<html><body><div id="_{s}"><p>{a}</p></div><div id="_other"><p>{b}</p><p>{c}</p></div></body></html>'


def _docs_fixture(work, held_en: str = "") -> None:
    hb = work / "debian-handbook"
    for i in range(30):
        _write(hb / real.HANDBOOK_EN, f"p{i}.html", HANDBOOK_PAGE.format(a=f"Chapter {i} explains it.", b="Read it."))
        _write(hb / C.HANDBOOK_ZH, f"p{i}.html", HANDBOOK_PAGE.format(a=f"第{i}章解释了它。", b="读一读。"))
    _write(hb / real.HANDBOOK_EN, "uneven.html", HANDBOOK_PAGE.format(a="One paragraph.", b="Another one."))
    _write(hb / C.HANDBOOK_ZH, "uneven.html", '<div class="para">只有一段。</div>')  # counts differ: nothing
    en, zh = (work / name / C.REFERENCE_DIR for name in C.REFERENCE_PACKAGES)
    _write(en, "ch01.en.html", REFERENCE_PAGE.format(s="apt", a="Use apt to install packages.", b="B.", c="C."))
    # the second section has one paragraph fewer in Chinese: only the first section pairs
    _write(
        zh,
        "ch01.zh-cn.html",
        REFERENCE_PAGE.format(s="apt", a="用 apt 安装软件包。", b="二。", c="").replace("<p></p>", ""),
    )
    _write(en, "ch02.en.html", REFERENCE_PAGE.format(s="x", a=held_en or "Kept.", b="B.", c="C."))  # no zh-cn twin


def test_debian_docs_pair_the_handbook_in_order_and_the_reference_by_section(tmp_path):
    _docs_fixture(tmp_path)
    pairs = D.extract_debian_docs_zh(tmp_path)
    by_page = {}
    for p in pairs:
        by_page.setdefault(p.page, []).append((p.src, p.tgt))
    assert {p.source for p in pairs} == {"docs"}
    assert by_page["handbook/p3.html"] == [("Chapter 3 explains it.", "第3章解释了它。"), ("Read it.", "读一读。")]
    assert "handbook/uneven.html" not in by_page  # paragraph counts differ: the page gives nothing
    assert by_page["reference/ch01"] == [("Use apt to install packages.", "用 apt 安装软件包。")]
    assert "reference/ch02" not in by_page  # no Chinese twin
    assert len(pairs) == 2 * 30 + 1


SECTIONS = '<html><body><div id="{s}"><p>{a}</p></div><div id="{s}-2"><p>{b}</p></div></body></html>'


def _guides_fixture(work) -> None:
    """Every guide's layout: the Installation Guide's en/ and zh_CN/ folders, the Maintainers' Guide's and the
    FAQ's name.en.html beside name.zh-cn.html, the Edu manual's one page per language."""
    package, folder, en, zh = C.INSTALL_GUIDE
    for i in range(20):
        a, b = f"Step {i} boots the installer.", "It is done."
        _write(work / package / folder / en, f"ch{i:02}.html", SECTIONS.format(s=f"i{i}", a=a, b=b))
        _write(
            work / package / folder / zh,
            f"ch{i:02}.html",
            SECTIONS.format(s=f"i{i}", a=f"第{i}步启动安装程序。", b="完成了。"),
        )
    for prefix, ((en_pkg, en_dir), (zh_pkg, zh_dir)) in (("m", C.MAINT_GUIDE), ("f", C.FAQ)):
        a = f"The {prefix} guide explains packages."
        _write(work / en_pkg / en_dir, f"{prefix}1.en.html", SECTIONS.format(s=prefix, a=a, b="Nothing else."))
        _write(
            work / zh_pkg / zh_dir,
            f"{prefix}1.zh-cn.html",
            SECTIONS.format(s=prefix, a="本指南解释软件包。", b="没有别的。"),
        )
    (en_pkg, en_file), (zh_pkg, zh_file) = C.EDU_MANUAL
    _write(work / en_pkg, en_file, SECTIONS.format(s="Edu", a="Teachers log in here.", b="Pupils too."))
    # the Chinese page lacks the second section's paragraph: only the first section pairs
    _write(work / zh_pkg, zh_file, SECTIONS.format(s="Edu", a="教师在这里登录。", b="").replace("<p></p>", ""))


def test_debian_guides_pair_each_guide_section_by_section(tmp_path):
    _guides_fixture(tmp_path)
    by_page: dict = {}
    for p in D.extract_debian_guides_zh(tmp_path):
        assert p.source == "guides"
        by_page.setdefault(p.page, []).append((p.src, p.tgt))
    assert by_page["install/ch03"] == [
        ("Step 3 boots the installer.", "第3步启动安装程序。"),
        ("It is done.", "完成了。"),
    ]
    assert by_page["maint/m1"][0] == ("The m guide explains packages.", "本指南解释软件包。")
    assert by_page["faq/f1"][1] == ("Nothing else.", "没有别的。")
    assert by_page["edu/Edu"] == [("Teachers log in here.", "教师在这里登录。")]  # a page per section
    assert "edu/Edu-2" not in by_page  # paragraph counts differ: that section gives nothing
    assert len(by_page) == 20 + 3


def test_the_build_adds_guides_after_docs_and_keeps_held_out_english_out(tmp_path):
    build_zh, work, versions, _ = _built_before(tmp_path)
    _docs_fixture(work)
    before = tmp_path / "docs-only"
    build_zh.build(work, before, versions)
    _guides_fixture(work)
    # an FAQ chapter on a held-out page saying what docs trains on, one on a training page saying GIMP's English
    (en_pkg, en_dir), (zh_pkg, zh_dir) = C.FAQ
    held = next(f"h{i}" for i in range(1000) if real.page_split("guides", f"faq/h{i}") == "test")
    trains = next(f"t{i}" for i in range(1000) if real.page_split("guides", f"faq/t{i}") == "train")
    for name, a, b in (
        (held, "Use apt to install packages.", "用 apt 安装软件包。"),
        (trains, GIMP_EN, "选择要移动的图层。"),
    ):
        fine = ("That page is fine too.", "那一页也很好。") if name == held else ("This one is read.", "这一页读过了。")
        _write(work / en_pkg / en_dir, f"{name}.en.html", SECTIONS.format(s=name, a=a, b=fine[0]))
        _write(work / zh_pkg / zh_dir, f"{name}.zh-cn.html", SECTIONS.format(s=name, a=b, b=fine[1]))
    after = tmp_path / "after"
    manifest = build_zh.build(work, after, versions)
    earlier = [p for p in before.glob("*.tsv.gz") if p.name != "guides.tsv.gz"]
    assert all((after / p.name).read_bytes() == p.read_bytes() for p in earlier)  # docs and the rest unchanged
    guides = {s: real.read_pairs(after / "guides.tsv.gz", s) for s in real.SPLITS}
    for s, ps in guides.items():  # whole pages, by the hash
        assert all(real.page_split("guides", p.page) == s for p in ps)
    assert "Use apt to install packages." in {p.src for p in real.read_pairs(after / "docs.tsv.gz", "train")}
    held_out = {(p.src, p.tgt) for s in ("dev", "test") for p in guides[s]}
    # the held-out page is there, less the sentence docs trains on
    assert ("That page is fine too.", "那一页也很好。") in {(p.src, p.tgt) for p in guides["test"]}
    assert "Use apt to install packages." not in {src for src, _ in held_out}
    assert GIMP_EN not in {p.src for p in guides["train"]}
    assert manifest["files"]["guides.tsv.gz"]["by_split"] == {s: len(ps) for s, ps in guides.items()}
    assert manifest["files"]["guides.tsv.gz"]["licence"] == C.LICENCES["guides"]
    build_zh.build(work, tmp_path / "again", versions)
    assert (after / "guides.tsv.gz").read_bytes() == (tmp_path / "again" / "guides.tsv.gz").read_bytes()


def test_the_build_adds_docs_split_by_page_and_keeps_held_out_english_out(tmp_path):
    build_zh, work, versions, before = _built_before(tmp_path)
    _docs_fixture(work)
    # a reference section whose English is the GIMP manual's: never trained on
    _write(
        work / "debian-reference-en" / C.REFERENCE_DIR,
        "ch03.en.html",
        REFERENCE_PAGE.format(s="g", a="Select the layer you want to move.", b="B.", c="C."),
    )
    _write(
        work / "debian-reference-zh-cn" / C.REFERENCE_DIR,
        "ch03.zh-cn.html",
        REFERENCE_PAGE.format(s="g", a="选择要移动的图层。", b="二。", c="三。"),
    )
    after = tmp_path / "after"
    manifest = build_zh.build(work, after, versions)
    names = sorted(p.name for p in before.glob("*.tsv.gz") if p.name != "docs.tsv.gz")
    assert all((after / n).read_bytes() == (before / n).read_bytes() for n in names)  # the earlier files unchanged
    docs = {s: real.read_pairs(after / "docs.tsv.gz", s) for s in real.SPLITS}
    for s, ps in docs.items():  # whole pages, by the hash
        assert all(real.page_split("docs", p.page) == s for p in ps)
    assert real.page_split("docs", "reference/ch03") == "train"  # a training page, yet its GIMP sentence is dropped
    assert "Select the layer you want to move." not in {p.src for p in docs["train"]}
    assert "Use apt to install packages." in {p.src for p in docs["train"]}
    assert {p.page.split("/")[0] for p in docs["train"]} == {"handbook", "reference"}
    assert manifest["files"]["docs.tsv.gz"]["by_split"] == {s: len(ps) for s, ps in docs.items()}
    assert manifest["files"]["docs.tsv.gz"]["licence"] == C.LICENCES["docs"]
    build_zh.build(work, tmp_path / "again", versions)
    assert (after / "docs.tsv.gz").read_bytes() == (tmp_path / "again" / "docs.tsv.gz").read_bytes()


# Tatoeba's export and the public test sets have guards of their own (tests/test_tatoeba.py): the public sets'
# English is removed from every training corpus when a run loads it; Tatoeba's dev split is held out of its export.
OWN_GUARD = ("zh/tatoeba", "zh/public_tests")


@pytest.mark.parametrize(
    "name, books, at_least",
    [("zh/docs", {"handbook", "reference"}, 6000), ("zh/guides", {"install", "maint", "faq", "edu"}, 4000)],
)
def test_committed_zh_manual_corpora(name, books, at_least):
    """Each book's pages whole in one split; no training English held out by any other file (or GIMP's), no
    held-out English any other file trains on."""
    files = real.real_files()
    mine = {s: real.read_pairs(files[name], s) for s in real.SPLITS}
    assert len(mine["train"]) > at_least and {p.page.split("/")[0] for p in mine["train"]} == books
    assert mine["dev"] and mine["test"]
    for s, ps in mine.items():
        assert all(real.page_split(name.removeprefix("zh/"), p.page) == s for p in ps)
    others = [n for n in files if n.startswith("zh/") and n != name and n not in OWN_GUARD]
    heldout = {C.dedup_key(p.src) for n in others for s in ("dev", "test") for p in real.read_pairs(files[n], s)}
    assert not {C.dedup_key(p.src) for p in mine["train"]} & heldout
    trained = {C.dedup_key(p.src) for n in others for p in real.read_pairs(files[n], "train")}
    assert not {C.dedup_key(p.src) for s in ("dev", "test") for p in mine[s]} & trained
    assert all(C.reads_as_chinese(p.tgt) for p in mine["train"][:2000])


def test_en_zh_docs_preset_is_en_zh_help_with_the_documentation():
    help_, docs = PRESETS["en-zh-help"], PRESETS["en-zh-docs"]
    assert docs.real_data == (*help_.real_data, "zh/docs") and set(docs.real_data) <= set(real.real_files())
    assert docs.real_repeat == (*help_.real_repeat, ("zh/docs", 2))  # as often as the other help corpora
    assert docs.init_from == "checkpoints/en-zh" and docs.lr_factor == help_.lr_factor / 2
    changed = {"real_data", "real_repeat", "lr_factor", "time_limit_s", "average_every"}
    assert {f: getattr(docs, f) for f in help_.__dataclass_fields__ if f not in changed} == {
        f: getattr(help_, f) for f in help_.__dataclass_fields__ if f not in changed
    }


def test_en_zh_manuals_preset_is_en_zh_docs_with_the_guides_three_times_an_epoch():
    docs, manuals = PRESETS["en-zh-docs"], PRESETS["en-zh-manuals"]
    assert manuals.real_data == (*docs.real_data, "zh/guides") and set(manuals.real_data) <= set(real.real_files())
    assert dict(manuals.real_repeat) == {**dict(docs.real_repeat), "zh/docs": 3, "zh/guides": 3}
    assert manuals.init_from == "checkpoints/en-zh" and manuals.lr_factor == docs.lr_factor
    changed = {"real_data", "real_repeat", "time_limit_s"}
    assert {f: getattr(manuals, f) for f in docs.__dataclass_fields__ if f not in changed} == {
        f: getattr(docs, f) for f in docs.__dataclass_fields__ if f not in changed
    }


def test_every_committed_corpus_has_a_name_in_both_languages_and_its_packages():
    """The trained-on card names each corpus a checkpoint read (zh/docs, zh/guides included) from the catalogue, and
    the card's real_data entry lists its packages with their versions."""
    from pages._ui.i18n import Translator, corpus_name
    from transformer.inspection.training_data import real_data_entry

    for lang in ("en", "zh"):
        missing = [name for name in real.real_files() if corpus_name(name, Translator(lang)) == name]
        assert missing == [], lang
    names = [n for n in real.real_files() if n.startswith("zh/") and n not in ("zh/gimp", "zh/public_tests")]
    entry = real_data_entry(names, real.DATA_DIR / "zh" / "MANIFEST.json")
    assert entry["zh/guides"]["packages"]["maint-guide-zh-cn"] == "1.2.53"
    assert entry["zh/docs"]["pairs"] == len(real.read_pairs(real.real_files()["zh/docs"], "train"))


# ---------------------------------------------------------------- Inkscape's tutorials
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd">'
    "{body}</svg>"
)


def _tutorial(*texts: str) -> str:
    """An SVG like Inkscape's tutorials: one <text> per paragraph (the first split into two <tspan> lines), a
    drawing with no text, and a <flowRoot>'s <flowPara>."""
    first, *rest = texts
    lines = "".join(f'<tspan sodipodi:role="line">{line}</tspan>' for line in first.split(" ", 1))
    body = f'<text x="1">{lines}</text>'
    body += '<g><rect width="5" height="5"/><text> </text></g>'
    body += "".join(f"<text>{t}</text>" for t in rest[:-1])
    return SVG.format(body=body + f"<flowRoot><flowPara>{rest[-1]}</flowPara></flowRoot>")


TUTORIAL_EN = ("Drag the handle to rotate. Press Ctrl to snap.", "Fill and stroke", "Bulia Byak; Jon Doe", "2019")
TUTORIAL_ZH = ("拖动控制柄来旋转。按 Ctrl 键吸附。", "填充和描边", "Bulia Byak; Jon Doe", "驿窗 — 2022", "2019")


def test_svg_texts_read_lines_and_flowed_paragraphs_in_order():
    svg = _tutorial(*TUTORIAL_EN)
    assert D.svg_texts(svg) == list(TUTORIAL_EN)  # the two lines joined, the empty <text> left out


def test_a_tutorial_pairs_its_texts_before_the_authors_when_the_translation_adds_its_translators():
    pairs = D.align_tutorial_zh(_tutorial(*TUTORIAL_EN), _tutorial(*TUTORIAL_ZH))
    assert pairs == [
        ("Drag the handle to rotate.", "拖动控制柄来旋转。"),  # as many sentences: cut into sentence pairs
        ("Press Ctrl to snap.", "按 Ctrl 键吸附。"),
        ("Fill and stroke", "填充和描边"),
    ]
    # a translation without its translators' line, or one text short, does not line up: nothing rather than shifted
    assert D.align_tutorial_zh(_tutorial(*TUTORIAL_EN), _tutorial(*TUTORIAL_EN)) == []
    assert D.align_tutorial_zh(_tutorial(*TUTORIAL_EN), _tutorial(*TUTORIAL_ZH[1:])) == []


def _tutorials_fixture(work, held_out: str = "Use apt to install packages.") -> None:
    folder = work / C.TUTORIALS[0] / C.TUTORIALS[1]
    _write(folder, "tutorial-basic.svg", _tutorial(*TUTORIAL_EN))
    _write(folder, "tutorial-basic.zh_CN.svg", _tutorial(*TUTORIAL_ZH))
    _write(folder, "tutorial-basic.fr.svg", _tutorial("Faites glisser la poignée.", "Remplissage", "B", "2019"))
    en = (GIMP_EN, held_out, "Authors", "2019")  # GIMP's English, a held-out one
    _write(folder, "tutorial-shapes.svg", _tutorial(*en))
    _write(
        folder,
        "tutorial-shapes.zh_CN.svg",
        _tutorial("选择要移动的图层。", "用 apt 安装软件包。", "作者", "译者", "2019"),
    )
    _write(folder, "tutorial-tips.svg", _tutorial("No Chinese twin here.", "A", "B", "2019"))  # no zh_CN: skipped


def test_inkscape_tutorials_extract_by_tutorial(tmp_path):
    _tutorials_fixture(tmp_path)
    pairs = D.extract_tutorials_zh(tmp_path / C.TUTORIALS[0])
    assert {p.source for p in pairs} == {"tutorials"}
    assert [p.page for p in pairs] == ["inkscape/basic"] * 3 + ["inkscape/shapes"] * 2
    assert (pairs[2].src, pairs[2].tgt) == ("Fill and stroke", "填充和描边")


def test_the_build_adds_tutorials_for_training_only_without_held_out_or_gimp_english(tmp_path):
    build_zh, work, versions, _ = _built_before(tmp_path)
    _docs_fixture(work)
    _guides_fixture(work)
    before = tmp_path / "no-tutorials"
    build_zh.build(work, before, versions)
    held = sorted(p.src for f in before.glob("*.tsv.gz") for s in ("dev", "test") for p in real.read_pairs(f, s))
    assert held, "the fixtures hold some pages out"
    _tutorials_fixture(work, held[0])
    after = tmp_path / "after"
    manifest = build_zh.build(work, after, versions)
    earlier = sorted(p.name for p in before.glob("*.tsv.gz") if p.name != "tutorials.tsv.gz")
    assert all((after / n).read_bytes() == (before / n).read_bytes() for n in earlier)  # the nine unchanged
    tutorials = {s: real.read_pairs(after / "tutorials.tsv.gz", s) for s in real.SPLITS}
    assert not tutorials["dev"] and not tutorials["test"]
    srcs = [p.src for p in tutorials["train"]]
    assert srcs == ["Drag the handle to rotate.", "Press Ctrl to snap.", "Fill and stroke"]
    assert held[0] not in srcs and GIMP_EN not in srcs  # held out elsewhere / the GIMP manual's: never trained on
    assert manifest["files"]["tutorials.tsv.gz"]["by_split"] == {"train": 3, "dev": 0, "test": 0}
    assert manifest["files"]["tutorials.tsv.gz"]["pairs_by_tutorial"] == {"inkscape/basic": 3}
    build_zh.build(work, tmp_path / "again", versions)
    assert (after / "tutorials.tsv.gz").read_bytes() == (tmp_path / "again" / "tutorials.tsv.gz").read_bytes()


def test_committed_tutorials_corpus_is_training_only_and_holds_no_held_out_or_gimp_english():
    files = real.real_files()
    mine = real.read_pairs(files["zh/tutorials"], "train")
    assert len(mine) > 800 and len({p.page for p in mine}) == 9
    assert not real.read_pairs(files["zh/tutorials"], "dev") and not real.read_pairs(files["zh/tutorials"], "test")
    others = [n for n in files if n.startswith("zh/") and n != "zh/tutorials"]
    heldout = {C.dedup_key(p.src) for n in others for s in ("dev", "test") for p in real.read_pairs(files[n], s)}
    assert not {C.dedup_key(p.src) for p in mine} & heldout  # zh/gimp's test sentences included
    assert all(C.reads_as_chinese(p.tgt) for p in mine)


def test_en_zh_tutorials_preset_is_en_zh_manuals_with_the_tutorials_five_times_an_epoch():
    manuals, tutorials = PRESETS["en-zh-manuals"], PRESETS["en-zh-tutorials"]
    assert tutorials.real_data == (*manuals.real_data, "zh/tutorials")
    assert dict(tutorials.real_repeat) == {**dict(manuals.real_repeat), "zh/tutorials": 5}
    changed = {"real_data", "real_repeat"}
    assert {f: getattr(tutorials, f) for f in manuals.__dataclass_fields__ if f not in changed} == {
        f: getattr(manuals, f) for f in manuals.__dataclass_fields__ if f not in changed
    }


# ---------------------------------------------------------------- LibreOffice's interface, the ITIL manual
ITIL = '<html><body><div id="idm{n}">{body}</div><div id="ftn.idm{n}"><p>{f}</p></div></body></html>'


def _office_and_itil_fixture(work, held_out: str = "Use apt to install packages.") -> None:
    """LibreOffice's zh_CN catalogues (one message GIMP's English, one held out elsewhere) and the ITIL manual,
    whose generated ids differ by language and whose Chinese adds its table of contents' title."""
    folder = work / C.OFFICE_UI[0] / C.OFFICE_UI[1]
    messages = {
        "The number to be rounded up.": "需要向上舍入的数字。",
        "Insert ~Rows Above": "在上方插入行(~R)",
        "Cancel": "取消",  # a bare label: fewer than three English words
        GIMP_EN: "选择要移动的图层。",
        held_out: "用 apt 安装软件包。",
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sc.mo").write_bytes(_mo(messages))
    (folder / "avmedia.mo").write_bytes(_mo({"Apply the current settings now.": "立即应用当前设置。"}))
    (en_pkg, en_file), (zh_pkg, zh_file) = C.ITIL_MANUAL
    en = "".join(f"<p>{t}</p>" for t in ("ITIL Manual", "The server is down.", "Plan the schools. Buy printers."))
    zh = "".join(f"<p>{t}</p>" for t in ("目录", "ITIL 手册", "服务器宕机。", "为学校计划。购买打印机。"))
    _write(work / en_pkg, en_file, ITIL.format(n=1, body=en, f="A footnote is here."))
    _write(work / zh_pkg, zh_file, ITIL.format(n=2, body=zh, f="这里有一个脚注。"))


def test_paragraphs_pair_in_order_after_the_translations_own_heading():
    en = ["The server is down.", "Plan the schools."]
    assert D.align_in_order_zh(en, ["目录", "服务器宕机。", "为学校计划。"]) == [
        ("The server is down.", "服务器宕机。"),
        ("Plan the schools.", "为学校计划。"),
    ]
    assert D.align_in_order_zh(en, ["服务器宕机。", "为学校计划。"])[1] == ("Plan the schools.", "为学校计划。")
    assert D.align_in_order_zh(en, ["服务器宕机。"]) == []  # the Chinese lacks a paragraph: never guessed at
    assert D.align_in_order_zh(en, ["这是一个比目录长得多的段落，不是标题。", "服务器宕机。", "为学校计划。"]) == []


def test_office_interface_and_itil_manual_extract(tmp_path):
    _office_and_itil_fixture(tmp_path)
    office = D.extract_office_ui_zh(tmp_path / C.OFFICE_UI[0])
    assert {p.source for p in office} == {"office_ui"}
    assert [p.page for p in office][:1] == ["libreoffice/avmedia.mo"]  # catalogues sorted by name
    by_src = {p.src: p.tgt for p in office}
    assert by_src["Insert Rows Above"] == "在上方插入行"  # accelerators removed on both sides
    assert by_src["The number to be rounded up."] == "需要向上舍入的数字。" and "Cancel" not in by_src
    itil = D.extract_itil_zh(tmp_path)
    assert [(p.source, p.page) for p in itil] == [("itil", "itil")] * len(itil)
    assert [(p.src, p.tgt) for p in itil] == [
        ("ITIL Manual", "ITIL 手册"),
        ("The server is down.", "服务器宕机。"),
        ("Plan the schools.", "为学校计划。"),
        ("Buy printers.", "购买打印机。"),
        ("A footnote is here.", "这里有一个脚注。"),
    ]
    assert D.extract_itil_zh(tmp_path / "nothing") == []


def _built_with(tmp_path, earlier_fixtures: tuple, new_fixture):
    """The build run on _built_before's pages and earlier_fixtures (into before/), then again with
    new_fixture(work, an English text held out in before/) added (into after/): (the build module, the work folder,
    the versions, before, after, the second build's manifest, that held-out English)."""
    build_zh, work, versions, _ = _built_before(tmp_path)
    for fixture in earlier_fixtures:
        fixture(work)
    before, after = tmp_path / "before", tmp_path / "after"
    build_zh.build(work, before, versions)
    held = sorted(p.src for f in before.glob("*.tsv.gz") for s in ("dev", "test") for p in real.read_pairs(f, s))
    new_fixture(work, held[0])
    return build_zh, work, versions, before, after, build_zh.build(work, after, versions), held[0]


def test_the_build_adds_office_ui_and_itil_for_training_only_without_held_out_or_gimp_english(tmp_path):
    fixtures = (_docs_fixture, _guides_fixture, _tutorials_fixture)
    build_zh, work, versions, before, after, manifest, held = _built_with(tmp_path, fixtures, _office_and_itil_fixture)
    new = {"office_ui.tsv.gz", "itil.tsv.gz"}
    earlier = sorted(p.name for p in before.glob("*.tsv.gz") if p.name not in new)  # the files built after: empty
    assert len(earlier) == len(C.LICENCES) - len(new)  # every file the build writes, one licence each
    assert all((after / n).read_bytes() == (before / n).read_bytes() for n in earlier)
    office = {s: real.read_pairs(after / "office_ui.tsv.gz", s) for s in real.SPLITS}
    assert not office["dev"] and not office["test"]
    srcs = {p.src for p in office["train"]}
    assert srcs == {"Apply the current settings now.", "The number to be rounded up.", "Insert Rows Above"}
    assert held not in srcs and GIMP_EN not in srcs  # held out elsewhere / the GIMP manual's: never trained on
    assert manifest["files"]["office_ui.tsv.gz"]["pairs_by_catalogue"] == {
        "libreoffice/avmedia.mo": 1,
        "libreoffice/sc.mo": 2,
    }
    itil = real.read_pairs(after / "itil.tsv.gz", "train")
    assert len(itil) == 5 and manifest["files"]["itil.tsv.gz"]["by_split"] == {"train": 5, "dev": 0, "test": 0}
    assert manifest["files"]["itil.tsv.gz"]["licence"] == C.LICENCES["itil"]
    build_zh.build(work, tmp_path / "again", versions)
    assert all((after / n).read_bytes() == (tmp_path / "again" / n).read_bytes() for n in new)


# ---------------------------------------------------------------- KiCad's manuals
KICAD_PAGE = """<html><body><div id="toc"><ul><li><a href="#{a}">{h1}</a></li></ul></div>
<div class="sect1"><h2 id="{a}">{h1}</h2><div class="paragraph"><p>{p1}</p></div></div>
<div class="sect1"><h2 id="{b}">{h2}</h2>{body}</div>
<div id="footer"><p>{foot}</p></div></body></html>"""


def _kicad_page(lang: str, sections: list[list[str]]) -> str:
    """One KiCad manual page with two headings: the first section's one paragraph, the second's given ones."""
    (p1,), rest = sections
    body = "".join(f'<div class="paragraph"><p>{p}</p></div>' for p in rest)
    if lang == "en":
        return KICAD_PAGE.format(a="_intro", h1="Introduction", b="_tools", h2="Tools", p1=p1, body=body, foot="v6")
    return KICAD_PAGE.format(a="_简介", h1="简介", b="_工具", h2="工具", p1=p1, body=body, foot="v6")


def _kicad_fixture(work, held_out: str = "Use apt to install packages.") -> None:
    """Two KiCad pages beside their Chinese twins (ids rewritten by the translation, as Asciidoctor does), and a
    third whose Chinese lacks a paragraph; one English sentence is GIMP's, one held out elsewhere."""
    (en_pkg, en_dir), (zh_pkg, zh_dir) = C.KICAD_MANUALS
    en, zh = work / en_pkg / en_dir, work / zh_pkg / zh_dir
    _write(
        en,
        "pcbnew.html",
        _kicad_page(
            "en",
            [
                ["Pcbnew is the board editor."],
                [
                    "The Layers tab lists every layer. Click a layer to select it.",
                    "Drill origin: choose the origin of the drill files.",
                    GIMP_EN,
                ],
            ],
        ),
    )
    _write(
        zh,
        "pcbnew.html",
        _kicad_page(
            "zh",
            [
                ["Pcbnew 是电路板编辑器。"],
                [
                    "图层选项卡列出每个图层。点击图层将其选中。",
                    "钻孔原点：选择钻孔文件的原点。这个中文段落还翻译了英文里没有的很多很多其他句子，所以长度对不上。",
                    "选择要移动的图层。",
                ],
            ],
        ),
    )
    _write(en, "eeschema.html", _kicad_page("en", [[held_out], ["Wires connect the pins of symbols."]]))
    _write(zh, "eeschema.html", _kicad_page("zh", [["使用 apt 安装软件包。"], ["导线连接符号的引脚。"]]))
    _write(en, "gerbview.html", _kicad_page("en", [["GerbView shows Gerber files."], ["One.", "Two."]]))
    _write(zh, "gerbview.html", _kicad_page("zh", [["GerbView 显示 Gerber 文件。"], ["一。"]]))


def test_kicad_pages_pair_sections_by_position_and_their_paragraphs_in_order(tmp_path):
    assert manuals.paragraphs_by_heading(_kicad_page("zh", [["甲。"], ["乙。", "丙。"]])) == [
        [],
        ["甲。"],
        ["乙。", "丙。", "v6"],
    ]
    _kicad_fixture(tmp_path)
    pairs = D.extract_kicad_zh(tmp_path)
    assert {p.source for p in pairs} == {"kicad"}
    by_page: dict[str, list[tuple[str, str]]] = {}
    for p in pairs:
        by_page.setdefault(p.page, []).append((p.src, p.tgt))
    assert list(by_page) == ["kicad/eeschema", "kicad/gerbview", "kicad/pcbnew"]  # sorted by page
    assert by_page["kicad/pcbnew"] == [
        ("Pcbnew is the board editor.", "Pcbnew 是电路板编辑器。"),
        ("The Layers tab lists every layer.", "图层选项卡列出每个图层。"),  # cut into sentences
        ("Click a layer to select it.", "点击图层将其选中。"),
        (GIMP_EN, "选择要移动的图层。"),
    ]  # the drill paragraph's Chinese also translates more than its English: dropped; so is the footer ("v6")
    # a section whose Chinese lacks a paragraph pairs nothing; the page's other section still pairs
    assert by_page["kicad/gerbview"] == [("GerbView shows Gerber files.", "GerbView 显示 Gerber 文件。")]
    assert D.extract_kicad_zh(tmp_path / "nothing") == []


def _added_for_training_only(tmp_path, earlier_fixtures: tuple, new_fixture, name: str) -> tuple[set[str], dict]:
    """_built_with's two builds, the second adding name.tsv.gz: every earlier file rebuilds byte for byte, the new
    one is training only and holds neither the English held out elsewhere nor GIMP's. Returns its training English
    and its MANIFEST entry."""
    *_, before, after, manifest, held = _built_with(tmp_path, earlier_fixtures, new_fixture)
    earlier = sorted(p.name for p in before.glob("*.tsv.gz") if p.name != f"{name}.tsv.gz")
    assert len(earlier) == len(C.LICENCES) - 1  # every file the build writes, one licence each
    assert all((after / n).read_bytes() == (before / n).read_bytes() for n in earlier)
    pairs = {s: real.read_pairs(after / f"{name}.tsv.gz", s) for s in real.SPLITS}
    assert not pairs["dev"] and not pairs["test"]
    srcs = {p.src for p in pairs["train"]}
    assert held not in srcs and GIMP_EN not in srcs  # held out elsewhere / the GIMP manual's: never trained on
    entry = manifest["files"][f"{name}.tsv.gz"]
    assert entry["licence"] == C.LICENCES[name]
    return srcs, entry


def test_the_build_adds_kicad_for_training_only_without_held_out_or_gimp_english(tmp_path):
    fixtures = (_docs_fixture, _guides_fixture, _tutorials_fixture, _office_and_itil_fixture)
    srcs, entry = _added_for_training_only(tmp_path, fixtures, _kicad_fixture, "kicad")
    assert "Wires connect the pins of symbols." in srcs and "The Layers tab lists every layer." in srcs
    assert entry["pairs_by_page"]["kicad/eeschema"] == 1


def test_en_zh_office_preset_is_the_tutorials_mix_reshuffled_with_the_two_new_corpora():
    tutorials, reshuffled, office = PRESETS["en-zh-tutorials"], PRESETS["en-zh-reshuffled"], PRESETS["en-zh-office"]
    assert reshuffled.seed != tutorials.seed == 0 and office.seed == reshuffled.seed  # a new batch order
    assert office.real_data == (*tutorials.real_data, "zh/office_ui", "zh/itil")
    assert set(office.real_data) <= set(real.real_files())
    assert dict(office.real_repeat) == {**dict(tutorials.real_repeat), "zh/itil": 3}  # office_ui once an epoch
    assert office.init_from == "checkpoints/en-zh" and office.lr_factor == tutorials.lr_factor
    changed = {"real_data", "real_repeat", "seed"}
    assert {f: getattr(office, f) for f in tutorials.__dataclass_fields__ if f not in changed} == {
        f: getattr(tutorials, f) for f in tutorials.__dataclass_fields__ if f not in changed
    }


def test_en_zh_office_again_preset_is_en_zh_office_in_a_new_order_for_longer():
    office, again = PRESETS["en-zh-office"], PRESETS["en-zh-office-again"]
    assert again.seed not in (0, office.seed) and again.time_limit_s > office.time_limit_s
    assert again.init_from == "checkpoints/en-zh" and again.lr_factor == office.lr_factor
    changed = {"seed", "time_limit_s"}
    assert {f: getattr(again, f) for f in office.__dataclass_fields__ if f not in changed} == {
        f: getattr(office, f) for f in office.__dataclass_fields__ if f not in changed
    }


def test_en_zh_kicad_preset_is_en_zh_office_again_with_kicads_manuals_in_a_new_order():
    again, kicad = PRESETS["en-zh-office-again"], PRESETS["en-zh-kicad"]
    assert kicad.real_data == (*again.real_data, "zh/kicad") and set(kicad.real_data) <= set(real.real_files())
    assert dict(kicad.real_repeat) == {**dict(again.real_repeat), "zh/kicad": 5}
    assert kicad.seed not in (0, 6, 7) and kicad.init_from == "checkpoints/en-zh"
    changed = {"real_data", "real_repeat", "seed"}
    assert {f: getattr(kicad, f) for f in again.__dataclass_fields__ if f not in changed} == {
        f: getattr(again, f) for f in again.__dataclass_fields__ if f not in changed
    }


def test_en_zh_graphics_preset_is_en_zh_kicad_with_the_graphics_interfaces_in_a_new_order():
    kicad, graphics = PRESETS["en-zh-kicad"], PRESETS["en-zh-graphics"]
    assert graphics.real_data == (*kicad.real_data, "zh/graphics") and set(graphics.real_data) <= set(real.real_files())
    assert dict(graphics.real_repeat) == dict(kicad.real_repeat)  # zh/graphics once an epoch
    assert graphics.seed not in (0, 6, 7, 8) and graphics.init_from == "checkpoints/en-zh"
    changed = {"real_data", "seed"}
    assert {f: getattr(graphics, f) for f in kicad.__dataclass_fields__ if f not in changed} == {
        f: getattr(kicad, f) for f in kicad.__dataclass_fields__ if f not in changed
    }


RT_DEFAULT = """#00 default translation file
#01 Developers should add translations to this file.
ADJUSTER_RESET_TO_DEFAULT;<b>Click</b> - reset to default value.\\n<b>Ctrl</b>+<b>click</b> - reset to initial value.
HISTORY_MSG_1;W - Final - Contrast balance
TP_BWMIX_CURVEEDITOR1;'Before' curve, just before B&amp;W conversion.
TP_EXPOSURE_LABEL;Exposure
TP_SHARPENING_LABEL;Sharpen the image edges.
TP_UNTRANSLATED;Nobody has translated this one yet.
"""
RT_ZH = """#00 Chinese (Simplified)
#01 2022-07-26 translator
ADJUSTER_RESET_TO_DEFAULT;<b>单击</b>-恢复默认值\\n<b>Ctrl</b>+<b>单击</b>-恢复初始值
HISTORY_MSG_1;小波-最终-反差平衡
TP_BWMIX_CURVEEDITOR1;黑白转换之前的“前”曲线。
TP_EXPOSURE_LABEL;曝光
TP_SHARPENING_LABEL;锐化图像边缘。
!TP_UNTRANSLATED;Nobody has translated this one yet.
"""


def _graphics_fixture(work, held_out: str = "Use apt to install packages.") -> None:
    """Two graphics programs' zh_CN catalogues (one message GIMP's English, one held out elsewhere, one a bare label)
    and RawTherapee's language files."""
    blender = work / "blender-data" / C.CATALOGUES_ZH
    blender.mkdir(parents=True, exist_ok=True)
    messages = {
        "Scale the selected items": "缩放选中项",
        "Add Modifier": "添加修改器",  # a bare label: fewer than three English words
        GIMP_EN: "选择要移动的图层。",
        held_out: "用 apt 安装软件包。",
    }
    (blender / "blender.mo").write_bytes(_mo(messages))
    hugin = work / "hugin-data" / C.CATALOGUES_ZH
    hugin.mkdir(parents=True, exist_ok=True)
    (hugin / "hugin.mo").write_bytes(_mo({"Optimize the image positions": "优化图像位置"}))
    package, folder, en_name, zh_name = C.RAWTHERAPEE
    _write(work / package, f"{folder}/{en_name}", RT_DEFAULT)
    _write(work / package, f"{folder}/{zh_name}", RT_ZH)


def test_rawtherapee_language_files_pair_by_key_without_markup_history_or_untranslated_keys(tmp_path):
    _graphics_fixture(tmp_path)
    en = D.read_rawtherapee_language(RT_DEFAULT)
    assert "TP_UNTRANSLATED" in en and "TP_UNTRANSLATED" not in D.read_rawtherapee_language(RT_ZH)  # "!": untranslated
    assert en["ADJUSTER_RESET_TO_DEFAULT"] == "Click - reset to default value. Ctrl+click - reset to initial value."
    pairs = D.extract_rawtherapee_zh(tmp_path / C.RAWTHERAPEE[0])
    assert {p.source for p in pairs} == {"graphics"}
    # the text's lines joined (its Chinese has no full stop to cut at); HISTORY_ labels, one-word labels and a text
    # with "&" (markup to message_pairs_zh, as in every catalogue) left out
    assert [(p.page, p.src, p.tgt) for p in pairs] == [
        (
            "rawtherapee/ADJUSTER",
            "Click - reset to default value. Ctrl+click - reset to initial value.",
            "单击-恢复默认值 Ctrl+单击-恢复初始值",
        ),
        ("rawtherapee/TP", "Sharpen the image edges.", "锐化图像边缘。"),
    ]
    assert D.extract_rawtherapee_zh(tmp_path / "nothing") == []


def test_the_build_adds_graphics_for_training_only_without_held_out_or_gimp_english(tmp_path):
    fixtures = (_docs_fixture, _guides_fixture, _tutorials_fixture, _office_and_itil_fixture, _kicad_fixture)
    srcs, entry = _added_for_training_only(tmp_path, fixtures, _graphics_fixture, "graphics")
    assert {"Scale the selected items", "Optimize the image positions", "Sharpen the image edges."} <= srcs
    assert "Add Modifier" not in srcs
    assert entry["pairs_by_package"] == {"blender-data": 1, "hugin-data": 1, "rawtherapee": 2}


# what each training-only file's pairs also hold to, beyond reading as Chinese
TRAINING_ONLY_RULES = {
    "zh/office_ui": (9000, lambda p: len(p.src.split()) >= C.UI_MIN_WORDS),
    "zh/itil": (2000, lambda p: True),
    "zh/kicad": (1500, lambda p: C.length_agrees_zh(p.src, p.tgt)),
    "zh/graphics": (20000, lambda p: len(p.src.split()) >= C.UI_MIN_WORDS),
}


@pytest.mark.parametrize("name", sorted(TRAINING_ONLY_RULES))
def test_committed_training_only_corpora_hold_no_held_out_or_gimp_english(name):
    files = real.real_files()
    at_least, rule = TRAINING_ONLY_RULES[name]
    mine = real.read_pairs(files[name], "train")
    assert len(mine) > at_least and not real.read_pairs(files[name], "dev") and not real.read_pairs(files[name], "test")
    others = [n for n in files if n.startswith("zh/") and n != name and n not in OWN_GUARD]
    heldout = {C.dedup_key(p.src) for n in others for s in ("dev", "test") for p in real.read_pairs(files[n], s)}
    assert not {C.dedup_key(p.src) for p in mine} & heldout  # zh/gimp's test sentences included
    assert all(C.reads_as_chinese(p.tgt) and rule(p) for p in mine)
