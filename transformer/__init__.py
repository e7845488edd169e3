"""An inspectable encoder-decoder Transformer ("Attention Is All You Need", Vaswani et al., 2017).

The package never imports streamlit; attention maps are return values.
"""

from .attention import AttentionTrace, MultiHeadAttention, scaled_dot_product_attention
from .config import PRESETS, ConfigError, TransformerConfig
from .masks import padding_mask, subsequent_mask, target_mask
from .model import ATTENTION_KINDS, AttentionMaps, Capture, DecoderCache, Intermediates, Transformer, TransformerOutput
from .positional import PositionalEncoding, sinusoidal_table

__all__ = [
    "ATTENTION_KINDS",
    "AttentionMaps",
    "AttentionTrace",
    "Capture",
    "ConfigError",
    "DecoderCache",
    "Intermediates",
    "MultiHeadAttention",
    "PRESETS",
    "PositionalEncoding",
    "Transformer",
    "TransformerConfig",
    "TransformerOutput",
    "padding_mask",
    "scaled_dot_product_attention",
    "sinusoidal_table",
    "subsequent_mask",
    "target_mask",
]
