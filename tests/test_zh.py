"""English → 简体中文 (issue 34): the Chinese corpus rules on tiny fixtures, the committed files, separate source and
target tokenizers, the en-zh preset (runs and resumes) and a tiny model that learns to write Chinese."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import stopped_run
from zh_fixture import PAIRS, train_tiny_writer

from transformer.checkpoint import load_checkpoint
from transformer.corpus import chinese as C
from transformer.corpus import real
from transformer.corpus.real import RealPair
from transformer.decoding import translate_ids
from transformer.tokenizer import MarianTokenizer, train_separate
from transformer.training import PRESETS, Trainer

ZH = real.DATA_DIR / "zh"


# ---------------------------------------------------------------- the Chinese rules
def test_cjk_share_tells_chinese_from_untranslated_english():
    assert C.cjk_share("选择「文件」菜单。") == 1.0
    assert C.cjk_share("Click the File menu.") == 0.0
    assert C.reads_as_chinese("在 Writer 中，可以为 OLE 对象定义边框。")  # English names inside Chinese
    assert not C.reads_as_chinese("Use the relevant icon in toolbox.")  # the GIMP manual's untranslated pages
    assert not C.reads_as_chinese("OnResetted") and not C.reads_as_chinese("0")


def test_whitespace_between_chinese_characters_is_dropped_and_dedup_ignores_whitespace():
    assert C.normalise_zh("单元格 区间\n 将被粘贴。") == "单元格区间将被粘贴。"
    assert C.normalise_zh("在 Writer 中") == "在 Writer 中"  # spaces beside Latin words stay
    assert C.dedup_key("你 好 。") == C.dedup_key("你好。")


def test_chinese_sentences_and_paragraph_alignment():
    assert C.zh_sentences("这是第一句。这是第二句！对吗？") == ["这是第一句。", "这是第二句！", "对吗？"]
    assert C.zh_sentences("他说：“走吧。”然后离开了。") == ["他说：“走吧。”", "然后离开了。"]
    pairs = C.split_paragraph_zh("The cat sleeps. The dog runs.", "猫在睡觉。狗在跑。")
    assert pairs == [("The cat sleeps.", "猫在睡觉。"), ("The dog runs.", "狗在跑。")]
    # as many sentences on each side or nothing cut
    assert C.split_paragraph_zh("One. Two. Three.", "一。二。") == [("One. Two. Three.", "一。二。")]


def test_libreoffice_pages_align_by_paragraph_id():
    en = '<p id="par_id1">Open the file. Save it.</p><h2 id="hd_id2">Title</h2><p id="par_id3">Only English.</p>'
    zh = '<p id="par_id1">打开文件。保存它。</p><h2 id="hd_id2">标题</h2>'
    assert C.align_by_id_zh(en, zh) == [("Open the file.", "打开文件。"), ("Save it.", "保存它。"), ("Title", "标题")]


def test_gimp_sections_align_by_anchor():
    en = '<div id="sec-a"><p>Select a layer.</p></div><div id="sec-b"><p>One.</p><p>Two.</p></div>'
    zh = '<div id="sec-a"><p>选择一个图层。</p></div><div id="sec-b"><p>一。</p></div>'
    assert C.align_by_anchor_zh(en, zh) == [("Select a layer.", "选择一个图层。")]


def test_catalogue_messages_keep_chinese_and_drop_placeholders():
    assert C.message_pairs_zh("We must go. Now!", "我们必须走。现在！") == [
        ("We must go.", "我们必须走。"),
        ("Now!", "现在！"),
    ]
    assert C.message_pairs_zh("Kill $unit.name", "杀死 $unit.name") == []
    assert C.message_pairs_zh("Hello there", "Hello there") == []  # untranslated
    assert C.message_pairs_zh("female^Lady", "女士") == [("Lady", "女士")]


def test_sentence_like_uses_chinese_lengths():
    assert C.sentence_like_zh("Each field is usually separated by a comma.", "每个字段通常都用逗号分隔。")
    assert not C.sentence_like_zh("Each field is usually separated by a comma.", "Each field is separated.")
    assert not C.sentence_like_zh("Each field is usually separated by a comma.", "字段。")  # far too short
    assert not C.sentence_like_zh("Go to beginning of line", "转到行首")  # no final mark: a label


def test_split_by_page_keeps_pages_whole_and_dedups_without_whitespace():
    pairs = [
        RealPair("libreoffice", f"page{i}.html", f"Sentence number {i} is here.", f"第{i}句在这里。")
        for i in range(400)
    ]
    pairs += [RealPair("libreoffice", "page0.html", "Sentence number 0 is here.", "第 0 句 在这里。")]  # a duplicate
    pairs += [RealPair("libreoffice", "page1.html", "Untranslated text here.", "Untranslated text here.")]
    splits = C.split_by_page_zh(pairs)
    where = {p.page: s for s, ps in splits.items() for p in ps}
    for s, ps in splits.items():
        assert all(real.page_split("libreoffice", p.page) == s for p in ps)
    assert {"train", "dev", "test"} == set(where.values())
    assert sum(len(ps) for ps in splits.values()) == 400  # the duplicate and the untranslated pair are gone
    # a caller's split (whole campaigns) wins over the hash
    held = C.split_by_page_zh(pairs[:10], split_of=lambda p: "test" if p.page == "page3.html" else "train")
    assert [p.page for p in held["test"]] == ["page3.html"] and len(held["train"]) == 9


# ---------------------------------------------------------------- the committed files
def test_committed_chinese_corpora_are_split_and_read_as_chinese():
    files = real.real_files()
    assert {"zh/libreoffice", "zh/everyday", "zh/gimp"} <= set(files)
    train = real.load_real("train", ("zh/libreoffice", "zh/everyday"))
    assert len(train) > 40000
    for split in ("dev", "test"):
        held = real.read_pairs(files["zh/everyday"], split)
        assert held and {p.page for p in held} == (
            {"wesnoth-sof"} if split == "dev" else {"wesnoth-tsg", "wesnoth-thot"}
        )
    trained = {C.dedup_key(s) for s, _ in train}
    gimp = real.read_pairs(files["zh/gimp"])
    assert gimp and not any(C.dedup_key(p.src) in trained for p in gimp)
    assert all(C.reads_as_chinese(p.tgt) for p in gimp)
    lo_test = real.read_pairs(files["zh/libreoffice"], "test")
    assert not any(C.dedup_key(p.src) in trained for p in lo_test)


# ---------------------------------------------------------------- tokenizers, preset, training


def test_separate_tokenizers_store_as_separate_vocabularies():
    tok = train_separate([s for s, _ in PAIRS] * 20, [t for _, t in PAIRS] * 20, 60, 40, 0.9995)
    assert isinstance(tok, MarianTokenizer) and tok.separate_vocabularies
    assert tok.special == (0, 1, 2, 3)
    ids = tok.encode_target("猫在桌子上。")
    assert 1 not in ids and tok.decode(ids) == "猫在桌子上。"
    assert set("".join(tok.target_pieces(ids)).replace("▁", "")) <= set("猫在桌子上。")
    back = MarianTokenizer.from_files(tok.files(), tok.vocab_size, 2, tok.target_vocab_size)
    assert back.encode("the cat") == tok.encode("the cat") and back.encode_target("书") == tok.encode_target("书")


def test_en_zh_preset():
    cfg = PRESETS["en-zh"]
    assert cfg.tgt_vocab_size == 8000 and cfg.vocab_size == 8000 and cfg.init_from is None
    o = cfg.model_overrides
    assert (o["d_model"], o["n_heads"], o["n_encoder_layers"], o["n_decoder_layers"], o["d_ff"]) == (256, 4, 3, 3, 1024)
    assert cfg.steps <= 8000 and cfg.batch_tokens == 20000 and cfg.time_limit_s == 240
    assert len(cfg.snapshot_steps) == 1 and cfg.snapshot_dtype == "float16" and cfg.checkpoint_every == 500
    assert set(cfg.real_data) <= set(real.real_files()) and cfg.corpus.n_examples == 0


@pytest.mark.slow  # trains
def test_en_zh_preset_runs_and_resumes(tmp_path):
    """Three steps of the preset (small batches; the everyday corpus alone and 2,000 + 4,000-piece vocabularies, so that
    it takes seconds on two cores), stopped after step 2 and resumed from last/."""
    cfg = dataclasses.replace(
        PRESETS["en-zh"],
        real_data=("zh/everyday",),
        real_repeat=(),
        vocab_size=2000,
        tgt_vocab_size=4000,
        steps=3,
        batch_tokens=600,
        checkpoint_every=1,
        snapshot_steps=(),
        time_limit_s=0.0,
        mixed_precision=False,
    )
    out = tmp_path / "en-zh"
    assert stopped_run(cfg, out, 2)["stopped"]
    assert (out / "last" / "target_vocab.json").is_file()
    result = Trainer(cfg, out).train()
    assert result["step"] == 3 and not result["stopped"]
    ckpt = load_checkpoint(out)
    assert ckpt.config.separate_vocabularies and ckpt.config.tgt_vocab_size == ckpt.tokenizer.target_vocab_size
    assert ckpt.card["step"] == 3


@pytest.mark.slow  # trains
def test_a_tiny_model_learns_to_write_chinese(tmp_path):
    train_tiny_writer(tmp_path, tmp_path / "tiny-zh")
    ckpt = load_checkpoint(tmp_path / "tiny-zh")
    ckpt.model.eval()
    tok = ckpt.tokenizer
    right = 0
    for src, tgt in PAIRS:
        out = translate_ids(ckpt.model, tok.source_ids(src), max_new_tokens=12, return_attention=False)
        text = tok.decode(out.tokens)
        assert C.reads_as_chinese(text), text
        right += text == tgt
    assert right >= len(PAIRS) - 1


# ---------------------------------------------------------------- the language pair and the Chinese word rule
def test_language_pair_from_the_card():
    from transformer.provenance import language_pair, pair_label

    assert language_pair({"train_config": {"real_data": ["zh/libreoffice", "zh/everyday"]}}) == ("en", "zh")
    assert language_pair({"train_config": {"real_data": ["libreoffice"]}}) == ("en", "fr")
    assert language_pair({"train_config": {"data_file": "mine.tsv"}}) == (None, None)
    assert language_pair({"kind": "imported-marian", "source_lang": "en", "target_lang": "zh_CN"}) == ("en", "zh")
    assert language_pair({"kind": "imported-marian"}) == (None, None)
    assert pair_label({}) == "en → fr" and pair_label("not a card") == "? → ?"


def test_chinese_target_pieces_merge_only_where_the_tokenizer_marks_words():
    from transformer.inspection.languages import target_word_groups

    pieces = ["<s>", "▁在", "▁Wri", "ter", "▁中", "，", "可以", "OLE", "对象", "。", "</s>"]
    assert target_word_groups(pieces, "zh") == [[0], [1], [2, 3], [4], [5], [6], [7], [8], [9], [10]]
    # a language written with spaces keeps the whitespace rule
    assert target_word_groups(["▁le", "▁ch", "at", "</s>"], "fr") == [[0], [1, 2], [3]]


def test_the_build_script_splits_by_campaign_and_page_and_rebuilds_byte_for_byte(tmp_path):
    """scripts/build_zh_corpus.py's build on a tiny unpacked tree: LibreOffice pages by id, Wesnoth catalogues
    held out by whole campaign, GIMP test-only without any trained English; a second build gives the same bytes."""
    import importlib.util

    from test_real_corpus import _mo

    from transformer.corpus import everyday as E
    from transformer.layout import REPO_ROOT

    spec = importlib.util.spec_from_file_location("build_zh", REPO_ROOT / "scripts" / "build_zh_corpus.py")
    build_zh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_zh)
    work = tmp_path / "work"
    for i in range(40):  # LibreOffice: 40 pages, one sentence each
        for root, text in (
            (real.LIBREOFFICE_EN, f"Click the button number {i} to open it."),
            (C.LIBREOFFICE_ZH, f"点击第{i}个按钮 打开它。"),
        ):
            page = work / ("libreoffice-help-en-us" if root == real.LIBREOFFICE_EN else "libreoffice-help-zh-cn") / root
            (page / "text").mkdir(parents=True, exist_ok=True)
            (page / "text" / f"p{i}.html").write_text(f'<p id="par_id{i}">{text}</p>', encoding="utf-8")
    lines = {
        "wesnoth-1.16-tsg": {"We must hold the south.": "我们必须守住南方。"},
        "wesnoth-1.16-sof": {"The sceptre is ours now.": "权杖现在是我们的了。"},
        "wesnoth-1.16-httt": {"Flee to the islands!": "逃往群岛！", "We must hold the south.": "我们必须守住南方。"},
    }
    for package, messages in lines.items():
        folder = work / package / C.WESNOTH_LOCALE_ZH
        folder.mkdir(parents=True)
        (folder / f"wesnoth-{package.rsplit('-', 1)[1]}.mo").write_bytes(_mo(messages))
    gimp_en, gimp_zh = work / "gimp-help-en" / real.GIMP_EN, work / "gimp-help-zh-cn" / C.GIMP_ZH
    for root, texts in (
        (gimp_en, ("Flee to the islands!", "Select the layer you want to move.")),
        (gimp_zh, ("逃往群岛！", "选择要移动的图层。")),
    ):
        root.mkdir(parents=True)
        body = "".join(f'<div id="s{k}"><p>{t}</p></div>' for k, t in enumerate(texts))
        (root / "a.html").write_text(body, encoding="utf-8")
    versions = {p: "1" for p in build_zh.PACKAGES}
    out = tmp_path / "zh"
    manifest = build_zh.build(work, out, versions)
    first = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    build_zh.build(work, out, versions)
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir())} == first
    every = real.read_pairs(out / "everyday.tsv.gz")
    split = {p.src: s for s in real.SPLITS for p in real.read_pairs(out / "everyday.tsv.gz", s)}
    assert split["The sceptre is ours now."] == "dev" and split["Flee to the islands!"] == "train"
    # a held-out campaign's sentence that a training campaign also has is dropped from the held-out split
    assert split["We must hold the south."] == "train" and len(every) == 3
    assert real.read_pairs(out / "everyday.tsv.gz", "test") == []
    gimp = real.read_pairs(out / "gimp.tsv.gz")
    assert [p.src for p in gimp] == ["Select the layer you want to move."]  # its trained sentence is left out
    lo = manifest["files"]["libreoffice.tsv.gz"]["by_split"]
    assert sum(lo.values()) == 40 and lo["train"] > 30
    assert all(" " not in p.tgt for p in real.read_pairs(out / "libreoffice.tsv.gz"))  # 按钮 打开 → 按钮打开
    assert E.HELD_OUT["wesnoth-tsg"] == "test"


def test_chinese_targets_are_scored_per_character():
    """One scorer for every pair: a Chinese target's BLEU counts characters (sacrebleu tokenize="zh"), so a
    translation one character off still scores, where 13a's whitespace words would see one wrong "word"."""
    from transformer.evaluate_real import score

    hyps, refs = ["我们打开这个文件夹。"], ["我们打开那个文件夹。"]
    zh, fr = score(hyps, refs, target_lang="zh"), score(hyps, refs)
    assert zh["bleu"] > 30 > fr["bleu"]
    assert zh["chrf"] == fr["chrf"] and zh["length_ratio"] == 1.0
