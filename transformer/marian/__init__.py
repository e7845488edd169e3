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

from .exporting import export_marian
from .folder import (
    HF_TOKENIZER_CONFIG,
    LIMITS,
    MAX_PARAMETERS,
    MAX_WEIGHTS_BYTES,
    PICKLE,
    README,
    SAFETENSORS,
    SWISH,
    MarianError,
    MarianFolder,
    inspect_folder,
    readme_facts,
)
from .importing import convert_weights, import_marian
from .names import (
    EMBEDDING_NAMES,
    POSITION_NAMES,
    SOURCE_EMBEDDING,
    TARGET_EMBEDDINGS,
    d_model_permutation,
    marian_positions,
    weight_names,
)

__all__ = [
    "EMBEDDING_NAMES",
    "HF_TOKENIZER_CONFIG",
    "LIMITS",
    "MAX_PARAMETERS",
    "MAX_WEIGHTS_BYTES",
    "PICKLE",
    "POSITION_NAMES",
    "README",
    "SAFETENSORS",
    "SOURCE_EMBEDDING",
    "SWISH",
    "TARGET_EMBEDDINGS",
    "MarianError",
    "MarianFolder",
    "convert_weights",
    "d_model_permutation",
    "export_marian",
    "import_marian",
    "inspect_folder",
    "marian_positions",
    "readme_facts",
    "weight_names",
]
