"""export_marian: one of our checkpoints written as a Hugging Face Marian folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from ..atomic import EXPORT_MARKER, OverwriteError, check_replaceable, is_our_export, write_folder
from ..checkpoint import CheckpointError, load_checkpoint
from ..layout import SOURCE_SPM, TARGET_SPM, VOCAB_FILE
from ..provenance import is_imported, language_pair
from ..tokenizer import Tokenizer
from .folder import HF_TOKENIZER_CONFIG, README, SAFETENSORS, MarianError
from .names import _permute, d_model_permutation, weight_names


def _languages(card: dict[str, Any]) -> dict[str, str]:
    """source_lang / target_lang for an exported folder: an import's own; ours as their corpora say (English ->
    French, or English -> Chinese: inspection.languages) unless trained on a file of the user's (then unknown)."""
    if is_imported(card):
        return {k: card[k] for k in ("source_lang", "target_lang") if isinstance(card.get(k), str)}
    train = card.get("train_config")
    if isinstance(train, dict) and train.get("data_file"):
        return {}
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
