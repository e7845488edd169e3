"""The one configuration dataclass of the model (Vaswani et al., 2017, §3 and Table 3)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, get_args

Positional = Literal["sinusoidal", "learned", "none"]
POSITIONAL_KINDS: tuple[str, ...] = get_args(Positional)
Activation = Literal["relu", "swish"]
ACTIVATIONS: tuple[str, ...] = get_args(Activation)


class ConfigError(ValueError):
    """A configuration that cannot describe a valid model."""


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of an encoder-decoder Transformer.

    Args:
        vocab_size: size of the vocabulary shared by source and target (§3.4); with
            tgt_vocab_size, the source's alone (the encoder's embedding rows).
        n_encoder_layers: N for the encoder stack (paper: 6).
        n_decoder_layers: N for the decoder stack (paper: 6).
        d_model: width of every sub-layer output and of the embeddings (paper: 512).
        n_heads: h, the number of attention heads (paper: 8); d_k = d_v = d_model / h.
        d_ff: inner width of the position-wise feed-forward network (paper: 2048).
        dropout: P_drop on sub-layer outputs and embedding sums, the paper's residual dropout (§5.4: 0.1).
        attention_dropout: P_drop on the attention weights; None: the same as dropout (our
            checkpoints before it existed); the paper has none (0.0), nor do opus-mt models.
        activation_dropout: P_drop inside the feed-forward, after its non-linearity; None: the same
            as dropout; the paper has none (0.0), nor do opus-mt models.
        max_len: the longest sequence, in tokens, that the positional encoding covers.
        positional: "sinusoidal" (§3.5), "learned" (the paper's Table 3 row E) or "none".
        tie_embeddings: share one matrix between source embedding, target embedding and
            the pre-softmax projection (§3.4).
        pad_id: the padding token id; its embedding row is never attended to.
        bos_id: the decoder's start token (ours: <s>; Marian starts with its pad id).
        eos_id: the token that ends a sequence (ours: </s> = 3; Marian: 0).
        activation: the feed-forward's non-linearity: "relu" (§3.3) or "swish" (SiLU, opus-mt).
        output_bias: a bias added to the logits (Marian's final_logits_bias).
        tgt_vocab_size: None (one vocabulary for both sides, as the paper) or the target's own
            size: the decoder's embedding rows and the logits' width (opus-mt models with
            separate vocabularies, target_vocab.json). pad_id is a token of both sides; bos_id
            and eos_id are target tokens.
    """

    vocab_size: int
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 256
    positional: Positional = "sinusoidal"
    tie_embeddings: bool = True
    pad_id: int = 0
    bos_id: int = 2
    eos_id: int = 3
    activation: Activation = "relu"
    output_bias: bool = False
    tgt_vocab_size: int | None = None
    attention_dropout: float | None = None
    activation_dropout: float | None = None

    def __post_init__(self) -> None:
        ints = ("vocab_size", "n_encoder_layers", "n_decoder_layers", "d_model", "n_heads", "d_ff", "max_len")
        for name in ints:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads:
            raise ConfigError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        for name in ("dropout", "attention_dropout", "activation_dropout"):
            value = getattr(self, name)
            if value is None and name != "dropout":
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value < 1.0:
                raise ConfigError(f"{name} must be in [0, 1){'' if name == 'dropout' else ' or null'}, got {value!r}")
        if self.positional not in POSITIONAL_KINDS:
            raise ConfigError(f"positional must be one of {POSITIONAL_KINDS}, got {self.positional!r}")
        if not isinstance(self.tie_embeddings, bool):
            raise ConfigError("tie_embeddings must be true or false")
        if self.tgt_vocab_size is not None and (
            not isinstance(self.tgt_vocab_size, int) or isinstance(self.tgt_vocab_size, bool) or self.tgt_vocab_size < 1
        ):
            raise ConfigError(f"tgt_vocab_size must be a positive integer or null, got {self.tgt_vocab_size!r}")
        rows = min(self.vocab_size, self.target_vocab_size)  # pad pads both sides
        if not isinstance(self.pad_id, int) or isinstance(self.pad_id, bool) or not 0 <= self.pad_id < rows:
            raise ConfigError(f"pad_id must be a token id below vocab_size (and tgt_vocab_size), got {self.pad_id!r}")
        for name in ("bos_id", "eos_id"):  # target tokens
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < self.target_vocab_size:
                raise ConfigError(f"{name} must be a target token id (below the target vocabulary), got {value!r}")
        if self.eos_id == self.pad_id:
            raise ConfigError("eos_id and pad_id must differ (pad is never generated, eos ends a sequence)")
        if self.activation not in ACTIVATIONS:
            raise ConfigError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if not isinstance(self.output_bias, bool):
            raise ConfigError("output_bias must be true or false")

    def n_layers(self, kind: Any) -> int:
        """N of the stack an AttentionKind lives in: the encoder's for encoder self-attention, else the decoder's."""
        return self.n_encoder_layers if kind.in_encoder else self.n_decoder_layers

    @property
    def target_vocab_size(self) -> int:
        """Rows of the decoder's embedding and width of the logits: tgt_vocab_size, else the shared vocab_size."""
        return self.vocab_size if self.tgt_vocab_size is None else self.tgt_vocab_size

    @property
    def separate_vocabularies(self) -> bool:
        """Whether source and target have vocabularies of their own (tgt_vocab_size is set)."""
        return self.tgt_vocab_size is not None

    @property
    def attention_p(self) -> float:
        """The dropout on attention weights: attention_dropout, else dropout."""
        return self.dropout if self.attention_dropout is None else self.attention_dropout

    @property
    def activation_p(self) -> float:
        """The dropout inside the feed-forward: activation_dropout, else dropout."""
        return self.dropout if self.activation_dropout is None else self.activation_dropout

    @property
    def d_k(self) -> int:
        """Width of one head's queries, keys and values (d_k = d_v = d_model / h)."""
        return self.d_model // self.n_heads

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> TransformerConfig:
        """Build a config from parsed JSON, rejecting unknown or missing fields."""
        if not isinstance(data, dict):
            raise ConfigError("config must be a JSON object")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown config field(s): {', '.join(unknown)}")
        if "vocab_size" not in data:
            raise ConfigError("config is missing vocab_size")
        return cls(**data)

    @classmethod
    def preset(cls, name: str, vocab_size: int, **overrides: Any) -> TransformerConfig:
        """A named size: "base" is the paper's base model; the others fit a CPU."""
        if name not in PRESETS:
            raise ConfigError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}")
        return cls(vocab_size=vocab_size, **{**PRESETS[name], **overrides})


PRESETS: dict[str, dict[str, Any]] = {
    # The paper's base model (Table 3, first row).
    "base": dict(n_encoder_layers=6, n_decoder_layers=6, d_model=512, n_heads=8, d_ff=2048, dropout=0.1),
    # Sizes that train in minutes on two CPU cores.
    "small": dict(n_encoder_layers=3, n_decoder_layers=3, d_model=128, n_heads=4, d_ff=512, dropout=0.1, max_len=128),
    "tiny": dict(n_encoder_layers=2, n_decoder_layers=2, d_model=32, n_heads=4, d_ff=64, dropout=0.0, max_len=64),
}
