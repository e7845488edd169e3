"""opus-mt (Marian) import and export, checked against Hugging Face's own forward pass and generate().

transformers is a test-only oracle, run offline; the fixture is a tiny random MarianMTModel
(tests/marian_fixture.py) written with save_pretrained, with one vocabulary shared by source and
target ("shared") or a vocabulary per side, of different sizes ("separate": target_vocab.json).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
from pathlib import Path

import pytest
import torch
from conftest import run_cli
from marian_fixture import make_marian_folder, sentences

from transformer.checkpoint import load_checkpoint
from transformer.cli import main
from transformer.decoding import beam_search_hf, greedy_decode
from transformer.marian import d_model_permutation, marian_positions
from transformer.tokenizer import MarianTokenizer

# The oracle, a test-only dependency (requirements-test.txt), never skipped; imported after marian_fixture,
# which puts Hugging Face offline (HF_HUB_OFFLINE=1) before transformers reads its settings.
transformers = importlib.import_module("transformers")
HFMarianTokenizer = transformers.MarianTokenizer
MarianMTModel = transformers.MarianMTModel

TEXTS = [
    "The dog was too tired, so it stayed home.",
    "I saw the red car near the river.",
    "The cat was happy.",
    "I saw the old tree near the river.",
    "The book was too heavy, so it stayed home.",
    "The garden was clean.",
    "Zebras eat grass!",  # pieces the fixture's vocabulary barely knows
]
# float32 noise between the two implementations: ~1e-5 on an AVX2 CPU (1.07e-5 measured), less with AVX512
ATOL = 5e-5
VOCABS = ("shared", "separate")
both_vocabularies = pytest.mark.parametrize("vocabs", VOCABS)


class Folders:
    """Per vocabulary layout, made once a session: the Hugging Face folder, its import, HF's model and tokenizer."""

    def __init__(self, factory) -> None:
        self.factory, self.made = factory, {}

    def _once(self, key, make):
        if key not in self.made:
            self.made[key] = make()
        return self.made[key]

    def src(self, vocabs: str) -> Path:
        def make() -> Path:
            folder = self.factory.mktemp(f"hf-{vocabs}") / "tiny-marian"
            bias = {"shared": 1.5, "separate": 4.0}[vocabs]  # some of TEXTS end with EOS early, some do not
            return make_marian_folder(folder, separate=vocabs == "separate", eos_bias=bias)

        return self._once(("src", vocabs), make)

    def imported(self, vocabs: str) -> Path:
        def make() -> Path:
            out = self.factory.mktemp(f"ours-{vocabs}") / "tiny-marian"
            assert main(["import-marian", str(self.src(vocabs)), "--out", str(out)]) == 0
            return out

        return self._once(("imported", vocabs), make)

    def hf_model(self, vocabs: str):
        make = lambda: MarianMTModel.from_pretrained(self.src(vocabs), attn_implementation="eager").eval()  # noqa: E731
        return self._once(("model", vocabs), make)

    def hf_tok(self, vocabs: str):
        return self._once(("tok", vocabs), lambda: HFMarianTokenizer.from_pretrained(self.src(vocabs)))


@pytest.fixture(scope="session")
def folders(tmp_path_factory) -> Folders:
    return Folders(tmp_path_factory)


@pytest.fixture(scope="session")
def marian_src(folders) -> Path:
    return folders.src("shared")


@pytest.fixture(scope="session")
def imported(folders) -> Path:
    return folders.imported("shared")


@pytest.fixture(scope="session")
def hf_model(folders):
    return folders.hf_model("shared")


@pytest.fixture(scope="session")
def hf_tok(folders):
    return folders.hf_tok("shared")


def test_positions_permutation_maps_marian_layout_to_the_papers(hf_model):
    table = hf_model.model.encoder.embed_positions.weight.detach()
    ours = marian_positions(512, 32)
    torch.testing.assert_close(ours, table, atol=1e-6, rtol=0)
    perm = d_model_permutation(8)
    assert perm.tolist() == [0, 4, 1, 5, 2, 6, 3, 7]  # sin_i -> 2i, cos_i -> 2i + 1


@both_vocabularies
def test_config_and_card_say_what_was_converted(folders, vocabs):
    imported = folders.imported(vocabs)
    ckpt = load_checkpoint(imported)
    cfg = ckpt.config
    hf = json.loads((folders.src(vocabs) / "config.json").read_text())
    assert (cfg.activation, cfg.output_bias, cfg.d_model, cfg.n_heads, cfg.n_encoder_layers) == (
        "swish",
        True,
        32,
        4,
        2,
    )
    assert (cfg.vocab_size, cfg.target_vocab_size) == (hf["vocab_size"], hf["decoder_vocab_size"])
    assert (cfg.pad_id, cfg.bos_id, cfg.eos_id) == (hf["pad_token_id"], hf["pad_token_id"], 0)
    assert cfg.max_len == 512
    # opus-mt's three dropouts: residual 0.1, none on attention weights or inside the feed-forward
    assert (cfg.dropout, cfg.attention_p, cfg.activation_p) == (hf["dropout"], 0.0, 0.0)
    assert isinstance(ckpt.tokenizer, MarianTokenizer)
    separate = vocabs == "separate"
    assert cfg.separate_vocabularies is separate and ckpt.tokenizer.separate_vocabularies is separate
    if separate:  # rows of each side; the decoder's embedding is the output projection, stored once
        assert cfg.vocab_size != cfg.target_vocab_size and cfg.pad_id == min(cfg.vocab_size, cfg.target_vocab_size) - 1
        assert ckpt.model.src_embed.weight.shape[0] == cfg.vocab_size
        assert ckpt.model.tgt_embed.weight.shape[0] == ckpt.model.generator.weight.shape[0] == cfg.target_vocab_size
        assert ckpt.model.generator.weight is ckpt.model.tgt_embed.weight
        assert any("separate source and target vocabularies" in c for c in ckpt.card["conversions"])
    else:
        assert cfg.pad_id == cfg.vocab_size - 1 and cfg.tgt_vocab_size is None
        assert ckpt.model.tgt_embed is ckpt.model.src_embed
        assert not any("separate" in c for c in ckpt.card["conversions"])
    card = ckpt.card
    assert card["kind"] == "imported-marian" and card["licence"] == "cc-by-4.0"
    assert (card["source_lang"], card["target_lang"]) == ("en", "fr")
    assert any("permuted" in c for c in card["conversions"]) and any(
        "final_logits_bias" in c for c in card["conversions"]
    )
    assert len(card["origin"]["weights_sha256"]) == 64
    assert sorted(p.name for p in imported.iterdir()) == sorted(
        ["card.json", "config.json", "model.safetensors", "source.spm", "target.spm", "vocab.json"]
        + (["target_vocab.json"] if separate else [])
    )


@both_vocabularies
def test_tokenization_is_identical_to_marian_tokenizer(folders, vocabs):
    tok, hf_tok = load_checkpoint(folders.imported(vocabs)).tokenizer, folders.hf_tok(vocabs)
    assert hf_tok.separate_vocabs is (vocabs == "separate")
    # HF's convert_ids_to_tokens reads target ids (its decoder map); source ids are read through vocab.json
    source_piece = {i: p for p, i in hf_tok.get_src_vocab().items()}
    en, fr = sentences()
    typed_specials = ["hello </s> world", "a <unk> b", "x<pad>y", ">>fr<< The dog", "The </s>>>fr<< dog"]
    for text in TEXTS + en[:20] + ["", "  spaces  ", "Ünïcødé ☃ 東京", "The dog.\n\tcat"] + typed_specials:
        ids = hf_tok(text).input_ids
        assert tok.source_ids(text) == ids, text
        assert tok.source_pieces(ids) == [source_piece[i] for i in ids]
        if vocabs == "shared":  # (HF reads source ids through the target's map where the vocabularies differ)
            assert tok.pieces(ids) == tok.source_pieces(ids) == hf_tok.convert_ids_to_tokens(ids)
            assert tok.decode_source(ids) == hf_tok.decode(ids, skip_special_tokens=True, use_source_tokenizer=True)
        if text in en:
            assert tok.decode_source(ids) == text  # a truncated input is shown through the source's own pieces
    for text in fr[:20] + typed_specials + ["Zèbre ☃ rouge."]:
        _, target = tok.target_ids(text)
        assert target == hf_tok(text_target=text).input_ids, text
        assert tok.target_pieces(target) == hf_tok.convert_ids_to_tokens(target)
        assert tok.decode(target) == hf_tok.decode(target, skip_special_tokens=True)
        if text in fr:
            assert [i for i, *_ in tok.encode_with_offsets(text)] == target[:-1]  # one per decoder row
    every = list(range(tok.target_vocab_size))  # every target piece, also those only the other side's spm knows
    assert tok.target_pieces(every) == hf_tok.convert_ids_to_tokens(every)
    assert tok.decode(every) == hf_tok.decode(every, skip_special_tokens=True)
    assert tok.decode(every[::-1]) == hf_tok.decode(every[::-1], skip_special_tokens=True)
    assert tok.unknown_words("The dog ☃ sat") == ["☃"]  # from the tokenizer's own vocabulary: <unk>
    if vocabs == "separate":  # the two sides really differ: one id, two pieces; pieces() refuses to guess
        assert tok.source_pieces([5]) != tok.target_pieces([5])
        with pytest.raises(TypeError, match="source_pieces or target_pieces"):
            tok.pieces([5])


def _teacher(ckpt, hf_tok, text: str, target: str):
    src = torch.tensor([ckpt.tokenizer.source_ids(text)])
    tgt = torch.tensor([ckpt.tokenizer.target_ids(target)[0]])
    return src, tgt


@both_vocabularies
def test_logits_and_every_attention_map_match_hugging_face(folders, vocabs):
    ckpt, hf_model, hf_tok = load_checkpoint(folders.imported(vocabs)), folders.hf_model(vocabs), folders.hf_tok(vocabs)
    en, fr = sentences()
    for text, target in [(TEXTS[0], fr[0]), (TEXTS[1], fr[3]), (TEXTS[6], fr[5])]:
        src, tgt = _teacher(ckpt, hf_tok, text, target)
        assert tgt[0, 0] == hf_model.config.decoder_start_token_id
        with torch.no_grad():
            theirs = hf_model(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
            ours = ckpt.model(src, tgt, return_attention=True)
        assert ours.logits.shape[-1] == ckpt.config.target_vocab_size == hf_model.config.decoder_vocab_size
        torch.testing.assert_close(ours.logits, theirs.logits, atol=ATOL, rtol=0)
        for mine, hf in (
            (ours.attention.encoder, theirs.encoder_attentions),
            (ours.attention.decoder, theirs.decoder_attentions),
            (ours.attention.cross, theirs.cross_attentions),
        ):
            assert len(mine) == len(hf) == 2
            for a, b in zip(mine, hf):
                torch.testing.assert_close(a, b, atol=ATOL, rtol=0)
    # a padded batch: our padding mask from the pad id equals HF's attention_mask
    batch = hf_tok([TEXTS[0], TEXTS[2]], return_tensors="pt", padding=True)
    tgt = torch.tensor([ckpt.tokenizer.target_ids(fr[0])[0]] * 2)
    with torch.no_grad():
        theirs = hf_model(**batch, decoder_input_ids=tgt, output_attentions=True)
        ours = ckpt.model(batch.input_ids, tgt, return_attention=True)
    torch.testing.assert_close(ours.logits, theirs.logits, atol=ATOL, rtol=0)
    for a, b in zip(ours.attention.cross, theirs.cross_attentions):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)


@both_vocabularies
def test_greedy_and_beam_search_equal_generate(folders, vocabs):
    ckpt, hf_model, hf_tok = load_checkpoint(folders.imported(vocabs)), folders.hf_model(vocabs), folders.hf_tok(vocabs)
    ended_early = 0
    for text in TEXTS:
        src = torch.tensor([ckpt.tokenizer.source_ids(text)])
        hf1 = hf_model.generate(src, num_beams=1, do_sample=False, max_new_tokens=24)[0, 1:].tolist()
        hf4 = hf_model.generate(
            src, num_beams=4, do_sample=False, max_new_tokens=24, length_penalty=1.0, early_stopping=False
        )[0, 1:].tolist()
        ours1 = greedy_decode(ckpt.model, src, 24, return_attention=False).tokens
        ours4 = beam_search_hf(ckpt.model, src, 4, 24, length_penalty=1.0, return_attention=False).tokens
        pad = ckpt.config.pad_id
        assert ours1 == [t for t in hf1 if t != pad], text
        assert ours4 == [t for t in hf4 if t != pad], text
        assert pad not in ours1 + ours4
        assert ckpt.tokenizer.decode(ours4) == hf_tok.decode(hf4, skip_special_tokens=True)
        ended_early += ours4[-1] == ckpt.config.eos_id and len(ours4) < 24
    assert ended_early >= 1  # both ways of ending are exercised: EOS and the length limit
    assert ended_early < len(TEXTS)


@both_vocabularies
def test_beam_with_early_stopping_equals_generate(folders, vocabs):
    ckpt, hf_model = load_checkpoint(folders.imported(vocabs)), folders.hf_model(vocabs)
    for text in TEXTS[:4]:
        src = torch.tensor([ckpt.tokenizer.source_ids(text)])
        hf = hf_model.generate(
            src, num_beams=3, do_sample=False, max_new_tokens=16, early_stopping=True, length_penalty=0.6
        )
        ours = beam_search_hf(ckpt.model, src, 3, 16, length_penalty=0.6, early_stopping=True, return_attention=False)
        assert ours.tokens == [t for t in hf[0, 1:].tolist() if t != ckpt.config.pad_id], text


def assert_exported_agrees(hf, tok, ckpt, src, tgt, max_new: int):
    """An exported folder loaded in transformers (hf, tok) against our checkpoint: logits and cross maps to
    ATOL, greedy output = generate(num_beams=1), the same decoded text. Returns Hugging Face's output."""
    with torch.no_grad():
        theirs = hf(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
        ours = ckpt.model(src, tgt, return_attention=True)
    torch.testing.assert_close(theirs.logits, ours.logits, atol=ATOL, rtol=0)
    for a, b in zip(ours.attention.cross, theirs.cross_attentions):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)
    greedy = greedy_decode(ckpt.model, src, max_new, return_attention=False).tokens
    generated = hf.generate(src, num_beams=1, do_sample=False, max_new_tokens=max_new)[0, 1:].tolist()
    assert greedy == [t for t in generated if t != ckpt.config.pad_id]
    assert tok.decode(generated, skip_special_tokens=True) == ckpt.tokenizer.decode(greedy)
    return theirs


def test_export_round_trip_loads_in_transformers(trained_checkpoint, tmp_path):
    out = tmp_path / "exported"
    assert main(["export-marian", str(trained_checkpoint), "--out", str(out)]) == 0
    ckpt = load_checkpoint(trained_checkpoint)
    hf = MarianMTModel.from_pretrained(out, attn_implementation="eager").eval()
    tok = HFMarianTokenizer.from_pretrained(out)
    assert hf.config.activation_function == "relu"
    # our checkpoints from before the separate dropouts used P_drop everywhere: the export says so
    assert ckpt.config.attention_dropout is None
    assert hf.config.dropout == hf.config.attention_dropout == hf.config.activation_dropout == ckpt.config.dropout
    for text in ("The dog was too tired.", "The cat ate the fish because it was hungry."):
        ids = ckpt.tokenizer.source_ids(text)
        assert tok(text).input_ids == ids  # MarianTokenizer reads our joint tokenizer identically
        src = torch.tensor([ids])
        tgt = torch.tensor([ckpt.tokenizer.target_ids("Le chien était fatigué.")[0]])
        assert_exported_agrees(hf, tok, ckpt, src, tgt, 30)
    # and back: the exported folder imports again to the same logits
    again = tmp_path / "again"
    assert main(["import-marian", str(out), "--out", str(again)]) == 0
    back = load_checkpoint(again)
    assert (back.card["source_lang"], back.card["target_lang"]) == ("en", "fr")  # ours: English -> French
    src = torch.tensor([ckpt.tokenizer.source_ids("The dog was too tired.")])
    tgt = torch.tensor([[2, 5, 6]])
    torch.testing.assert_close(back.model(src, tgt).logits, ckpt.model(src, tgt).logits, atol=ATOL, rtol=0)


def test_fp16_weights_are_cast_to_fp32(marian_src, tmp_path):
    from safetensors.torch import load_file, save_file

    half = tmp_path / "half"
    shutil.copytree(marian_src, half)
    state = load_file(str(half / "model.safetensors"))
    save_file({k: v.half() for k, v in state.items()}, str(half / "model.safetensors"), {"format": "pt"})
    out = tmp_path / "ours-half"
    assert main(["import-marian", str(half), "--out", str(out)]) == 0
    ckpt = load_checkpoint(out)
    assert any("F16 to float32" in c for c in ckpt.card["conversions"])
    assert all(p.dtype == torch.float32 for p in ckpt.model.parameters())
    emb = state["model.shared.weight"].half().float()[:, d_model_permutation(32)]
    torch.testing.assert_close(ckpt.model.src_embed.weight, emb, atol=0, rtol=0)


def test_a_hugging_face_cache_snapshot_imports(marian_src, tmp_path):
    """A snapshot folder's files are links into the same model's blobs/: those are allowed."""
    repo = tmp_path / "hub" / "models--Helsinki-NLP--opus-mt-en-fr"
    snap = repo / "snapshots" / "0123abcd"
    (repo / "blobs").mkdir(parents=True)
    snap.mkdir(parents=True)
    for f in marian_src.iterdir():
        if f.name in ("README.md", "tokenizer_config.json"):
            continue  # then the target language comes from the model's name
        blob = repo / "blobs" / f"blob-{f.name}"
        shutil.copy(f, blob)
        (snap / f.name).symlink_to(os.path.relpath(blob, snap))
    out = tmp_path / "opus-mt-en-fr"
    assert main(["import-marian", str(snap), "--out", str(out)]) == 0
    card = load_checkpoint(out).card
    assert card["target_lang"] == "fr" and card["licence"] == "not stated in the folder"


def test_which_imports_the_coreference_probe_applies_to():
    from transformer.provenance import coreference_applies

    card = {"kind": "imported-marian"}
    assert [coreference_applies({**card, "target_lang": lang}) for lang in ("fr", "fra", "fr_CA", "de", "ROMANCE")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert not coreference_applies(card)  # an import that states no target language
    assert coreference_applies({"evaluation": {}})  # ours always


@pytest.mark.slow
def test_pickle_only_folder_reads_through_weights_only(marian_src, hf_model, tmp_path):
    folder = tmp_path / "pickled"
    shutil.copytree(marian_src, folder)
    (folder / "model.safetensors").unlink()
    torch.save(hf_model.state_dict(), folder / "pytorch_model.bin")
    # refused when the user says no: a clear message, nothing written
    out = tmp_path / "refused"
    result = run_cli("import-marian", str(folder), "--out", str(out), "--pickle", "no")
    assert result.returncode == 2 and "pickle" in result.stderr and "refused" in result.stderr
    assert not out.exists()
    # allowed: read through the restricted unpickler, with a note
    out = tmp_path / "allowed"
    result = run_cli("import-marian", str(folder), "--out", str(out), "--pickle", "yes")
    assert result.returncode == 0, result.stderr
    assert "weights_only=True" in result.stderr
    ckpt = load_checkpoint(out)
    assert any("weights_only=True" in n for n in ckpt.card["notes"])
    src = torch.tensor([ckpt.tokenizer.source_ids(TEXTS[0])])
    tgt = torch.tensor([[ckpt.config.bos_id, 4, 5]])
    with torch.no_grad():
        torch.testing.assert_close(
            ckpt.model(src, tgt).logits, hf_model(input_ids=src, decoder_input_ids=tgt).logits, atol=ATOL, rtol=0
        )


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch PICKLE_RAN_MARKER",))


def link_out(folder: Path, name: str, tmp_path: Path) -> Path:
    """folder with its file `name` moved outside and replaced by a symlink to it."""
    secret = tmp_path / f"elsewhere-{folder.name}-{name}"
    shutil.move(folder / name, secret)
    (folder / name).symlink_to(secret)
    return folder


def _bad_import(capsys, src: Path, out: Path, *extra: str) -> str:
    before = sorted(p.name for p in out.parent.iterdir()) if out.parent.exists() else []
    assert main(["import-marian", str(src), "--out", str(out), *extra]) == 2
    after = sorted(p.name for p in out.parent.iterdir()) if out.parent.exists() else []
    assert after == before  # nothing written, no temporary folder left behind
    return capsys.readouterr().err


def test_bad_folders_give_a_clear_message_and_write_nothing(marian_src, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / "imported"

    def copy(name: str) -> Path:
        return Path(shutil.copytree(marian_src, tmp_path / name))

    missing = copy("missing")
    (missing / "target.spm").unlink()
    assert "missing target.spm" in _bad_import(capsys, missing, out)

    no_weights = copy("no-weights")
    (no_weights / "model.safetensors").unlink()
    assert "missing model.safetensors" in _bad_import(capsys, no_weights, out)

    for model_type, arch in (("bart", "BartForConditionalGeneration"), ("t5", "T5ForConditionalGeneration")):
        other = copy(model_type)
        cfg = json.loads((other / "config.json").read_text())
        cfg.update(model_type=model_type, architectures=[arch])
        (other / "config.json").write_text(json.dumps(cfg))
        assert f"a '{model_type}' model, not a Marian" in _bad_import(capsys, other, out)

    big = copy("vocab-too-big")
    vocab = json.loads((big / "vocab.json").read_text())
    vocab["▁extra"] = len(vocab)
    (big / "vocab.json").write_text(json.dumps(vocab))
    assert "does not fit the model" in _bad_import(capsys, big, out)

    shifted = copy("vocab-pad")
    vocab = json.loads((shifted / "vocab.json").read_text())
    first = next(p for p, i in vocab.items() if i == 2)
    vocab[first], vocab["<pad>"] = vocab["<pad>"], 2
    (shifted / "vocab.json").write_text(json.dumps(vocab))
    assert "vocab.json does not fit config.json" in _bad_import(capsys, shifted, out)

    assert "link leading outside" in _bad_import(capsys, link_out(copy("linked"), "source.spm", tmp_path), out)

    shapes = copy("shapes")
    cfg = json.loads((shapes / "config.json").read_text())
    cfg["d_model"] = 64
    (shapes / "config.json").write_text(json.dumps(cfg))
    assert "does not match config.json" in _bad_import(capsys, shapes, out)

    huge = copy("huge")
    cfg = json.loads((huge / "config.json").read_text())
    cfg["max_position_embeddings"] = 10**9  # would be a 4 TB position table
    (huge / "config.json").write_text(json.dumps(cfg))
    assert "more than this app handles" in _bad_import(capsys, huge, out)

    pickled = copy("pickled")
    (pickled / "model.safetensors").unlink()
    torch.save({"x": _Boom()}, pickled / "pytorch_model.bin")
    assert "refused" in _bad_import(capsys, pickled, out, "--pickle", "no")
    assert "weights_only" in _bad_import(capsys, pickled, out, "--pickle", "yes")  # the hostile pickle is refused
    assert not (tmp_path / "PICKLE_RAN_MARKER").exists()

    assert main(["import-marian", str(marian_src), "--out", str(out)]) == 0
    stamp = (out / "model.safetensors").stat().st_mtime_ns
    assert "already exists" in _bad_import(capsys, marian_src, out)
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp
    assert main(["import-marian", str(marian_src), "--out", str(out), "--overwrite"]) == 0


@both_vocabularies
def test_every_page_renders_on_an_imported_tiny_marian(folders, vocabs, monkeypatch):
    import html

    from apptest import app, figures, run

    root = folders.imported(vocabs).parent
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(root))
    text = "The dog was too tired, so it stayed home."
    tok = load_checkpoint(folders.imported(vocabs)).tokenizer
    for page in ("explorer", "headlab", "masks", "positions", "arithmetic", "multihead", "variants"):
        at = run(app(page, checkpoint="tiny-marian", text=text))
        assert at.session_state["checkpoint"] == "tiny-marian"
        figs = figures(at)
        assert figs or page == "headlab", page
        if page == "explorer":  # labels from the right vocabulary: source pieces on the keys, target on the queries
            label = lambda v: html.unescape(v.replace("\u200b", ""))  # noqa: E731 (labels are made distinct)
            cross = figs["head_cross"]["data"][0]
            assert [label(x) for x in cross["x"]] == tok.source_pieces(tok.source_ids(text))
            assert [label(x) for x in figs["head_encoder"]["data"][0]["y"]] == tok.source_pieces(tok.source_ids(text))
            targets = set(tok.target_vocab)
            assert cross["y"] and all(label(y) in targets for y in cross["y"])


def test_all_heads_overview_stays_legible_at_48_heads_per_kind():
    import numpy as np

    from pages._ui import figures
    from pages._ui.i18n import Translator

    weights = np.random.default_rng(0).dirichlet(np.ones(30), size=(6, 8, 30)).astype(np.float32)  # (L, H, T, S)
    fig = figures.heads_overview(weights, Translator("en"), "all")
    z = np.asarray(fig.data[0].z)
    assert z.shape == (6 * 31 - 1, 8 * 31 - 1)  # 48 tiles, one cell gap between them
    tile_px = figures.OVERVIEW_WIDTH_PX * 30 / z.shape[1]
    assert tile_px > 80  # each head's tile is ~85 px wide at the page's width
    # square cells: the height follows the tiles' aspect (no squeezed strip, no tall empty band)
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert abs(plot_h / figures.OVERVIEW_WIDTH_PX - z.shape[0] / z.shape[1]) < 0.05
    assert len(fig.data[1].x) == 48 and 6 <= fig.data[1].marker.size <= tile_px / 3


@pytest.fixture(scope="session")
def imported_6x8(tmp_path_factory) -> Path:
    """An imported Marian of the paper's shape (6+6 layers, 8 heads), tiny in width (d_model 32)."""
    src = make_marian_folder(tmp_path_factory.mktemp("hf68") / "opus-mt-en-fr", layers=6, heads=8)
    root = tmp_path_factory.mktemp("root68")
    assert main(["import-marian", str(src), "--out", str(root / "opus-mt-en-fr")]) == 0
    other = root / "opus-mt-en-de"
    shutil.copytree(root / "opus-mt-en-fr", other)
    card = json.loads((other / "card.json").read_text())
    card["target_lang"] = "de"
    (other / "card.json").write_text(json.dumps(card))
    return root


@pytest.mark.slow
def test_every_page_renders_on_an_imported_marian_of_the_papers_shape(imported_6x8, monkeypatch):
    from apptest import app, figures, run, settle

    from pages._ui.i18n import Translator

    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(imported_6x8))
    text = "The dog was too tired, so it stayed home."
    at = run(app(checkpoint="opus-mt-en-fr", text=text))
    assert at.get("progress"), "the probe runs in the background lane, the page shows its progress"
    settle(at)
    figs = figures(at)
    assert figs, "the explorer shows figures"
    infos = [i.value for i in at.info]
    prefix = Translator("en")("marian.probe_prefix", n=0).split("0")[0]
    assert any(v.startswith(prefix) for v in infos), infos  # the probe ran on demand and the route was stated
    assert not at.warning or all("corpus" not in w.value for w in at.warning)  # no notes from our corpus's words
    # pickers follow the model's shape: 6 layers, 8 heads
    layer_boxes = [s for s in at.selectbox if s.key and s.key.endswith("_layer")]
    head_boxes = [s for s in at.selectbox if s.key and s.key.endswith("_head")]
    assert layer_boxes and all(list(s.options) == [str(i) for i in range(6)] for s in layer_boxes)
    assert head_boxes and all(list(s.options) == [str(i) for i in range(8)] for s in head_boxes)
    for page in ("headlab", "masks", "positions", "arithmetic", "multihead", "variants"):
        at = run(app(page, checkpoint="opus-mt-en-fr", text=text))
        assert at.session_state["checkpoint"] == "opus-mt-en-fr", page
    # notes on unknown input come from the model's own vocabulary (<unk>), never from our corpus's words
    en = Translator("en")
    at = run(app(checkpoint="opus-mt-en-fr", text="The zebra ☃ was too tired."))
    warnings = [w.value for w in at.warning]
    assert en("sentence.unknown_chars") in warnings
    assert any("☃" in t.value.split(", ") for t in at.text)  # listed: the tokenizer writes it as <unk>
    unseen = en("sentence.unseen", n=1).split(" ", 1)[1]  # "word(s) of this sentence never occur in ..."
    assert not any(unseen in w for w in warnings)  # "zebra" is not in our corpus, and that is no note here
    # another target language: the probe's parts say why they do not apply
    at = run(app(checkpoint="opus-mt-en-de", text=text))
    expected = Translator("en")("marian.probe_not_french", lang="de")
    assert expected in [i.value for i in at.info]


def test_the_probe_of_an_import_is_the_cards_probe_computed_in_chunks(trained_checkpoint):
    from transformer.corpus import CorpusSpec, generate_test
    from transformer.evaluate import coreference_evaluation, coreference_probe

    ckpt = load_checkpoint(trained_checkpoint)
    examples = generate_test(CorpusSpec.from_card(ckpt.card))[:40]
    seen = []
    chunked = coreference_evaluation(ckpt.model, ckpt.tokenizer, examples, lambda d, t: seen.append((d, t)), chunk=16)
    whole = coreference_probe(ckpt.model, ckpt.tokenizer, examples, batch_size=1).to_card()
    assert seen == [(16, 40), (32, 40), (40, 40)]  # the progress bar's steps
    assert chunked["n_sentences"] == whole["n_sentences"] > 20
    assert {(h["kind"], h["query"], h["layer"], h["head"]): h["score"] for h in chunked["heads"]} == {
        (h["kind"], h["query"], h["layer"], h["head"]): h["score"] for h in whole["heads"]
    }


def test_a_hostile_config_cannot_make_a_checkpoint_allocate_a_huge_position_table(imported, tmp_path):
    from transformer.checkpoint import CheckpointError

    bad = Path(shutil.copytree(imported, tmp_path / "bad"))
    cfg = json.loads((bad / "config.json").read_text())
    cfg["max_len"] = 10**9  # the sinusoidal table is not stored, so no weight's shape would catch it
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="max_len = 1000000000 is more than this app handles"):
        load_checkpoint(bad)
    cfg["max_len"], cfg["vocab_size"] = 512, cfg["vocab_size"] + 1
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="weights do not match config.json"):
        load_checkpoint(bad)


@both_vocabularies
def test_an_import_exports_back_to_the_same_hugging_face_model(folders, vocabs, tmp_path):
    ckpt = load_checkpoint(folders.imported(vocabs))
    out = tmp_path / "exported"
    assert main(["export-marian", str(folders.imported(vocabs)), "--out", str(out)]) == 0
    separate = vocabs == "separate"
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["share_encoder_decoder_embeddings"] is not separate
    assert (cfg["vocab_size"], cfg["decoder_vocab_size"]) == (ckpt.config.vocab_size, ckpt.config.target_vocab_size)
    assert json.loads((out / "tokenizer_config.json").read_text())["separate_vocabs"] is separate
    assert (out / "target_vocab.json").exists() is separate
    hf = MarianMTModel.from_pretrained(out, attn_implementation="eager").eval()
    tok = HFMarianTokenizer.from_pretrained(out)
    original = folders.hf_model(vocabs)
    en, fr = sentences()
    for text, target in [(TEXTS[0], fr[0]), (TEXTS[6], fr[5])]:
        ids = ckpt.tokenizer.source_ids(text)
        assert tok(text).input_ids == ids
        assert tok(text_target=target).input_ids == ckpt.tokenizer.target_ids(target)[1]
        src, tgt = torch.tensor([ids]), torch.tensor([ckpt.tokenizer.target_ids(target)[0]])
        theirs = assert_exported_agrees(hf, tok, ckpt, src, tgt, 24)
        with torch.no_grad():
            before = original(input_ids=src, decoder_input_ids=tgt)
        torch.testing.assert_close(theirs.logits, before.logits, atol=ATOL, rtol=0)  # the folder it came from
    again = tmp_path / "again"
    assert main(["import-marian", str(out), "--out", str(again)]) == 0
    back = load_checkpoint(again)
    assert back.config == ckpt.config
    src, tgt = torch.tensor([ckpt.tokenizer.source_ids(TEXTS[1])]), torch.tensor([[ckpt.config.bos_id, 4, 5]])
    torch.testing.assert_close(back.model(src, tgt).logits, ckpt.model(src, tgt).logits, atol=0, rtol=0)


def test_bad_separate_vocabulary_folders_give_a_clear_message_and_write_nothing(folders, tmp_path, capsys):
    src = folders.src("separate")
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / "imported"

    def copy(name: str, base: Path = src) -> Path:
        return Path(shutil.copytree(base, tmp_path / name))

    def edit(path: Path, change) -> None:
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    missing = copy("no-target-vocab")
    (missing / "target_vocab.json").unlink()
    assert "missing target_vocab.json" in _bad_import(capsys, missing, out)

    big = copy("target-vocab-too-big")
    edit(big / "target_vocab.json", lambda v: v.update({"▁extra": len(v)}))
    err = _bad_import(capsys, big, out)
    assert "target_vocab.json does not fit the model" in err and "64 rows" in err

    small = copy("decoder-rows")  # config.json's decoder_vocab_size below target_vocab.json's ids
    edit(small / "config.json", lambda c: c.update(decoder_vocab_size=c["decoder_vocab_size"] - 1))
    assert "target_vocab.json does not fit the model" in _bad_import(capsys, small, out)

    pad = copy("target-pad")  # </s>, <unk>, <pad> must have vocab.json's ids (HF reads them from there)
    edit(pad / "target_vocab.json", lambda v: v.update({"<pad>": v["<unk>"], "<unk>": v["<pad>"]}))
    assert "other ids than vocab.json" in _bad_import(capsys, pad, out)

    said = copy("said-shared")
    edit(said / "tokenizer_config.json", lambda t: t.update(separate_vocabs=False))
    assert "separate_vocabs: false" in _bad_import(capsys, said, out)

    linked = link_out(copy("target-linked"), "target_vocab.json", tmp_path)
    assert "link leading outside" in _bad_import(capsys, linked, out)

    shared = copy("stray", folders.src("shared"))  # one vocabulary, and a target_vocab.json beside it
    shutil.copy(shared / "vocab.json", shared / "target_vocab.json")
    assert "shares one vocabulary" in _bad_import(capsys, shared, out)

    weights = copy("shared-weights")  # the config says separate, the weights hold one shared matrix
    from safetensors.torch import load_file, save_file

    state = load_file(str(weights / "model.safetensors"))
    state["model.shared.weight"] = state.pop("model.encoder.embed_tokens.weight")
    save_file(state, str(weights / "model.safetensors"), {"format": "pt"})
    assert "holds no model.encoder.embed_tokens.weight" in _bad_import(capsys, weights, out)


def test_a_separate_vocabulary_checkpoint_is_checked_when_loaded(folders, tmp_path):
    from transformer.checkpoint import CheckpointError

    good = folders.imported("separate")

    def broken(name: str) -> Path:
        return Path(shutil.copytree(good, tmp_path / name))

    bad = broken("no-target-vocab")
    (bad / "target_vocab.json").unlink()
    with pytest.raises(CheckpointError, match="tgt_vocab_size 64.*no target_vocab.json"):
        load_checkpoint(bad)
    bad = broken("target-id")
    vocab = json.loads((bad / "target_vocab.json").read_text())
    vocab["▁extra"] = 64
    (bad / "target_vocab.json").write_text(json.dumps(vocab))
    with pytest.raises(CheckpointError, match="target_vocab.json does not fit the model"):
        load_checkpoint(bad)
    bad = broken("rows")  # a config asking for more target rows than the weights hold: refused from the header
    cfg = json.loads((bad / "config.json").read_text())
    cfg["tgt_vocab_size"] = 10**6
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="weights do not match config.json"):
        load_checkpoint(bad)
    stray = Path(shutil.copytree(folders.imported("shared"), tmp_path / "stray"))
    shutil.copy(stray / "vocab.json", stray / "target_vocab.json")
    with pytest.raises(CheckpointError, match="one vocabulary for both sides"):
        load_checkpoint(stray)
    # a config.json written before tgt_vocab_size existed still loads, as one shared vocabulary
    old = Path(shutil.copytree(folders.imported("shared"), tmp_path / "old"))
    cfg = json.loads((old / "config.json").read_text())
    assert cfg.pop("tgt_vocab_size") is None
    (old / "config.json").write_text(json.dumps(cfg))
    assert load_checkpoint(old).config.target_vocab_size == cfg["vocab_size"]


def test_config_bounds_each_special_id_by_its_side():
    from transformer.config import ConfigError, TransformerConfig

    cfg = TransformerConfig(vocab_size=10, tgt_vocab_size=6, pad_id=5, bos_id=5, eos_id=0)
    assert (cfg.target_vocab_size, cfg.separate_vocabularies) == (6, True)
    assert TransformerConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="pad_id"):  # pad pads both sides
        TransformerConfig(vocab_size=10, tgt_vocab_size=6, pad_id=7, bos_id=5, eos_id=0)
    with pytest.raises(ConfigError, match="bos_id must be a target token id"):
        TransformerConfig(vocab_size=10, tgt_vocab_size=6, pad_id=5, bos_id=8, eos_id=0)
    with pytest.raises(ConfigError, match="eos_id must be a target token id"):
        TransformerConfig(vocab_size=12, tgt_vocab_size=4, pad_id=0, bos_id=2, eos_id=9)
    with pytest.raises(ConfigError, match="tgt_vocab_size"):
        TransformerConfig(vocab_size=10, tgt_vocab_size=0)


def test_the_three_dropouts_default_to_one_and_are_checked():
    from transformer.config import ConfigError, TransformerConfig
    from transformer.model import Transformer

    old = TransformerConfig.from_dict({"vocab_size": 20, "d_model": 16, "n_heads": 2, "d_ff": 32, "dropout": 0.2})
    assert (old.attention_p, old.activation_p) == (0.2, 0.2)  # a config file from before: dropout everywhere
    paper = TransformerConfig(
        vocab_size=20, d_model=16, n_heads=2, d_ff=32, attention_dropout=0.0, activation_dropout=0.0
    )
    assert (paper.dropout, paper.attention_p, paper.activation_p) == (0.1, 0.0, 0.0)
    assert TransformerConfig.from_dict(paper.to_dict()) == paper
    model = Transformer(paper)
    layer = model.decoder_layers[0]
    assert layer.self_attn.dropout == layer.cross_attn.dropout == layer.feed_forward.dropout.p == 0.0
    assert layer.dropout.p == model.encoder_layers[0].dropout.p == model.dropout.p == 0.1  # residual dropout stays
    for bad in (-0.1, 1.0, "0.1", True):
        with pytest.raises(ConfigError, match="attention_dropout"):
            TransformerConfig(vocab_size=20, attention_dropout=bad)
        with pytest.raises(ConfigError, match="activation_dropout"):
            TransformerConfig(vocab_size=20, activation_dropout=bad)
