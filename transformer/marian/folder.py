"""A Hugging Face Marian folder checked completely before anything is read into a model: its files (links that
lead outside refused), config.json as our config, the tokenizer's files and vocabularies, the weights' names,
shapes and dtypes (from a header, nothing loaded), what its README says, and the card an import gets.
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
from torch import Tensor

from ..checkpoint import (
    MAX_JSON_BYTES,
    MAX_TOKENIZER_BYTES,
    CheckpointError,
    read_safetensors_header_guard,
)
from ..config import ConfigError, TransformerConfig
from ..layout import SOURCE_SPM, TARGET_SPM, TARGET_VOCAB, VOCAB_FILE, inside
from ..model import Transformer
from ..provenance import IMPORTED
from ..tokenizer import MarianTokenizer, TokenizerError
from .names import EMBEDDING_NAMES, POSITION_NAMES, SOURCE_EMBEDDING, TARGET_EMBEDDINGS, weight_names

SAFETENSORS, PICKLE = "model.safetensors", "pytorch_model.bin"
HF_TOKENIZER_CONFIG, README = "tokenizer_config.json", "README.md"
MAX_PARAMETERS = 2_000_000_000
MAX_WEIGHTS_BYTES = 8 * 2**30
SWISH = {"swish": "swish", "silu": "swish", "relu": "relu"}
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
