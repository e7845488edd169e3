"""opus-mt (Marian) models in and out: a Hugging Face Marian folder <-> this project's checkpoint.

Marian is the paper's Transformer (post-LN, sinusoidal positions, tied embeddings scaled by
√d_model) with these measured differences, which the import carries:

- swish (SiLU) in the feed-forward (``activation``);
- sinusoidal positions laid out as [all sines | all cosines] along d_model, where the paper
  interleaves them: the import permutes the d_model axis of every weight that reads or writes
  the residual stream (embeddings, q/k/v and fc1 inputs, out-projection and fc2 outputs,
  LayerNorm parameters), which leaves every attention map and logit unchanged;
- ``final_logits_bias`` added to the logits (``output_bias``);
- decoder start = pad = the last id, eos = 0, no BOS; pad is never generated;
- a tokenizer of two sentencepiece models whose pieces map to ids through ``vocab.json``, or,
  for separate source and target vocabularies (``share_encoder_decoder_embeddings: false``),
  source pieces through ``vocab.json`` and target pieces through ``target_vocab.json``: the
  encoder's embedding has the source's rows, the decoder's (tied to the output projection) the
  target's (``TransformerConfig.tgt_vocab_size``);
- positions up to 512; fp16 weights cast to fp32.

Nothing is downloaded. Weights are read from ``model.safetensors``, or from
``pytorch_model.bin`` through ``torch.load(weights_only=True)`` only (never a full unpickle),
and only when the caller allows it. Everything is checked before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import Tensor

from ..atomic import EXPORT_MARKER, OverwriteError, check_replaceable, is_our_checkpoint, is_our_export, write_folder
from ..checkpoint import (
    MAX_JSON_BYTES,
    MAX_TOKENIZER_BYTES,
    CheckpointError,
    load_checkpoint,
    read_safetensors_header_guard,
    save_checkpoint,
)
from ..config import ConfigError, TransformerConfig
from ..layout import SOURCE_SPM, TARGET_SPM, TARGET_VOCAB, VOCAB_FILE, check_name, inside
from ..model import Transformer
from ..tokenizer import MarianTokenizer, Tokenizer, TokenizerError

SAFETENSORS, PICKLE = "model.safetensors", "pytorch_model.bin"
HF_TOKENIZER_CONFIG, README = "tokenizer_config.json", "README.md"
MAX_PARAMETERS = 2_000_000_000
MAX_WEIGHTS_BYTES = 8 * 2**30
SWISH = {"swish": "swish", "silu": "swish", "relu": "relu"}
IMPORTED = "imported-marian"  # card.json's "kind" of an imported checkpoint
FRENCH = ("fr", "fra", "fre", "french")
LIMITS = {  # far above opus-mt (512 positions, 6+6 layers, d_model 512 or 1024, ~60k pieces)
    "max_position_embeddings": 1024,
    "encoder_layers": 48,
    "decoder_layers": 48,
    "d_model": 4096,
    "vocab_size": 1_000_000,
    "decoder_vocab_size": 1_000_000,
}


class MarianError(ValueError):
    """A folder that is not a Marian model this project can import, or an export that cannot be written."""


def d_model_permutation(d_model: int) -> Tensor:
    """perm with ours[..., k] = marian[..., perm[k]]: Marian's sin i -> our 2i, its cos i -> our 2i + 1."""
    return torch.arange(d_model).view(2, d_model // 2).t().reshape(-1)


# ------------------------------------------------------------------------------------------- names


def _layer_names(prefix: str, ours: str, decoder: bool) -> dict[str, tuple[str, str]]:
    """Marian name -> (our name, how the d_model axis is permuted: "in", "out", "vec" or "").

    "in": a weight reading the residual stream (columns); "out": writing it (rows); "vec": a
    d_model vector (LayerNorm, an output bias); "": not on the d_model axis.
    """
    names: dict[str, tuple[str, str]] = {}

    def attention(theirs: str, mine: str) -> None:
        for p in "qkv":
            names[f"{prefix}.{theirs}.{p}_proj.weight"] = (f"{ours}.{mine}.w_{p}.weight", "in")
            names[f"{prefix}.{theirs}.{p}_proj.bias"] = (f"{ours}.{mine}.w_{p}.bias", "")
        names[f"{prefix}.{theirs}.out_proj.weight"] = (f"{ours}.{mine}.w_o.weight", "out")
        names[f"{prefix}.{theirs}.out_proj.bias"] = (f"{ours}.{mine}.w_o.bias", "vec")

    def norm(theirs: str, mine: str) -> None:
        names[f"{prefix}.{theirs}.weight"] = (f"{ours}.{mine}.weight", "vec")
        names[f"{prefix}.{theirs}.bias"] = (f"{ours}.{mine}.bias", "vec")

    attention("self_attn", "self_attn")
    norm("self_attn_layer_norm", "norm_1")
    if decoder:
        attention("encoder_attn", "cross_attn")
        norm("encoder_attn_layer_norm", "norm_2")
    names[f"{prefix}.fc1.weight"] = (f"{ours}.feed_forward.w_1.weight", "in")
    names[f"{prefix}.fc1.bias"] = (f"{ours}.feed_forward.w_1.bias", "")
    names[f"{prefix}.fc2.weight"] = (f"{ours}.feed_forward.w_2.weight", "out")
    names[f"{prefix}.fc2.bias"] = (f"{ours}.feed_forward.w_2.bias", "vec")
    norm("final_layer_norm", "norm_3" if decoder else "norm_2")
    return names


EMBEDDING_NAMES = (
    "model.shared.weight",
    "model.encoder.embed_tokens.weight",
    "model.decoder.embed_tokens.weight",
    "lm_head.weight",
)
SOURCE_EMBEDDING = "model.encoder.embed_tokens.weight"  # separate vocabularies: the source's rows
TARGET_EMBEDDINGS = ("model.decoder.embed_tokens.weight", "lm_head.weight")  # the target's rows, tied
POSITION_NAMES = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")


def weight_names(config: TransformerConfig) -> dict[str, tuple[str, str]]:
    """Every Marian layer weight -> (our name, its d_model permutation kind)."""
    names: dict[str, tuple[str, str]] = {}
    for i in range(config.n_encoder_layers):
        names.update(_layer_names(f"model.encoder.layers.{i}", f"encoder_layers.{i}", False))
    for i in range(config.n_decoder_layers):
        names.update(_layer_names(f"model.decoder.layers.{i}", f"decoder_layers.{i}", True))
    return names


def _permute(t: Tensor, how: str, perm: Tensor) -> Tensor:
    if how == "in":
        return t[:, perm]
    if how in ("out", "vec"):
        return t[perm]
    return t


# ------------------------------------------------------------------------------------------ import


@dataclass
class MarianFolder:
    """A validated Marian folder: our config, the weights' file, the tokenizer and what the card says."""

    path: Path
    config: TransformerConfig
    weights: Path
    tokenizer: MarianTokenizer
    hf_config: dict[str, Any]
    card: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _allowed_roots(src: Path) -> list[Path]:
    """Where the folder's files may really live: the folder, and for a Hugging Face cache snapshot
    (models--org--name/snapshots/<rev>/) the blobs/ folder of the same model."""
    roots = [src]
    if src.parent.name == "snapshots" and src.parent.parent.name.startswith("models--"):
        roots.append(src.parent.parent / "blobs")
    return roots


def _file(src: Path, name: str, roots: list[Path]) -> Path | None:
    """src/name when it exists; a symlink that leads outside the allowed roots is refused."""
    path = src / name
    if not path.exists() and not path.is_symlink():
        return None
    if not any(inside(root, path) for root in roots):
        raise MarianError(f"{name} in {src} is a link leading outside the model folder; nothing was read")
    if not path.is_file():
        raise MarianError(f"{name} in {src} is not a regular file")
    return path


def _json(path: Path, limit: int = MAX_JSON_BYTES) -> Any:
    if path.stat().st_size > limit:
        raise MarianError(f"{path.name} is larger than {limit} bytes")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MarianError(f"{path.name} is not valid JSON: {exc}") from None


def _int(cfg: dict[str, Any], key: str, default: Any = None) -> int:
    value = cfg.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MarianError(f"config.json: {key} must be an integer, got {value!r}")
    return value


def readme_facts(text: str) -> dict[str, Any]:
    """The licence and languages a Hugging Face README states (front matter, or opus-mt's bullet list)."""
    facts: dict[str, Any] = {}
    front = re.match(r"\A---\s*\n(.*?)\n---", text, re.S)
    if front:
        for line in front.group(1).splitlines():
            m = re.match(r"\s*licen[cs]e\s*:\s*(\S.*)$", line, re.I)
            if m:
                facts["licence"] = m.group(1).strip().strip("'\"")
    for key, pattern in (
        ("source_lang", r"source languages?\s*:\s*([\w\-, ]+)"),
        ("target_lang", r"target languages?\s*:\s*([\w\-, ]+)"),
    ):
        m = re.search(pattern, text, re.I)
        if m:
            facts[key] = m.group(1).strip()
    if "licence" not in facts:
        m = re.search(r"licen[cs]e\s*:\s*\**\s*([\w.\- ]+)", text, re.I)
        if m:
            facts["licence"] = m.group(1).strip()
    return facts


def _config(hf: dict[str, Any]) -> TransformerConfig:
    """Our config for a Marian config.json; refuses what our model cannot represent."""
    model_type = hf.get("model_type")
    if model_type != "marian":
        raise MarianError(
            f"config.json describes a {model_type!r} model, not a Marian (opus-mt) one; only Marian folders import"
        )
    archs = hf.get("architectures") or ["MarianMTModel"]
    if "MarianMTModel" not in archs:
        raise MarianError(f"config.json's architectures are {archs}; only MarianMTModel imports")
    shared = hf.get("share_encoder_decoder_embeddings", True)
    if not isinstance(shared, bool):
        raise MarianError(f"config.json: share_encoder_decoder_embeddings must be true or false, got {shared!r}")
    separate = not shared  # source and target vocabularies of their own (target_vocab.json)
    if hf.get("tie_word_embeddings", True) is not True:
        raise MarianError("an output projection not tied to the embeddings is not supported")
    if hf.get("scale_embedding", False) is not True:
        raise MarianError("embeddings without the √d_model scale (scale_embedding: false) are not supported")
    for key in ("normalize_before", "normalize_embedding", "add_final_layer_norm"):
        if hf.get(key):
            raise MarianError(f"{key}: true (a pre-LN or extra LayerNorm variant) is not supported")
    if hf.get("static_position_embeddings") is False:
        raise MarianError("learned positions (static_position_embeddings: false) are not supported")
    activation = SWISH.get(str(hf.get("activation_function", "swish")))
    if activation is None:
        raise MarianError(f"activation {hf.get('activation_function')!r} is not supported (swish or relu)")
    heads = {_int(hf, "encoder_attention_heads"), _int(hf, "decoder_attention_heads")}
    ffn = {_int(hf, "encoder_ffn_dim"), _int(hf, "decoder_ffn_dim")}
    if len(heads) != 1 or len(ffn) != 1:
        raise MarianError("encoder and decoder with different head counts or feed-forward widths are not supported")
    d_model = _int(hf, "d_model")
    for key, limit in LIMITS.items():  # before anything is built from these numbers
        if _int(hf, key, 0) > limit:
            raise MarianError(f"config.json: {key} = {hf[key]} is more than this app handles ({limit})")
    if d_model % 2:
        raise MarianError(f"d_model must be even, got {d_model}")
    pad = _int(hf, "pad_token_id")
    vocab_size = _int(hf, "vocab_size")
    tgt_vocab_size = None  # HF: decoder_vocab_size (default vocab_size) counts only where embeddings are not shared
    if separate:
        tgt_vocab_size = vocab_size if hf.get("decoder_vocab_size") is None else _int(hf, "decoder_vocab_size")
    try:
        config = TransformerConfig(
            vocab_size=vocab_size,
            n_encoder_layers=_int(hf, "encoder_layers"),
            n_decoder_layers=_int(hf, "decoder_layers"),
            d_model=d_model,
            n_heads=heads.pop(),
            d_ff=ffn.pop(),
            dropout=float(hf.get("dropout", 0.1)),
            attention_dropout=float(hf.get("attention_dropout", 0.0)),
            activation_dropout=float(hf.get("activation_dropout", 0.0)),
            max_len=_int(hf, "max_position_embeddings", 512),
            positional="sinusoidal",
            tie_embeddings=True,
            pad_id=pad,
            bos_id=_int(hf, "decoder_start_token_id", pad),
            eos_id=_int(hf, "eos_token_id", 0),
            activation=activation,
            output_bias=True,
            tgt_vocab_size=tgt_vocab_size,
        )
    except (ConfigError, TypeError, ValueError) as exc:
        raise MarianError(f"config.json cannot describe a model here: {exc}") from None
    return config


def _expected(config: TransformerConfig) -> dict[str, tuple[int, ...]]:
    """Marian weight name -> shape, for the layers (embeddings and the logits bias are checked apart)."""
    with torch.device("meta"):
        own = Transformer(config).state_dict()
    return {theirs: tuple(own[ours].shape) for theirs, (ours, _) in weight_names(config).items()}


_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def _check_shapes(found: dict[str, tuple[tuple[int, ...], str]], config: TransformerConfig, name: str) -> None:
    """Names, shapes and dtypes (from a header, nothing loaded) against what the config implies."""
    expected = _expected(config)
    V, V_tgt, d = config.vocab_size, config.target_vocab_size, config.d_model
    if config.separate_vocabularies:  # no model.shared.weight: the encoder's rows are the source's
        expected[SOURCE_EMBEDDING] = (V, d)
        expected[TARGET_EMBEDDINGS[0]] = (V_tgt, d)
        if TARGET_EMBEDDINGS[1] in found:
            expected[TARGET_EMBEDDINGS[1]] = (V_tgt, d)
        for key in (SOURCE_EMBEDDING, TARGET_EMBEDDINGS[0]):
            if key not in found:
                raise MarianError(f"{name} holds no {key}, which separate vocabularies need")
    else:
        for key in EMBEDDING_NAMES:
            if key in found:
                expected[key] = (V, d)
        if not any(k in found for k in EMBEDDING_NAMES):
            raise MarianError(f"{name} holds no embedding matrix (model.shared.weight)")
    expected["final_logits_bias"] = (1, V_tgt)
    for key in POSITION_NAMES:
        if key in found:
            expected[key] = (config.max_len, d)
    unexpected = sorted(set(found) - set(expected))[:5]
    missing = sorted(set(expected) - set(found) - {"final_logits_bias"})[:5]
    if unexpected or missing:
        raise MarianError(f"{name} does not match config.json: unexpected {unexpected}, missing {missing}")
    for key, shape in expected.items():
        if key in found:
            if found[key][0] != shape:
                raise MarianError(f"{name} does not match config.json: {key} has shape {found[key][0]}, not {shape}")
            if found[key][1] not in _DTYPES:
                raise MarianError(f"{name}: {key} has dtype {found[key][1]}, expected a float type")


def _safetensors_header(path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    try:
        read_safetensors_header_guard(path)
        with safe_open(str(path), framework="pt") as fh:
            return {k: (tuple(fh.get_slice(k).get_shape()), fh.get_slice(k).get_dtype()) for k in fh.keys()}
    except CheckpointError as exc:
        raise MarianError(str(exc)) from None
    except Exception as exc:  # SafetensorError and friends
        raise MarianError(f"{path.name} is corrupt: {exc}") from None


def inspect_folder(src: str | Path, *, allow_pickle: bool = True, target_lang: str | None = None) -> MarianFolder:
    """Validate a Marian folder completely (config, tokenizer files, weight names/shapes) without loading weights.

    Args:
        allow_pickle: read a pytorch_model.bin (through torch.load(weights_only=True)) when there is no
            model.safetensors; False refuses such a folder.
        target_lang: the target language, when the folder does not say it.
    """
    src = Path(src)
    if not src.is_dir():
        raise MarianError(f"{src} is not a folder")
    roots = _allowed_roots(src)
    files = {name: _file(src, name, roots) for name in ("config.json", SOURCE_SPM, TARGET_SPM, VOCAB_FILE)}
    missing = [name for name, path in files.items() if path is None]
    safetensors, pickled = _file(src, SAFETENSORS, roots), _file(src, PICKLE, roots)
    if safetensors is None and pickled is None:
        missing.append(f"{SAFETENSORS} (or {PICKLE})")
    if missing:
        raise MarianError(f"{src} is missing {', '.join(missing)}; it is not a complete Marian model folder")
    hf = _json(files["config.json"])
    if not isinstance(hf, dict):
        raise MarianError("config.json must be a JSON object")
    config = _config(hf)
    separate = config.separate_vocabularies
    files[TARGET_VOCAB] = _file(src, TARGET_VOCAB, roots)
    hf_tok = _file(src, HF_TOKENIZER_CONFIG, roots)
    tok_cfg = _json(hf_tok) if hf_tok is not None else {}
    said = tok_cfg.get("separate_vocabs") if isinstance(tok_cfg, dict) else None
    if separate and files[TARGET_VOCAB] is None:
        raise MarianError(
            f"{src} is missing {TARGET_VOCAB}: config.json gives source and target vocabularies of their own "
            "(share_encoder_decoder_embeddings: false), and the target's pieces need it"
        )
    if separate and said is False:
        raise MarianError(
            f"{HF_TOKENIZER_CONFIG} says separate_vocabs: false, but config.json gives source and target "
            "vocabularies of their own (share_encoder_decoder_embeddings: false)"
        )
    if not separate and (said or files[TARGET_VOCAB] is not None):
        raise MarianError(
            f"the folder has {TARGET_VOCAB if files[TARGET_VOCAB] is not None else 'separate_vocabs: true'} "
            "but config.json shares one vocabulary between source and target (share_encoder_decoder_embeddings)"
        )
    blobs = {}
    for name in (SOURCE_SPM, TARGET_SPM, VOCAB_FILE) + ((TARGET_VOCAB,) if separate else ()):
        if files[name].stat().st_size > MAX_TOKENIZER_BYTES:
            raise MarianError(f"{name} is larger than {MAX_TOKENIZER_BYTES} bytes")
        blobs[name] = files[name].read_bytes()
    try:
        tokenizer = MarianTokenizer.from_files(blobs, config.vocab_size, config.bos_id, config.tgt_vocab_size)
    except TokenizerError as exc:
        raise MarianError(f"the tokenizer does not fit the model: {exc}") from None
    if (tokenizer.special.pad, tokenizer.special.eos) != (config.pad_id, config.eos_id):
        raise MarianError(
            f"vocab.json does not fit config.json: <pad> is {tokenizer.special.pad} and </s> is "
            f"{tokenizer.special.eos}, config.json says pad_token_id {config.pad_id}, eos_token_id {config.eos_id}"
        )
    notes = []
    for path in (safetensors, pickled):
        if path is not None and path.stat().st_size > MAX_WEIGHTS_BYTES:
            raise MarianError(f"{path.name} is larger than {MAX_WEIGHTS_BYTES} bytes")
    if safetensors is not None:
        weights = safetensors
        found = _safetensors_header(weights)
    else:
        if not allow_pickle:
            raise MarianError(
                f"{src} holds only {PICKLE}, a pickle; reading it was refused. Convert it to {SAFETENSORS} "
                "where you trust it, or allow the restricted reader (torch.load(weights_only=True))"
            )
        weights = pickled
        found = {k: (tuple(v.shape), _dtype_name(v)) for k, v in _load_pickle(weights).items()}
        notes.append(f"{PICKLE} was read through torch.load(weights_only=True): tensors only, no code")
    _check_shapes(found, config, weights.name)
    n_params = sum(torch.Size(shape).numel() for shape, _ in found.values())
    if n_params > MAX_PARAMETERS:
        raise MarianError(f"{weights.name} holds {n_params} parameters, more than {MAX_PARAMETERS}")
    dtypes = sorted({dtype for _, dtype in found.values()})
    readme_path = _file(src, README, roots)
    facts = readme_facts(readme_path.read_text(encoding="utf-8", errors="replace")[:200_000]) if readme_path else {}
    licence = facts.get("licence") or hf.get("license") or hf.get("licence") or "not stated in the folder"
    langs = {
        "source_lang": (tok_cfg.get("source_lang") if isinstance(tok_cfg, dict) else None) or facts.get("source_lang"),
        "target_lang": target_lang
        or (tok_cfg.get("target_lang") if isinstance(tok_cfg, dict) else None)
        or facts.get("target_lang")
        or _lang_from_name(hf.get("_name_or_path") or _repo_name(src)),
    }
    conversions = [
        "d_model axis permuted: Marian's [sines | cosines] position layout to the paper's interleaved one "
        "(embeddings, q/k/v and fc1 inputs, out-projection and fc2 outputs, LayerNorms)",
        f"activation {hf.get('activation_function', 'swish')} -> config.activation = {config.activation!r}",
        "final_logits_bias -> the output projection's bias (config.output_bias)",
        f"special ids: decoder start {config.bos_id}, pad {config.pad_id}, eos {config.eos_id}",
        "weight names: Marian's -> ours (tied embeddings stored once)",
    ]
    if separate:
        conversions.append(
            f"separate source and target vocabularies: vocab.json ({config.vocab_size} rows) for the encoder's "
            f"embedding, target_vocab.json ({config.target_vocab_size} rows) for the decoder's, which is tied to "
            "the output projection (config.tgt_vocab_size)"
        )
    if any(d != "F32" for d in dtypes):
        conversions.append(f"weights cast from {', '.join(d for d in dtypes if d != 'F32')} to float32")
    card = {
        "kind": IMPORTED,
        "origin": {
            "folder": str(src.resolve()),
            "name_or_path": hf.get("_name_or_path"),
            "weights_file": weights.name,
            "weights_sha256": _sha256(weights),
            "transformers_version": hf.get("transformers_version"),
        },
        "licence": licence,
        **{k: v for k, v in langs.items() if v},
        "conversions": conversions,
        "notes": notes,
    }
    return MarianFolder(src, config, weights, tokenizer, hf, card, notes)


def _repo_name(src: Path) -> str:
    """The model's name: the folder's, or for a cache snapshot models--org--name/snapshots/<rev>, the name."""
    if src.parent.name == "snapshots" and src.parent.parent.name.startswith("models--"):
        return src.parent.parent.name.split("--")[-1]
    return src.name


def _lang_from_name(name: str) -> str | None:
    """opus-mt-en-fr -> "fr" (the last part of an opus-mt model's name)."""
    m = re.search(r"opus-mt-([a-z]{2,3}(?:_[A-Za-z]+)?)-([a-z]{2,3}(?:_[A-Za-z]+)?)$", str(name).rstrip("/"))
    return m.group(2) if m else None


def _dtype_name(t: Tensor) -> str:
    return {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}.get(t.dtype, str(t.dtype))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _load_pickle(path: Path) -> dict[str, Tensor]:
    """pytorch_model.bin through the restricted unpickler only: tensors and plain containers, no code."""
    try:
        try:
            state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as exc:  # a file in torch's legacy (pre-zip) format cannot be memory-mapped
            if "mmap" not in str(exc):
                raise
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError for anything beyond tensors, and corrupt files
        raise MarianError(f"{path.name} was refused by torch.load(weights_only=True): {exc}") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, Tensor) for k, v in state.items()):
        raise MarianError(f"{path.name} is not a state dict of tensors")
    return state


def _read_weights(folder: MarianFolder) -> dict[str, Tensor]:
    if folder.weights.name == SAFETENSORS:
        from safetensors.torch import load_file

        try:
            return load_file(str(folder.weights))
        except Exception as exc:
            raise MarianError(f"{SAFETENSORS} is corrupt: {exc}") from None
    return _load_pickle(folder.weights)


def convert_weights(state: dict[str, Tensor], config: TransformerConfig) -> dict[str, Tensor]:
    """Marian's weights as our state dict (float32, d_model axis permuted)."""
    perm = d_model_permutation(config.d_model)
    f32 = {k: v.float() for k, v in state.items()}
    for k, v in f32.items():
        if not torch.isfinite(v).all():
            raise MarianError(f"{k} contains NaN or infinite values")
    if config.separate_vocabularies:
        target = [f32[k] for k in TARGET_EMBEDDINGS if k in f32]
        if any(not torch.equal(target[0], e) for e in target[1:]):
            raise MarianError("lm_head.weight differs from the decoder's embedding (not tied); only tied ones import")
        ours = {"src_embed.weight": f32[SOURCE_EMBEDDING][:, perm], "tgt_embed.weight": target[0][:, perm]}
    else:
        embeddings = [f32[k] for k in EMBEDDING_NAMES if k in f32]
        if any(not torch.equal(embeddings[0], e) for e in embeddings[1:]):
            raise MarianError("the embedding matrices differ (not tied); only tied embeddings import")
        ours = {"src_embed.weight": embeddings[0][:, perm]}
    for theirs, (mine, how) in weight_names(config).items():
        ours[mine] = _permute(f32[theirs], how, perm)
    bias = f32.get("final_logits_bias", torch.zeros(1, config.target_vocab_size))
    ours["generator.bias"] = bias.reshape(-1)
    for key in POSITION_NAMES:
        if key in f32:
            table = marian_positions(config.max_len, config.d_model)
            if not torch.allclose(f32[key], table, atol=1e-3):
                raise MarianError(f"{key} is not Marian's sinusoidal table; learned positions are not supported")
    return ours


def marian_positions(max_len: int, d_model: int) -> Tensor:
    """Marian's sinusoidal table: [sin for each frequency | cos for each frequency]."""
    from ..positional import sinusoidal_table

    return sinusoidal_table(max_len, d_model)[:, torch.argsort(d_model_permutation(d_model))]


def import_marian(
    src: str | Path,
    out: str | Path,
    *,
    overwrite: bool = False,
    allow_pickle: bool = True,
    target_lang: str | None = None,
    inspected: MarianFolder | None = None,
) -> Path:
    """Import a Marian folder as a checkpoint at out (written atomically, nothing written on any error).

    inspected: what :func:`inspect_folder` returned for src, to skip checking it twice.
    """
    out = Path(out)
    try:
        check_name(out.name)
    except ValueError as exc:
        raise MarianError(f"--out {out}: {exc}") from None
    if out.exists() and not overwrite:
        raise MarianError(f"{out} already exists; pass --overwrite to replace it")
    if out.exists():  # refuse before the work (save_checkpoint checks again when it swaps)
        try:
            check_replaceable(out, is_our_checkpoint, "a checkpoint")
        except OverwriteError as exc:
            raise MarianError(str(exc)) from None
    folder = inspected or inspect_folder(src, allow_pickle=allow_pickle, target_lang=target_lang)
    state = convert_weights(_read_weights(folder), folder.config)
    model = Transformer(folder.config)
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = ("generator.weight",) if folder.config.separate_vocabularies else ("tgt_embed.weight", "generator.weight")
    if unexpected or [m for m in missing if m not in tied]:
        raise MarianError(f"internal: weights left over {unexpected[:5]} or missing {missing[:5]}")
    model.eval()
    try:
        return save_checkpoint(out, model, folder.tokenizer, folder.card, overwrite=overwrite)
    except CheckpointError as exc:
        raise MarianError(str(exc)) from None


# ------------------------------------------------------------------------------------------ export


def _languages(card: dict[str, Any]) -> dict[str, str]:
    """source_lang / target_lang for an exported folder: an import's own; ours as their corpora say (English ->
    French, or English -> Chinese: inspection.languages) unless trained on a file of the user's (then unknown)."""
    if is_imported(card):
        return {k: card[k] for k in ("source_lang", "target_lang") if isinstance(card.get(k), str)}
    train = card.get("train_config")
    if isinstance(train, dict) and train.get("data_file"):
        return {}
    from ..inspection.languages import language_pair

    src, tgt = language_pair(card)
    return {"source_lang": src or "en", "target_lang": tgt or "fr"}


def export_marian(checkpoint: str | Path, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write one of our checkpoints as a Hugging Face Marian folder (MarianMTModel + MarianTokenizer load it).

    Our tokenizer becomes source.spm = target.spm with a vocab.json of sentencepiece's own ids; the
    config keeps our special ids (pad 0, eos 3, decoder start = our <s>, 2) and relu. An import with
    separate vocabularies goes back as one: share_encoder_decoder_embeddings false, decoder_vocab_size,
    target_vocab.json and separate_vocabs in tokenizer_config.json.
    """
    out = Path(out)
    if out.name in ("", ".", ".."):
        out = out.resolve()
    if out.exists() and not overwrite:
        raise MarianError(f"{out} already exists; pass --overwrite to replace it")
    if out.exists() or out.is_symlink():  # refuse before the work (write_folder checks again when it swaps)
        try:
            check_replaceable(out, is_our_export, "an exported model")
        except OverwriteError as exc:
            raise MarianError(str(exc)) from None
    try:
        ckpt = load_checkpoint(checkpoint)
    except CheckpointError as exc:
        raise MarianError(f"cannot read {checkpoint}: {exc}") from None
    cfg = ckpt.config
    if cfg.positional != "sinusoidal":
        raise MarianError(f"Marian has sinusoidal positions only; this checkpoint's are {cfg.positional!r}")
    if not cfg.tie_embeddings:
        raise MarianError("Marian ties the embeddings with the output projection; this checkpoint does not")
    if cfg.d_model % 2:
        raise MarianError("d_model must be even")
    if isinstance(ckpt.tokenizer, Tokenizer):
        spm_bytes = ckpt.tokenizer.model_bytes
        sp = ckpt.tokenizer.sp
        vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
        tok_files = {SOURCE_SPM: spm_bytes, TARGET_SPM: spm_bytes}
    else:
        tok_files = ckpt.tokenizer.files()
        vocab = json.loads(tok_files.pop(VOCAB_FILE))
    inverse = torch.argsort(d_model_permutation(cfg.d_model))
    own = ckpt.model.state_dict()
    separate = cfg.separate_vocabularies
    if separate:  # as save_pretrained writes it: lm_head is tied to the decoder's embedding, not stored
        state = {
            "model.encoder.embed_tokens.weight": own["src_embed.weight"][:, inverse],
            "model.decoder.embed_tokens.weight": own["tgt_embed.weight"][:, inverse],
        }
    else:
        state = {"model.shared.weight": own["src_embed.weight"][:, inverse]}
    for theirs, (mine, how) in weight_names(cfg).items():
        state[theirs] = _permute(own[mine], how, inverse)
    bias = own.get("generator.bias")
    state["final_logits_bias"] = (bias if bias is not None else torch.zeros(cfg.target_vocab_size)).reshape(1, -1)
    hf_config = {
        "architectures": ["MarianMTModel"],
        "model_type": "marian",
        "vocab_size": cfg.vocab_size,
        "decoder_vocab_size": cfg.target_vocab_size,
        "d_model": cfg.d_model,
        "encoder_layers": cfg.n_encoder_layers,
        "decoder_layers": cfg.n_decoder_layers,
        "encoder_attention_heads": cfg.n_heads,
        "decoder_attention_heads": cfg.n_heads,
        "encoder_ffn_dim": cfg.d_ff,
        "decoder_ffn_dim": cfg.d_ff,
        "activation_function": cfg.activation,
        "max_position_embeddings": cfg.max_len,
        "dropout": cfg.dropout,
        "attention_dropout": cfg.attention_p,
        "activation_dropout": cfg.activation_p,
        "scale_embedding": True,
        "share_encoder_decoder_embeddings": not separate,
        "tie_word_embeddings": True,
        "is_encoder_decoder": True,
        "pad_token_id": cfg.pad_id,
        "eos_token_id": cfg.eos_id,
        "decoder_start_token_id": cfg.bos_id,
        "forced_eos_token_id": None,
    }
    generation = {
        "pad_token_id": cfg.pad_id,
        "eos_token_id": cfg.eos_id,
        "decoder_start_token_id": cfg.bos_id,
        "bad_words_ids": [[cfg.pad_id]],
        "max_length": cfg.max_len,
        "num_beams": 1,
    }
    tok_config = {
        "tokenizer_class": "MarianTokenizer",
        "model_max_length": cfg.max_len,
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "separate_vocabs": separate,
    }
    card = ckpt.card if isinstance(ckpt.card, dict) else {}
    tok_config.update(_languages(card))
    licence = card.get("licence") if isinstance(card.get("licence"), str) else None
    front = "library_name: transformers\ntags: [translation, marian]\n"
    if licence and licence != "not stated in the folder":
        front += f"license: {json.dumps(licence)}\n"
    readme = (
        f"---\n{front}---\n"
        f"# {Path(checkpoint).name}\n\nExported from this project's checkpoint `{Path(checkpoint).name}` by "
        "`python -m transformer export-marian`. The d_model axis was permuted to Marian's [sines | cosines] "
        "position layout; activation relu; special ids as trained here "
        f"(pad {cfg.pad_id}, eos {cfg.eos_id}, decoder start {cfg.bos_id}).\n"
    )
    if card.get("command"):
        readme += f"\nTrained with `{card['command']}`.\n"
    marker = {"exported_by": "python -m transformer export-marian", "checkpoint": Path(checkpoint).name}

    def fill(tmp: Path) -> None:
        save_file({k: v.detach().contiguous() for k, v in state.items()}, str(tmp / SAFETENSORS), {"format": "pt"})
        for name, data in {
            "config.json": hf_config,
            "generation_config.json": generation,
            HF_TOKENIZER_CONFIG: tok_config,
            VOCAB_FILE: vocab,
            EXPORT_MARKER: marker,
        }.items():
            (tmp / name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        for name, data in tok_files.items():
            (tmp / name).write_bytes(data)
        (tmp / README).write_text(readme, encoding="utf-8")

    try:
        write_folder(out, fill, overwrite=overwrite, recognise=is_our_export, what="an exported model")
    except OverwriteError as exc:
        raise MarianError(str(exc)) from None
    return out


# ------------------------------------------------------------------- what the app asks of an import


def is_imported(card: Any) -> bool:
    """Whether a checkpoint's card says it was imported from a Marian folder (not trained here)."""
    return isinstance(card, dict) and card.get("kind") == IMPORTED


def target_language(card: Any) -> str | None:
    """The target language an imported card states ("fr", "de", ...); None when it states none."""
    lang = card.get("target_lang") if isinstance(card, dict) else None
    return lang.strip() if isinstance(lang, str) and lang.strip() else None


def coreference_applies(card: Any) -> bool:
    """Whether our English -> French coreference sentences can probe the model: ours always; an import when
    its target language is French."""
    if not is_imported(card):
        return True
    lang = target_language(card)
    return lang is not None and re.split(r"[_\-]", lang.lower())[0] in FRENCH


def coreference_evaluation(model, tokenizer, examples, progress=None, chunk: int = 16) -> dict[str, Any]:
    """The coreference probe on examples in the card's "evaluation" format ({"n_sentences", "heads"}).

    One sentence per model call (no padding, so nothing depends on a tokenizer's pad id), in chunks
    of ``chunk`` sentences; progress(done, total) is called after each chunk.
    """
    import numpy as np

    from ..evaluate import PROBE_QUERIES, ProbeResult, coreference_probe

    total = len(examples)
    wins: dict[Any, np.ndarray] = {}
    n = 0
    for start in range(0, total, chunk):
        part = coreference_probe(model, tokenizer, examples[start : start + chunk], batch_size=1)
        for q in PROBE_QUERIES:
            wins[q] = wins.get(q, 0) + part.scores[q] * part.n_sentences
        n += part.n_sentences
        if progress is not None:
            progress(min(start + chunk, total), total)
    scores = {q: (w / n if n else w * 0.0) for q, w in wins.items()}
    return {"n_sentences": n, "heads": ProbeResult(n, scores).to_card()["heads"]}
