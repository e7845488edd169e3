"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al., 2017).

Post-LN residual sub-layers (§3.1), multi-head attention (§3.2), position-wise
feed-forward networks (§3.3), shared and √d_model-scaled embeddings tied to the
output projection (§3.4), positional encodings (§3.5).

Attention maps come back as values (``return_attention=True``), per layer and per
head, never averaged and never stored on a module. What a call may switch (masks,
positions, a window, heads) is a :class:`~transformer.options.CallOptions` argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import AttentionKind, AttentionResult, AttentionTrace, MultiHeadAttention
from .config import TransformerConfig
from .masks import band_mask, padding_mask, subsequent_mask, target_mask
from .options import DEFAULT, CallOptions
from .positional import PositionalEncoding


@dataclass
class AttentionMaps:
    """Attention weights per layer: encoder self [L] (B,H,S,S), decoder self [L] (B,H,T,T), cross [L] (B,H,T,S)."""

    encoder: list[Tensor] = field(default_factory=list)
    decoder: list[Tensor] = field(default_factory=list)
    cross: list[Tensor] = field(default_factory=list)

    def of(self, kind: AttentionKind) -> list[Tensor]:
        return {
            AttentionKind.ENCODER: self.encoder,
            AttentionKind.DECODER: self.decoder,
            AttentionKind.CROSS: self.cross,
        }[AttentionKind(kind)]


class LayerResult(NamedTuple):
    """One encoder or decoder layer's output and the attentions inside it."""

    output: Tensor  # (B, T, d_model)
    self_attn: AttentionResult
    after_self: Tensor  # LayerNorm(x + SelfAttention(x))
    cross_attn: AttentionResult | None = None  # decoder layers only
    after_cross: Tensor | None = None  # LayerNorm(h + CrossAttention(h, memory))


@dataclass
class LayerTrace:
    """The path of one layer, for a teacher: its input, each attention's trace, each Add & Norm."""

    input: Tensor  # (B, T, d_model)
    self_attention: AttentionTrace
    after_self: Tensor  # (B, T, d_model)
    output: Tensor  # (B, T, d_model)  after the feed-forward's Add & Norm
    cross_attention: AttentionTrace | None = None
    after_cross: Tensor | None = None


@dataclass
class Intermediates:
    """What a teacher shows besides the weights: embeddings and every layer's path."""

    src_embedding: Tensor | None = None  # (B, S, d_model)  token embedding × √d_model
    src_input: Tensor | None = None  # (B, S, d_model)  ... + positional encoding
    tgt_embedding: Tensor | None = None  # (B, T, d_model)
    tgt_input: Tensor | None = None  # (B, T, d_model)
    encoder: list[LayerTrace] = field(default_factory=list)  # [L_enc]
    decoder: list[LayerTrace] = field(default_factory=list)  # [L_dec]

    def trace(self, kind: AttentionKind, layer: int) -> AttentionTrace:
        """The attention trace of one kind and layer."""
        kind = AttentionKind(kind)
        if kind is AttentionKind.ENCODER:
            return self.encoder[layer].self_attention
        record = self.decoder[layer]
        return record.self_attention if kind is AttentionKind.DECODER else record.cross_attention


@dataclass
class TransformerOutput:
    logits: Tensor  # (B, T, V_tgt)
    memory: Tensor  # (B, S, d_model)
    attention: AttentionMaps | None = None
    intermediates: Intermediates | None = None


@dataclass
class DecoderCache:
    """Keys and values of the decoder's past positions, per layer, for incremental decoding."""

    self_kv: list[tuple[Tensor, Tensor] | None]  # per layer (B, H, length, d_k) each
    cross_kv: list[tuple[Tensor, Tensor] | None]  # per layer (B, H, S, d_k) each
    length: int = 0
    # (B,) empty slots at the start of each row's self-attention keys: a row that joined the batch after
    # `offset` steps (continuous batching) is at position length - offset, and its empty keys are masked
    offsets: Tensor | None = None

    @classmethod
    def empty(cls, n_layers: int) -> DecoderCache:
        return cls([None] * n_layers, [None] * n_layers, 0)

    def index_select(self, index: Tensor) -> DecoderCache:
        """Reorder the batch (beam search keeps the beams it selects)."""

        def pick(kv: tuple[Tensor, Tensor] | None) -> tuple[Tensor, Tensor] | None:
            return None if kv is None else (kv[0].index_select(0, index), kv[1].index_select(0, index))

        offsets = None if self.offsets is None else self.offsets.index_select(0, index)
        return DecoderCache([pick(kv) for kv in self.self_kv], [pick(kv) for kv in self.cross_kv], self.length, offsets)


@dataclass
class Capture:
    """What a caller asks encode/decode to collect; each field is filled when not None."""

    attention: AttentionMaps | None = None
    intermediates: Intermediates | None = None

    @property
    def need_weights(self) -> bool:
        return self.attention is not None or self.intermediates is not None

    @property
    def need_trace(self) -> bool:
        return self.intermediates is not None

    def stack_input(self, kind: AttentionKind, emb: Tensor, x: Tensor) -> None:
        """Record what enters the encoder (kind ENCODER) or the decoder stack: embeddings, then + positions."""
        if self.intermediates is None:
            return
        if AttentionKind(kind).in_encoder:
            self.intermediates.src_embedding, self.intermediates.src_input = emb, x
        else:
            self.intermediates.tgt_embedding, self.intermediates.tgt_input = emb, x

    def add(self, kind: AttentionKind, x: Tensor, result: LayerResult) -> None:
        """Record one layer: its input x and what it returned."""
        if self.attention is not None:
            self.attention.of(kind).append(result.self_attn.weights)
            if result.cross_attn is not None:
                self.attention.cross.append(result.cross_attn.weights)
        if self.intermediates is not None:
            records = self.intermediates.encoder if kind is AttentionKind.ENCODER else self.intermediates.decoder
            records.append(
                LayerTrace(
                    x,
                    result.self_attn.trace,
                    result.after_self,
                    result.output,
                    result.cross_attn.trace if result.cross_attn is not None else None,
                    result.after_cross,
                )
            )


def _dropout(module: nn.Dropout, x: Tensor) -> Tensor:
    """module(x), skipping the call entirely in eval mode (it is the identity there)."""
    return module(x) if module.training else x


ACTIVATIONS = {"relu": torch.relu, "swish": F.silu}


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (§3.3); opus-mt uses swish(z) = z · σ(z) in place of max(0, z)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float, activation: str = "relu") -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = ACTIVATIONS[activation]

    def forward(self, x: Tensor) -> Tensor:
        h = self.activation(F.linear(x, self.w_1.weight, self.w_1.bias))  # (B, T, d_ff)
        return F.linear(_dropout(self.dropout, h), self.w_2.weight, self.w_2.bias)  # (B, T, d_model)


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each as LayerNorm(x + Dropout(Sublayer(x))) (§3.1, §5.4)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(config.d_model, config.n_heads, config.attention_p)
        self.feed_forward = FeedForward(config.d_model, config.d_ff, config.activation_p, config.activation)
        self.norm_1 = nn.LayerNorm(config.d_model)
        self.norm_2 = nn.LayerNorm(config.d_model)
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self,
        x: Tensor,
        self_mask: Tensor | None,
        *,
        need_weights: bool = False,
        need_trace: bool = False,
        head_mask: Tensor | None = None,
    ) -> LayerResult:
        """Shape: x (B, S, d_model) -> output (B, S, d_model); self_mask broadcasts to (B, H, S, S)."""
        sa = self.self_attn(x, x, x, self_mask, need_weights=need_weights, need_trace=need_trace, head_mask=head_mask)
        h = self.norm_1(x + _dropout(self.dropout, sa.output))  # (B, S, d_model)
        out = self.norm_2(h + _dropout(self.dropout, self.feed_forward(h)))
        return LayerResult(out, sa, h)


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder (cross) attention over the memory, then feed-forward (§3.1)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(config.d_model, config.n_heads, config.attention_p)
        self.cross_attn = MultiHeadAttention(config.d_model, config.n_heads, config.attention_p)
        self.feed_forward = FeedForward(config.d_model, config.d_ff, config.activation_p, config.activation)
        self.norm_1 = nn.LayerNorm(config.d_model)
        self.norm_2 = nn.LayerNorm(config.d_model)
        self.norm_3 = nn.LayerNorm(config.d_model)
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None,
        tgt_mask: Tensor | None,
        *,
        need_weights: bool = False,
        need_trace: bool = False,
        past_kv: tuple[Tensor, Tensor] | None = None,
        cross_kv: tuple[Tensor, Tensor] | None = None,
        self_head_mask: Tensor | None = None,
        cross_head_mask: Tensor | None = None,
    ) -> LayerResult:
        """Shape: x (B, T, d_model), memory (B, S, d_model) -> output (B, T, d_model)."""
        sa = self.self_attn(
            x,
            x,
            x,
            tgt_mask,
            need_weights=need_weights,
            need_trace=need_trace,
            past_kv=past_kv,
            head_mask=self_head_mask,
        )
        h1 = self.norm_1(x + _dropout(self.dropout, sa.output))
        ca = self.cross_attn(
            h1,
            memory,
            memory,
            src_mask,
            need_weights=need_weights,
            need_trace=need_trace,
            static_kv=cross_kv,
            head_mask=cross_head_mask,
        )
        h2 = self.norm_2(h1 + _dropout(self.dropout, ca.output))
        out = self.norm_3(h2 + _dropout(self.dropout, self.feed_forward(h2)))
        return LayerResult(out, sa, h1, ca, h2)


class Transformer(nn.Module):
    """Encoder-decoder Transformer (Figure 1 of the paper).

    Args:
        config: the model's hyper-parameters.

    Shape:
        src: (B, S) token ids; tgt: (B, T) token ids (BOS first).
        src_mask: bool (B, 1, 1, S), True = real token (default: from pad_id).
        tgt_mask: bool (B, 1, T, T), padding & look-ahead (default: from pad_id).
        logits: (B, T, V_tgt), V_tgt = config.target_vocab_size (vocab_size unless the target has its own).
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = config
        V_tgt = config.target_vocab_size
        self.src_embed = nn.Embedding(config.vocab_size, config.d_model)
        # one matrix for both sides when tied and one vocabulary (§3.4); a target vocabulary of its own has its own
        shared = config.tie_embeddings and not config.separate_vocabularies
        self.tgt_embed = self.src_embed if shared else nn.Embedding(V_tgt, config.d_model)
        self.positional = PositionalEncoding(config.positional, config.max_len, config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        # output_bias: Marian's final_logits_bias, added to every row of logits
        self.generator = nn.Linear(config.d_model, V_tgt, bias=config.output_bias)
        self.reset_parameters()
        if config.tie_embeddings:  # the pre-softmax projection is the target embedding
            self.generator.weight = self.tgt_embed.weight

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices, zero biases; embeddings N(0, d_model^-0.5), so that after the
        √d_model scaling of §3.4 a token's embedding has unit variance, like the positional encoding."""
        for name, p in self.named_parameters():
            if name.startswith("positional"):
                continue
            if "embed" in name:
                nn.init.normal_(p, std=self.config.d_model**-0.5)
            elif p.dim() > 1:
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def embed(
        self, tokens: Tensor, table: nn.Embedding, start: int | Tensor = 0, positions: bool = True
    ) -> tuple[Tensor, Tensor]:
        """Token embedding × √d_model (§3.4), then + positional encoding (§3.5) unless positions is False."""
        emb = table(tokens) * math.sqrt(self.config.d_model)  # (B, T, d_model)
        return emb, self.positional(emb, start) if positions else emb

    def _stack_input(
        self, tokens: Tensor, kind: AttentionKind, start: int | Tensor, options: CallOptions, capture: Capture
    ) -> Tensor:
        """What enters the first layer of the encoder (kind ENCODER) or the decoder stack, recorded in capture."""
        table = self.src_embed if kind.in_encoder else self.tgt_embed
        emb, x = self.embed(tokens, table, start, positions=options.positions)
        capture.stack_input(kind, emb, x)
        return _dropout(self.dropout, x)

    def source_mask(self, src: Tensor, options: CallOptions = DEFAULT) -> Tensor | None:
        """The padding mask of src (B, 1, 1, S), or None when the call switches it off."""
        return padding_mask(src, self.config.pad_id) if options.padding_mask else None

    def encode(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        *,
        options: CallOptions = DEFAULT,
        capture: Capture | None = None,
    ) -> Tensor:
        """Run the encoder stack. Shape: src (B, S) -> memory (B, S, d_model).

        Args:
            src_mask: default: the padding mask of src (None when options switch it off).
            options: masks, positions, window and heads of this call.
            capture: filled with the attention maps / intermediates it asks for.
        """
        capture = capture or Capture()
        if src_mask is None:
            src_mask = self.source_mask(src, options)
        self_mask = src_mask
        if options.window is not None:  # restricted self-attention: a band around the diagonal
            band = band_mask(src.size(1), options.window, src.device)
            self_mask = band if self_mask is None else self_mask & band
        x = self._stack_input(src, AttentionKind.ENCODER, 0, options, capture)
        for i, layer in enumerate(self.encoder_layers):
            result = layer(
                x,
                self_mask,
                need_weights=capture.need_weights,
                need_trace=capture.need_trace,
                head_mask=options.heads(AttentionKind.ENCODER, i, self.config.n_heads, like=x),
            )
            capture.add(AttentionKind.ENCODER, x, result)
            x = result.output
        return x

    def cross_kv(self, memory: Tensor) -> list[tuple[Tensor, Tensor]]:
        """Each decoder layer's cross-attention keys and values of memory, as a cache keeps them after the
        first step. Shape: memory (B, S, d_model) -> per layer 2 × (B, H, S, d_k)."""
        return [layer.cross_attn.project_kv(memory, memory) for layer in self.decoder_layers]

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        *,
        options: CallOptions = DEFAULT,
        cache: DecoderCache | None = None,
        capture: Capture | None = None,
    ) -> Tensor:
        """Run the decoder stack and the output projection. Shape: tgt (B, T) -> logits (B, T, V_tgt).

        With a cache, tgt holds only the new positions; the cache (the caller's,
        never the model's) is updated in place. src_mask is the one the encoder used.
        A cache with offsets holds rows that joined later: each row is at its own position, and its
        empty first slots are masked.
        """
        capture = capture or Capture()
        start = 0 if cache is None else cache.length
        offsets = None if cache is None else cache.offsets
        T = tgt.size(1)
        if tgt_mask is None:
            if offsets is not None:  # each row sees its own cached keys (and, with look-ahead, earlier new ones)
                tgt_mask = (torch.arange(start + T, device=tgt.device) >= offsets[:, None])[:, None, None, :]
                if T > 1 and options.look_ahead_mask:
                    tgt_mask = tgt_mask & subsequent_mask(start + T, tgt.device)[:, :, start:, :]
            elif cache is None:
                if options.padding_mask:
                    tgt_mask = target_mask(tgt, self.config.pad_id, options.look_ahead_mask)
                    if self.config.bos_id == self.config.pad_id:  # Marian starts with pad: that key is real
                        tgt_mask = tgt_mask | (torch.arange(T, device=tgt.device) == 0)
                elif options.look_ahead_mask:
                    tgt_mask = subsequent_mask(T, tgt.device)
            elif T > 1 and options.look_ahead_mask:  # new positions see every cached one and earlier new ones
                tgt_mask = subsequent_mask(start + T, tgt.device)[:, :, start:, :]
            # else: one new position sees every cached one, so no mask is needed
        positions = start if offsets is None else start - offsets  # (B,) each row's own position
        x = self._stack_input(tgt, AttentionKind.DECODER, positions, options, capture)
        for i, layer in enumerate(self.decoder_layers):
            result = layer(
                x,
                memory,
                src_mask,
                tgt_mask,
                need_weights=capture.need_weights,
                need_trace=capture.need_trace,
                past_kv=None if cache is None else cache.self_kv[i],
                cross_kv=None if cache is None else cache.cross_kv[i],
                self_head_mask=options.heads(AttentionKind.DECODER, i, self.config.n_heads, like=x),
                cross_head_mask=options.heads(AttentionKind.CROSS, i, self.config.n_heads, like=x),
            )
            if cache is not None:
                cache.self_kv[i], cache.cross_kv[i] = result.self_attn.kv, result.cross_attn.kv
            capture.add(AttentionKind.DECODER, x, result)
            x = result.output
        if cache is not None:
            cache.length = start + T
        return self.generator(x)  # (B, T, V_tgt)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        *,
        options: CallOptions = DEFAULT,
        return_attention: bool = False,
        return_intermediates: bool = False,
    ) -> TransformerOutput:
        """Encode src, decode tgt with teacher forcing.

        Args:
            options: masks, positions, window and heads of this call (default: as trained).
            return_attention: fill ``output.attention`` with every layer's and head's weights.
            return_intermediates: fill ``output.intermediates`` (Q, K, V, scores, ... per head, per layer).
        """
        if src_mask is None:
            src_mask = self.source_mask(src, options)
        capture = Capture(
            AttentionMaps() if return_attention or return_intermediates else None,
            Intermediates() if return_intermediates else None,
        )
        memory = self.encode(src, src_mask, options=options, capture=capture)
        logits = self.decode(tgt, memory, src_mask, tgt_mask, options=options, capture=capture)
        return TransformerOutput(logits, memory, capture.attention, capture.intermediates)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
