"""An opus-mt English → Chinese folder with separate vocabularies (issue 34): a tiny random Marian model whose
target side is Chinese imports, tokenizes and scores as Hugging Face does (the offline oracle), and every page
renders on it."""

from __future__ import annotations

import pytest
import torch
from apptest import EN, app, run
from marian_fixture import make_marian_folder, sentences_zh
from transformers import MarianMTModel
from transformers import MarianTokenizer as HFMarianTokenizer

from pages._ui.entry import SECTIONS
from transformer.checkpoint import load_checkpoint
from transformer.cli import main
from transformer.provenance import language_pair
from transformer.tokenizer import folds_full_width, restore_full_width

ATOL = 5e-5


@pytest.fixture(scope="module")
def zh_marian(tmp_path_factory):
    src = make_marian_folder(
        tmp_path_factory.mktemp("hf-zh") / "tiny-marian-en-zh", separate=True, eos_bias=4.0, target_lang="zh"
    )
    root = tmp_path_factory.mktemp("ours-zh")
    assert main(["import-marian", str(src), "--out", str(root / "opus-mt-en-zh")]) == 0
    return src, root


def test_a_chinese_target_imports_with_its_own_vocabulary_and_reads_as_hugging_face(zh_marian):
    src, root = zh_marian
    ckpt = load_checkpoint(root / "opus-mt-en-zh")
    tok, hf_tok = ckpt.tokenizer, HFMarianTokenizer.from_pretrained(src)
    assert ckpt.config.separate_vocabularies and tok.separate_vocabularies
    assert language_pair(ckpt.card) == ("en", "zh")
    en, zh = sentences_zh()
    for text in zh[:20] + ["我看见了一只猫。", "东京 ☃"]:
        _, target = tok.target_ids(text)
        assert target == hf_tok(text_target=text).input_ids, text
        assert tok.target_pieces(target) == hf_tok.convert_ids_to_tokens(target)
        # Hugging Face's decode keeps the "," sentencepiece folded "，" into; ours puts "，" back after Chinese
        assert tok.decode(target) == restore_full_width(hf_tok.decode(target, skip_special_tokens=True))
    assert any("\u4e00" <= ch <= "\u9fff" for p in tok.target_pieces(range(tok.target_vocab_size)) for ch in p)
    # teacher-forced logits as Hugging Face's model computes them
    hf = MarianMTModel.from_pretrained(src, attn_implementation="eager").eval()
    ckpt.model.eval()
    for s, t in list(zip(en, zh))[:4]:
        x = torch.tensor([tok.source_ids(s)])
        y = torch.tensor([tok.target_ids(t)[0]])
        with torch.no_grad():
            ours = ckpt.model(x, y).logits
            theirs = hf(input_ids=x, decoder_input_ids=y).logits
        torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=0)


@pytest.mark.parametrize("page", [m for entries in SECTIONS.values() for m, _, _ in entries])
def test_every_page_renders_on_the_imported_en_zh_model(zh_marian, monkeypatch, page):
    _, root = zh_marian
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(root))
    at = run(app(None if page == "explorer" else page, checkpoint="opus-mt-en-zh", text="The dog was too big."))
    assert at.session_state["checkpoint"] == "opus-mt-en-zh"
    assert at.selectbox(key="checkpoint").format_func("opus-mt-en-zh") == "opus-mt-en-zh · en → zh"
    if page == "explorer":
        route = " ".join(i.value for i in at.info)
        assert EN("marian.probe_not_french", lang="zh") in route


def test_an_en_zh_checkpoint_exports_as_a_marian_folder_with_separate_vocabularies(tmp_path):
    """Our en-zh (separate source and target sentencepiece models) written as a Hugging Face Marian folder:
    its tokenizer and model load there and compute the same logits; the folder says en → zh."""
    import json

    from zh_fixture import make_en_zh_checkpoint

    ckpt_path = make_en_zh_checkpoint(tmp_path / "en-zh")
    out = tmp_path / "hf-en-zh"
    assert main(["export-marian", str(ckpt_path), "--out", str(out)]) == 0
    config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert (config["source_lang"], config["target_lang"], config["separate_vocabs"]) == ("en", "zh", True)
    ckpt = load_checkpoint(ckpt_path)
    ckpt.model.eval()
    hf_tok = HFMarianTokenizer.from_pretrained(out)
    hf = MarianMTModel.from_pretrained(out, attn_implementation="eager").eval()
    for src, tgt in [("We must hold the south.", "我们必须守住南方。"), ("Flee to the islands!", "逃往群岛！")]:
        assert hf_tok(src).input_ids == ckpt.tokenizer.source_ids(src)
        assert hf_tok(text_target=tgt).input_ids == ckpt.tokenizer.target_ids(tgt)[1]
        x = torch.tensor([ckpt.tokenizer.source_ids(src)])
        y = torch.tensor([ckpt.tokenizer.target_ids(tgt)[0]])
        with torch.no_grad():
            torch.testing.assert_close(
                ckpt.model(x, y).logits, hf(input_ids=x, decoder_input_ids=y).logits, atol=ATOL, rtol=0
            )


def test_decoding_puts_back_the_full_width_punctuation_the_normalization_folded(zh_marian):
    """sentencepiece's nmt_nfkc folds "，：？！；" into ASCII on the way in; decoding a Chinese target writes them
    full-width again after Chinese characters, and leaves numbers, English and French alone."""
    src, root = zh_marian
    tok, hf_tok = load_checkpoint(root / "opus-mt-en-zh").tokenizer, HFMarianTokenizer.from_pretrained(src)
    text = "这个猫太累了，所以它留在家里。"  # (the tiny vocabulary knows no other mark)
    _, target = tok.target_ids(text)
    assert "，" not in "".join(tok.target_pieces(target))  # what the model reads and writes: ","
    assert hf_tok.decode(target, skip_special_tokens=True) == text.replace("，", ",")
    assert tok.decode(target) == text
    assert restore_full_width("图像, GIMP 使用: 真的吗? 是的! 好;") == "图像，GIMP 使用：真的吗？是的！好；"
    for kept in ("1,000 个", "Il fait beau, non?", "选择 File, Open", "图层 (Layer)"):
        assert restore_full_width(kept) == kept


def test_a_sentencepiece_model_that_keeps_full_width_punctuation_is_decoded_as_written():
    import io

    import sentencepiece as spm

    en, zh = sentences_zh()
    models = {}
    for rule in ("nmt_nfkc", "identity"):
        buffer = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(zh),
            model_writer=buffer,
            vocab_size=100,
            normalization_rule_name=rule,
            hard_vocab_limit=False,
            minloglevel=2,
        )
        models[rule] = spm.SentencePieceProcessor(model_proto=buffer.getvalue())
    assert folds_full_width(models["nmt_nfkc"]) and not folds_full_width(models["identity"])
