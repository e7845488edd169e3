"""A tiny random Hugging Face Marian model folder, built offline (the HF tiny random-model fixture style).

d_model 32, 2+2 layers, 4 heads, swish, a non-zero final_logits_bias; a vocabulary from two
small sentencepiece models (English source, French target) trained here, plus a vocab.json
in Marian's convention ("</s>" 0, "<unk>" 1, ..., "<pad>" last); written with save_pretrained.

separate=True: source and target vocabularies of their own and of different sizes
(share_encoder_decoder_embeddings false, decoder_vocab_size, vocab.json + target_vocab.json,
written by Hugging Face's MarianTokenizer(separate_vocabs=True).save_pretrained). "<pad>" has
one id in both, below both sizes, as Hugging Face needs (both embeddings use it as padding_idx).
"""

from __future__ import annotations

import io
import itertools
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

NOUNS_EN = ["dog", "cat", "house", "car", "tree", "book", "table", "river", "garden", "window"]
NOUNS_FR = ["chien", "chat", "maison", "voiture", "arbre", "livre", "table", "rivière", "jardin", "fenêtre"]
ADJ_EN = ["big", "small", "red", "old", "tired", "happy", "heavy", "clean"]
ADJ_FR = ["grand", "petit", "rouge", "vieux", "fatigué", "heureux", "lourd", "propre"]


NOUNS_ZH = ["狗", "猫", "房子", "汽车", "树", "书", "桌子", "河", "花园", "窗户"]
ADJ_ZH = ["大", "小", "红", "旧", "累", "高兴", "重", "干净"]


def sentences_zh() -> tuple[list[str], list[str]]:
    """A few hundred English/Chinese pairs (the same English as sentences())."""
    en, zh = [], []
    for (ne, nz), (ae, az) in itertools.product(zip(NOUNS_EN, NOUNS_ZH), zip(ADJ_EN, ADJ_ZH)):
        en.append(f"The {ne} was too {ae}, so it stayed home.")
        zh.append(f"这个{nz}太{az}了，所以它留在家里。")
        en.append(f"I saw the {ae} {ne} near the river.")
        zh.append(f"我在河边看见了那{nz}。")
    return en, zh


def sentences() -> tuple[list[str], list[str]]:
    """A few hundred English/French pairs."""
    en, fr = [], []
    for (ne, nf), (ae, af) in itertools.product(zip(NOUNS_EN, NOUNS_FR), zip(ADJ_EN, ADJ_FR)):
        en.append(f"The {ne} was too {ae}, so it stayed home.")
        fr.append(f"Le {nf} était trop {af}, donc il est resté.")
        en.append(f"I saw the {ae} {ne} near the river.")
        fr.append(f"J'ai vu le {nf} {af} près de la rivière.")
    return en, fr


def train_spm(lines: list[str], vocab_size: int) -> bytes:
    import sentencepiece as spm

    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=buffer,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
    )
    return buffer.getvalue()


def marian_vocab(source: bytes, target: bytes) -> dict[str, int]:
    """Marian's convention: "</s>" 0, "<unk>" 1, the pieces of both models, "<pad>" last."""
    import sentencepiece as spm

    pieces: list[str] = []
    for data in (source, target):
        sp = spm.SentencePieceProcessor()
        sp.LoadFromSerializedProto(data)
        for i in range(sp.get_piece_size()):
            if not (sp.is_control(i) or sp.is_unknown(i)) and sp.id_to_piece(i) not in pieces:
                pieces.append(sp.id_to_piece(i))
    vocab = {"</s>": 0, "<unk>": 1}
    for p in pieces:
        vocab[p] = len(vocab)
    vocab["<pad>"] = len(vocab)
    return vocab


def _pieces(data: bytes) -> list[str]:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(data)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not (sp.is_control(i) or sp.is_unknown(i))]


def separate_vocabs(source: bytes, target: bytes) -> tuple[dict[str, int], dict[str, int]]:
    """One vocabulary per side: "</s>" 0, "<unk>" 1, that side's pieces, and "<pad>" at one id in both,
    the last of the smaller vocabulary (so below both sizes)."""
    sides = _pieces(source), _pieces(target)
    pad = 2 + min(len(p) for p in sides)
    vocabs = []
    for pieces in sides:
        vocab = {"</s>": 0, "<unk>": 1}
        for p in pieces:
            if len(vocab) == pad:
                vocab["<pad>"] = pad
            vocab[p] = len(vocab)
        vocab.setdefault("<pad>", len(vocab))
        vocabs.append(vocab)
    return vocabs[0], vocabs[1]


def make_marian_folder(
    path: Path,
    seed: int = 0,
    d_model: int = 32,
    layers: int = 2,
    heads: int = 4,
    eos_bias: float = 1.5,
    separate: bool = False,
    target_lang: str = "fr",
) -> Path:
    """Write a tiny random MarianMTModel folder at path (save_pretrained + the tokenizer's files); target_lang "zh"
    gives a Chinese target side (sentences_zh)."""
    import torch
    from transformers import MarianConfig, MarianMTModel

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    en, fr = sentences_zh() if target_lang == "zh" else sentences()
    if separate:
        source, target = train_spm(en, 120), train_spm(fr, 90)
        vocab, target_vocab = separate_vocabs(source, target)
        V, V_tgt, pad = len(vocab), len(target_vocab), vocab["<pad>"]
        assert V != V_tgt and target_vocab["<pad>"] == pad
    else:
        source, target = train_spm(en, 120), train_spm(fr, 120)
        vocab = marian_vocab(source, target)
        V = V_tgt = len(vocab)
        pad = V - 1
    config = MarianConfig(
        vocab_size=V,
        decoder_vocab_size=V_tgt,
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=2 * d_model,
        decoder_ffn_dim=2 * d_model,
        activation_function="swish",
        max_position_embeddings=512,
        scale_embedding=True,
        share_encoder_decoder_embeddings=not separate,
        pad_token_id=pad,
        decoder_start_token_id=pad,
        eos_token_id=0,
        forced_eos_token_id=None,
        dropout=0.1,
        attention_dropout=0.0,
        activation_dropout=0.0,
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    with torch.no_grad():
        # a random init of std 0.02 makes every map nearly uniform: widen it so that heads differ
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3 if "embed" in name or "shared" in name else 0.25)
        model.final_logits_bias.normal_(0.0, 0.5)  # non-zero: the import must carry it
        model.final_logits_bias[0, 0] += eos_bias  # some sentences end before the length limit
    model.generation_config.bad_words_ids = [[pad]]
    model.generation_config.forced_eos_token_id = None
    model.save_pretrained(path)
    if separate:
        _save_separate_tokenizer(path, source, target, vocab, target_vocab, target_lang)
    else:
        (path / "source.spm").write_bytes(source)
        (path / "target.spm").write_bytes(target)
        (path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        (path / "tokenizer_config.json").write_text(
            json.dumps(
                {"source_lang": "en", "target_lang": target_lang, "model_max_length": 512, "separate_vocabs": False}
            ),
            encoding="utf-8",
        )
    (path / "README.md").write_text(
        "---\nlicense: cc-by-4.0\ntags: [translation]\n---\n# tiny-marian\n* source languages: en\n"
        f"* target languages: {target_lang}\n",
        encoding="utf-8",
    )
    return path


def _save_separate_tokenizer(
    path: Path, source: bytes, target: bytes, vocab: dict, target_vocab: dict, target_lang: str = "fr"
) -> None:
    """The tokenizer's files as Hugging Face writes them: MarianTokenizer(separate_vocabs=True).save_pretrained."""
    import tempfile

    from transformers import MarianTokenizer

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, data in (("source.spm", source), ("target.spm", target)):
            (tmp / name).write_bytes(data)
        for name, data in (("vocab.json", vocab), ("target_vocab.json", target_vocab)):
            (tmp / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tok = MarianTokenizer(
            str(tmp / "source.spm"),
            str(tmp / "target.spm"),
            str(tmp / "vocab.json"),
            target_vocab_file=str(tmp / "target_vocab.json"),
            separate_vocabs=True,
            source_lang="en",
            target_lang=target_lang,
        )
        tok.save_pretrained(path)
