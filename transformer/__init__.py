"""An inspectable encoder-decoder Transformer ("Attention Is All You Need", Vaswani et al., 2017).

The package imports neither streamlit nor plotly; attention maps are return values.
"""

from .attention import (
    AttentionKind,
    AttentionResult,
    AttentionTrace,
    HeadId,
    MultiHeadAttention,
    scaled_dot_product_attention,
)
from .config import PRESETS, ConfigError, TransformerConfig
from .masks import band_mask, padding_mask, subsequent_mask, target_mask
from .model import AttentionMaps, Capture, DecoderCache, Intermediates, LayerTrace, Transformer, TransformerOutput
from .options import CallOptions, HeadMask
from .positional import PositionalEncoding, sinusoidal_table

__all__ = [
    "AttentionKind",
    "AttentionMaps",
    "AttentionResult",
    "AttentionTrace",
    "CallOptions",
    "Capture",
    "ConfigError",
    "DecoderCache",
    "HeadId",
    "HeadMask",
    "Intermediates",
    "LayerTrace",
    "MultiHeadAttention",
    "PRESETS",
    "PositionalEncoding",
    "Transformer",
    "TransformerConfig",
    "TransformerOutput",
    "band_mask",
    "padding_mask",
    "scaled_dot_product_attention",
    "sinusoidal_table",
    "subsequent_mask",
    "target_mask",
]
