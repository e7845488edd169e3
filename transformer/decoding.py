"""Greedy and beam-search decoding with a key/value cache (§6.1)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch
from torch import Tensor

from .model import AttentionMaps, DecoderCache, Transformer
from .options import DEFAULT, CallOptions
from .tokenizer import pad_batch

PAPER_ALPHA = 0.6  # §6.1: "beam search with a beam size of 4 and length penalty α = 0.6"
MAX_ALPHA = 10.0  # a card may choose another α on its own dev set (checkpoint.Checkpoint.alpha), within [0, this]


@dataclass
class DecodeResult:
    """One decoded sequence and the attention the model paid while producing it.

    tokens: the produced ids (EOS included when reached), without the start token.
    decoder_input: start + tokens[:-1], the decoder's input, one per attention row (start: config.bos_id).
    attention: maps for batch size 1: encoder [L] (1,H,S,S), decoder [L] (1,H,T,T), cross [L] (1,H,T,S).
    score: the sequence's log-probability (beam search: before the length penalty).
    log_probs: (T, vocab) the model's next-token log-probabilities at each row.
    """

    tokens: list[int]
    decoder_input: list[int]
    attention: AttentionMaps | None
    score: float
    log_probs: Tensor | None = None


def model_device(model: torch.nn.Module) -> torch.device:
    """Where the model's parameters live: every tensor a decoder or a probe builds goes there."""
    return next(model.parameters()).device


def on_device(device: torch.device | str | None) -> contextlib.AbstractContextManager:
    """A block whose new tensors go to device (None: leave torch's default device as it is)."""
    return contextlib.nullcontext() if device is None else torch.device(device)


def require_eval(model: Transformer) -> None:
    """Decoding never switches modes itself: the model may be shared (one cached model serves every session)."""
    if model.training:
        raise ValueError("decoding needs a model in eval mode; call model.eval() first")


def next_log_probs(model: Transformer, logits: Tensor) -> Tensor:
    """log-softmax of a step's logits (B, vocab), with pad ruled out afterwards: pad is never generated.

    (Hugging Face applies its bad-words rule to the log-probabilities the same way, without renormalising.)
    """
    logp = logits.log_softmax(-1)
    logp[:, model.config.pad_id] = float("-inf")
    return logp


def _with_attention(
    model: Transformer, src: Tensor, tokens: list[int], score: float, options: CallOptions
) -> DecodeResult:
    """Re-run the produced sequence with teacher forcing to collect its attention.

    In eval mode the decoder is causal, so row t equals what decoding step t saw.
    """
    decoder_input = [model.config.bos_id] + tokens[:-1]
    tgt = torch.tensor([decoder_input], dtype=torch.long, device=src.device)
    out = model(src, tgt, options=options, return_attention=True)
    return DecodeResult(tokens, decoder_input, out.attention, score, out.logits[0].log_softmax(-1))


@torch.no_grad()
def greedy_decode(
    model: Transformer,
    src: Tensor,
    max_new_tokens: int = 64,
    *,
    use_cache: bool = True,
    return_attention: bool = True,
    options: CallOptions = DEFAULT,
) -> DecodeResult:
    """Pick the most probable token at each step.

    Shape: src (1, S) token ids.
    """
    require_eval(model)
    src = src.to(model_device(model))
    max_new_tokens = min(max_new_tokens, model.config.max_len - 1)
    src_mask = model.source_mask(src, options)
    memory = model.encode(src, src_mask, options=options)
    cache = DecoderCache.empty(len(model.decoder_layers)) if use_cache else None
    ys = torch.tensor([[model.config.bos_id]], dtype=torch.long, device=src.device)
    tokens: list[int] = []
    score = 0.0
    for _ in range(max_new_tokens):
        step_in = ys[:, -1:] if use_cache else ys
        logits = model.decode(step_in, memory, src_mask, options=options, cache=cache)[:, -1]  # (1, vocab)
        logp = next_log_probs(model, logits)
        nxt = int(logp.argmax(-1))
        score += float(logp[0, nxt])
        tokens.append(nxt)
        if nxt == model.config.eos_id:
            break
        ys = torch.cat([ys, torch.tensor([[nxt]], device=src.device)], dim=1)
    if not return_attention:
        return DecodeResult(tokens, [model.config.bos_id] + tokens[:-1], None, score)
    return _with_attention(model, src, tokens, score, options)


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6)^α, used with α = 0.6 in §6.1."""
    return ((5.0 + length) / 6.0) ** alpha


def beam_step(
    cand: Tensor,
    vocab: int,
    beams: list[list[int]],
    finished: list[tuple[float, float, list[int]]],
    eos_id: int,
    beam_size: int,
    alpha: float,
) -> tuple[list[int], list[int], list[float]]:
    """One step of the paper's beam search for one sentence (§6.1).

    cand (n · vocab) holds each live beam's score plus each next token's log-probability. Of the
    2·beam_size best, a hypothesis that ends with EOS goes to ``finished`` as (normalised, raw, tokens);
    the others continue until beam_size are kept. Returns (beam, token, score) of the kept ones.
    """
    top_scores, top_idx = cand.topk(min(2 * beam_size, cand.numel()))
    keep_beam, keep_tok, keep_score = [], [], []
    for s, idx in zip(top_scores.tolist(), top_idx.tolist()):
        b, tok = divmod(idx, vocab)
        seq = beams[b] + [tok]
        if tok == eos_id:
            finished.append((s / length_penalty(len(seq), alpha), s, seq))
        else:
            keep_beam.append(b)
            keep_tok.append(tok)
            keep_score.append(s)
        if len(keep_beam) == beam_size:
            break
    return keep_beam, keep_tok, keep_score


@torch.no_grad()
def beam_search(
    model: Transformer,
    src: Tensor,
    beam_size: int = 4,
    max_new_tokens: int = 64,
    *,
    alpha: float = PAPER_ALPHA,
    return_attention: bool = True,
    options: CallOptions = DEFAULT,
) -> DecodeResult:
    """Beam search with length penalty α (§6.1: beam 4, α 0.6). beam_size=1 is greedy decoding.

    Shape: src (1, S) token ids.
    """
    if beam_size < 1:
        raise ValueError("beam_size must be at least 1")
    require_eval(model)
    src = src.to(model_device(model))
    max_new_tokens = min(max_new_tokens, model.config.max_len - 1)
    src_mask = model.source_mask(src, options)
    memory = model.encode(src, src_mask, options=options)  # (1, S, d_model)
    cache = DecoderCache.empty(len(model.decoder_layers))
    beams: list[list[int]] = [[]]
    scores = torch.zeros(1, device=src.device)
    finished: list[tuple[float, float, list[int]]] = []  # (normalised, raw, tokens)
    last = torch.tensor([[model.config.bos_id]], dtype=torch.long, device=src.device)
    for _ in range(max_new_tokens):
        n = len(beams)
        mask = None if src_mask is None else src_mask.expand(n, -1, -1, -1)
        logits = model.decode(last, memory.expand(n, -1, -1), mask, options=options, cache=cache)[:, -1]  # (n, vocab)
        cand = (scores[:, None] + next_log_probs(model, logits)).view(-1)  # (n · vocab)
        keep_beam, keep_tok, keep_score = beam_step(
            cand, logits.size(-1), beams, finished, model.config.eos_id, beam_size, alpha
        )
        # Stop once beam_size hypotheses have ended (so beam_size=1 is greedy decoding).
        if not keep_beam or len(finished) >= beam_size:
            break
        index = torch.tensor(keep_beam, device=src.device)
        cache = cache.index_select(index)
        beams = [beams[b] + [t] for b, t in zip(keep_beam, keep_tok)]
        scores = torch.tensor(keep_score, device=src.device)
        last = torch.tensor(keep_tok, device=src.device)[:, None]
    if not finished:  # ran out of length: take the best live beam
        finished = [(s / length_penalty(len(b), alpha), s, b) for s, b in zip(scores.tolist(), beams)]
    _, raw, tokens = max(finished, key=lambda f: f[0])
    if not return_attention:
        return DecodeResult(tokens, [model.config.bos_id] + tokens[:-1], None, raw)
    return _with_attention(model, src, tokens, raw, options)


@torch.no_grad()
def beam_search_hf(
    model: Transformer,
    src: Tensor,
    beam_size: int = 4,
    max_new_tokens: int = 64,
    *,
    length_penalty: float = 1.0,
    early_stopping: bool = False,
    return_attention: bool = True,
    options: CallOptions = DEFAULT,
) -> DecodeResult:
    """Beam search by Hugging Face's rules (``generate(num_beams=...)``), to check imported models against it.

    The differences from :func:`beam_search` (the paper's §6.1): a hypothesis scores
    sum(log p) / len^length_penalty (len counts the generated tokens, EOS included); only an
    EOS among the top beam_size candidates ends a hypothesis; every candidate ends at
    max_new_tokens; without early_stopping the search goes on while the best live beam,
    scored at its current length, still beats the worst of beam_size finished ones.

    Shape: src (1, S) token ids.
    """
    if beam_size < 1:
        raise ValueError("beam_size must be at least 1")
    require_eval(model)
    src = src.to(model_device(model))
    max_new_tokens = min(max_new_tokens, model.config.max_len - 1)
    B, K, eos, dev = beam_size, 2 * beam_size, model.config.eos_id, src.device
    src_mask = model.source_mask(src, options)
    memory = model.encode(src, src_mask, options=options).expand(B, -1, -1)  # (B, S, d_model)
    mask = None if src_mask is None else src_mask.expand(B, -1, -1, -1)
    cache = DecoderCache.empty(len(model.decoder_layers))
    running: list[list[int]] = [[] for _ in range(B)]
    running_scores = torch.full((B,), -1.0e9, device=dev)
    running_scores[0] = 0.0  # B copies of the start; only the first is live
    done_seqs: list[list[int]] = [[] for _ in range(B)]
    done_scores = torch.full((B,), -1.0e9, device=dev)
    done = torch.zeros(B, dtype=torch.bool, device=dev)
    improvable = True
    last = torch.full((B, 1), model.config.bos_id, dtype=torch.long, device=dev)
    for step in range(1, max_new_tokens + 1):  # step = tokens generated once this step's is added
        logits = model.decode(last, memory, mask, options=options, cache=cache)[:, -1]  # (B, vocab)
        vocab = logits.size(-1)
        cand = (next_log_probs(model, logits) + running_scores[:, None]).view(-1)  # (B · vocab)
        top_scores, top_idx = cand.topk(K)
        beam, tok = top_idx // vocab, top_idx % vocab
        seqs = [running[b] + [t] for b, t in zip(beam.tolist(), tok.tolist())]
        hits = (tok == eos) | (step >= max_new_tokens)  # (K,)
        keep = (top_scores - 1.0e9 * hits.float()).topk(B).indices
        finals = top_scores / (step**length_penalty)
        finals = finals - 1.0e9 * (~(hits & (torch.arange(K, device=dev) < B))).float()
        if (early_stopping and bool(done.all())) or not improvable:
            finals = finals - 1.0e9
        merged = torch.cat([done_scores, finals]).topk(B).indices.tolist()
        pool = done_seqs + seqs
        flags = torch.cat([done, hits & (torch.arange(K, device=dev) < B)])
        scores_all = torch.cat([done_scores, finals])
        done_seqs, done_scores, done = [pool[i] for i in merged], scores_all[merged], flags[merged]
        running = [seqs[i] for i in keep.tolist()]
        running_scores = (top_scores - 1.0e9 * hits.float())[keep]
        cache = cache.index_select(beam[keep])
        last = tok[keep][:, None]
        worst = torch.where(done, done_scores.min(), torch.tensor(-1.0e9, device=dev))
        improvable = improvable and bool((running_scores[0] / (step**length_penalty) > worst).any())
        if not improvable or (early_stopping and bool(done.all())) or bool(hits.all()):
            break
    tokens, raw = done_seqs[0], float(done_scores[0]) * len(done_seqs[0]) ** length_penalty
    if not return_attention:
        return DecodeResult(tokens, [model.config.bos_id] + tokens[:-1], None, raw)
    return _with_attention(model, src, tokens, raw, options)


def translate_ids(
    model: Transformer,
    src_ids: list[int],
    beam_size: int = 1,
    max_new_tokens: int = 64,
    return_attention: bool = True,
    options: CallOptions = DEFAULT,
    *,
    alpha: float = PAPER_ALPHA,
) -> DecodeResult:
    """Decode one source sentence given as ids (EOS included: see Tokenizer.source_ids).

    beam_size 1 is greedy decoding; above it, beam search with length penalty alpha."""
    src = torch.tensor([src_ids], dtype=torch.long, device=model_device(model))
    if beam_size == 1:
        return greedy_decode(model, src, max_new_tokens, return_attention=return_attention, options=options)
    return beam_search(
        model, src, beam_size, max_new_tokens, alpha=alpha, return_attention=return_attention, options=options
    )


@torch.no_grad()
def greedy_decode_batch(
    model: Transformer, sources: list[list[int]], max_new_tokens: int = 64, options: CallOptions = DEFAULT
) -> list[list[int]]:
    """Greedy decoding of many sentences at once (for evaluation); returns ids without BOS/EOS."""
    require_eval(model)
    max_new_tokens = min(max_new_tokens, model.config.max_len - 1)
    device = model_device(model)
    with on_device(device):
        src = pad_batch(sources, model.config.pad_id)
    src_mask = model.source_mask(src, options)
    memory = model.encode(src, src_mask, options=options)
    cache = DecoderCache.empty(len(model.decoder_layers))
    eos = model.config.eos_id
    last = torch.full((len(sources), 1), model.config.bos_id, dtype=torch.long, device=device)
    out = torch.zeros((len(sources), 0), dtype=torch.long, device=device)
    done = torch.zeros(len(sources), dtype=torch.bool, device=device)
    for _ in range(max_new_tokens):
        logits = model.decode(last, memory, src_mask, options=options, cache=cache)[:, -1]
        nxt = next_log_probs(model, logits).argmax(-1).masked_fill(done, eos)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done |= nxt == eos
        if bool(done.all()):
            break
        last = nxt[:, None]
    result = []
    for row in out.tolist():
        result.append(row[: row.index(eos)] if eos in row else row)
    return result
