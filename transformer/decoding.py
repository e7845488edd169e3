"""Greedy and beam-search decoding with a key/value cache (§6.1): one loop, ``BeamBatch``.

``BeamBatch`` steps several sentences × their beams at once on the incremental (key/value) state;
what a step keeps is each sentence's own rule, chosen by ``Search``: greedy decoding is a beam of 1,
the paper's beam search (§6.1, length penalty α) and Hugging Face's (``generate(num_beams=...)``)
are its two rules (:mod:`transformer.beams`). ``greedy_decode``, ``beam_search``, ``beam_search_hf`` and
``greedy_decode_batch`` are thin calls into it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from .beams import PAPER_ALPHA, BeamRule, HuggingFaceBeams, PaperBeams, Search
from .model import AttentionMaps, Capture, DecoderCache, Transformer
from .options import DEFAULT, CallOptions
from .tokenizer import pad_batch


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


@dataclass
class Step:
    """What one BeamBatch.step computed, for a caller that records it (the continuous batcher's greedy maps).

    handles: each row's sentence, in row order (a sentence's beams together), as the step read them.
    logits: (R, vocab) each row's next-token logits.
    offsets: each row's empty first self-attention slots (a row that joined late; 0 otherwise).
    ended: the sentences this step ended.
    """

    handles: list[int]
    logits: Tensor
    offsets: list[int]
    ended: list[int]


class BeamBatch:
    """Several sentences × their beams, stepped together on the decoder's key/value cache; the one
    decoding loop (greedy, both beam rules, batched evaluation and the continuous batcher).

        run = BeamBatch(model, sources, Search(beam_size=4), max_new_tokens)
        results = run.run()                      # per sentence (tokens, raw score), in order
        # or, with sentences that join between steps (continuous batching):
        handles, memory = run.add(more_sources)  # encoded now, decoded from the next step on
        while run.live: ended = run.step().ended; run.result(handle) ...

    Each sentence keeps its own hypotheses, rule, length limit and end; a sentence that ends leaves the
    batch (its rows are dropped from the cache). A sentence that joins after k steps gets k empty
    self-attention slots first, masked, and its own positions (``DecoderCache.offsets``); the source axis
    widens to the longest source (padded keys masked), so each result equals the sentence decoded alone.
    Shapes: sources, lists of ids (right-padded into one (B, S) encoder pass).
    use_cache=False feeds the whole prefix at every step (the reference the cache is checked against;
    sentences cannot join it while others decode).
    """

    def __init__(
        self,
        model: Transformer,
        sources: Sequence[list[int]] = (),
        search: Search = Search(),
        max_new_tokens: int = 64,
        *,
        options: CallOptions = DEFAULT,
        use_cache: bool = True,
    ) -> None:
        require_eval(model)
        self.model, self.search, self.options, self.use_cache = model, search, options, use_cache
        self.device = model_device(model)
        self.max_new_tokens = max_new_tokens
        self.hyps: dict[int, PaperBeams | HuggingFaceBeams] = {}
        self.live: list[int] = []  # sentences still decoding, in row order
        self.cache: DecoderCache | None = None  # every live row's keys and values
        self.src_mask: Tensor | None = None  # (R, 1, 1, S)
        self.memory: Tensor | None = None  # (R, S, d_model): use_cache=False only (the cache holds cross K/V)
        self.ys: Tensor | None = None  # (R, 1) each row's last token; use_cache=False: (R, t), all of them
        self._next = 0
        if sources:
            self.add(sources)

    def rows_and_width(self) -> tuple[int, int]:
        """(rows, longest source) of the running batch: what its memory holds."""
        return (0, 0) if self.src_mask is None else (self.src_mask.size(0), self.src_mask.size(-1))

    def result(self, handle: int) -> tuple[list[int], float]:
        """A sentence's (tokens, raw score): its best finished hypothesis (or best live one, out of length)."""
        return self.hyps[handle].result()

    def take(self, handle: int) -> tuple[list[int], float]:
        """An ended sentence's result, forgotten here (a batch that runs for a whole class keeps no old ones)."""
        if handle in self.live:
            raise ValueError(f"sentence {handle} is still decoding")
        return self.hyps.pop(handle).result()

    def run(self) -> list[tuple[list[int], float]]:
        """Step until every sentence ended; each one's (tokens, raw score), in the order added."""
        while self.live:
            self.step()
        return [self.result(h) for h in sorted(self.hyps)]

    def _beams(self, limit: int) -> PaperBeams | HuggingFaceBeams:
        search, eos = self.search, self.model.config.eos_id
        if search.rule is BeamRule.HUGGING_FACE:
            return HuggingFaceBeams(search.beam_size, search.alpha, search.early_stopping, limit, eos, self.device)
        return PaperBeams(search.beam_size, search.alpha, limit, eos, self.device)

    @torch.no_grad()
    def add(
        self,
        sources: Sequence[list[int]],
        limits: Sequence[int] | None = None,
        *,
        capture: Capture | None = None,
    ) -> tuple[list[int], Tensor]:
        """Encode sources (one padded pass) and let them join at the next step.

        limits: each one's max_new_tokens (default: the batch's); cut to the model's length.
        capture: what the encoder pass should record (the batcher keeps its maps).
        Returns their handles and their memory (B, S, d_model). Nothing changes if the encoder pass fails.
        """
        model = self.model
        if not self.use_cache and self.live:
            raise ValueError("without the cache, sentences cannot join a batch that is decoding")
        limits = [min(n, model.config.max_len - 1) for n in (limits or [self.max_new_tokens] * len(sources))]
        with on_device(self.device):
            src = pad_batch(list(sources), model.config.pad_id)  # (B, S)
        src_mask = model.source_mask(src, self.options)  # (B, 1, 1, S)
        memory = model.encode(src, src_mask, options=self.options, capture=capture)  # (B, S, d_model)
        hyps = [self._beams(limit) for limit in limits]
        joining = [b for b, limit in enumerate(limits) if limit > 0]
        rows = [b for b in joining for _ in range(hyps[b].rows)]  # a sentence's rows: its beams' start
        index = torch.tensor(rows, dtype=torch.long, device=self.device)
        row_mask = None if src_mask is None else src_mask.index_select(0, index)
        if rows and self.use_cache:
            cross = [(k.index_select(0, index), v.index_select(0, index)) for k, v in model.cross_kv(memory)]
            self._merge(cross, row_mask)
        elif rows:
            self.memory, self.src_mask = memory.index_select(0, index), row_mask
        handles = list(range(self._next, self._next + len(sources)))
        self._next += len(sources)
        self.hyps.update(zip(handles, hyps))
        self.live += [handles[b] for b in joining]
        if rows:
            bos = torch.full((len(rows), 1), model.config.bos_id, dtype=torch.long, device=self.device)
            self.ys = bos if self.ys is None else torch.cat([self.ys, bos])
        return handles, memory

    def _merge(self, cross: list[tuple[Tensor, Tensor]], src_mask: Tensor | None) -> None:
        """Append new rows to the cache: no past keys yet (their slots masked), cross keys padded to one width."""
        n = cross[0][0].size(0)
        if self.cache is not None and (self.src_mask is None or src_mask is None):
            raise ValueError("sentences can join a decoding batch only under the padding mask")
        if self.cache is None:  # no offsets while every row starts at slot 0: decode's unmasked one-row path
            self.cache = DecoderCache([None] * len(cross), list(cross), 0)
            self.src_mask = src_mask
            return
        cache, old_mask = self.cache, self.src_mask
        S = max(cache.cross_kv[0][0].size(2), cross[0][0].size(2))

        def widen(t: Tensor, dim: int) -> Tensor:  # pad the source axis to S (masked keys)
            return F.pad(t, (0, 0) * (t.dim() - 1 - dim) + (0, S - t.size(dim)))

        cache.cross_kv = [
            (torch.cat([widen(k0, 2), widen(k1, 2)]), torch.cat([widen(v0, 2), widen(v1, 2)]))
            for (k0, v0), (k1, v1) in zip(cache.cross_kv, cross)
        ]
        if cache.length:  # the new rows' past slots are empty: their offset masks them
            cache.self_kv = [
                (torch.cat([k, k.new_zeros(n, *k.shape[1:])]), torch.cat([v, v.new_zeros(n, *v.shape[1:])]))
                for k, v in cache.self_kv
            ]
            old = cache.offsets if cache.offsets is not None else old_mask.new_zeros(old_mask.size(0), dtype=torch.long)
            cache.offsets = torch.cat([old, old.new_full((n,), cache.length)])
        self.src_mask = torch.cat([widen(old_mask, 3), widen(src_mask, 3)])

    @torch.no_grad()
    def step(self, capture: Capture | None = None) -> Step:
        """One decoding step of every live row; a sentence whose rule ends it leaves the batch.

        capture: what the decoder pass should record (this step's new query row of every row)."""
        model, cache = self.model, self.cache
        assert self.ys is not None
        rows = self.ys.size(0)
        handles = [h for h in self.live for _ in range(self.hyps[h].rows)]
        offsets = [0] * rows if cache is None or cache.offsets is None else cache.offsets.tolist()
        if self.use_cache:
            # the memory is never read: every row's cross-attention keys and values are in the cache
            memory = torch.zeros(rows, 1, model.config.d_model, device=self.device)
            step_in = self.ys[:, -1:]
        else:
            memory, step_in = self.memory, self.ys
        logits = model.decode(step_in, memory, self.src_mask, options=self.options, cache=cache, capture=capture)
        logits = logits[:, -1]
        logp = next_log_probs(model, logits)  # (R, vocab)
        keep_rows: list[int] = []
        next_tok: list[int] = []
        next_live: list[int] = []
        ended: list[int] = []
        start = 0
        for h in self.live:
            n = self.hyps[h].rows
            kept = self.hyps[h].advance(logp[start : start + n])
            if kept is None:
                ended.append(h)
            else:
                keep_rows += [start + r for r in kept[0]]
                next_tok += kept[1]
                next_live.append(h)
            start += n
        self.live = next_live
        out = Step(handles, logits, offsets, ended)
        if not next_live:
            self.cache = self.src_mask = self.memory = self.ys = None
            return out
        if keep_rows != list(range(rows)):  # greedy rows that all go on need no reordering
            index = torch.tensor(keep_rows, dtype=torch.long, device=self.device)
            if self.cache is not None:
                cache = self.cache = self.cache.index_select(index)
                first = 0 if cache.offsets is None else int(cache.offsets.min())
                if first:  # slots that no remaining row reads
                    cache.self_kv = [(k[:, :, first:], v[:, :, first:]) for k, v in cache.self_kv]
                    cache.length -= first
                    cache.offsets = cache.offsets - first
                if cache.offsets is not None and not bool(cache.offsets.any()):
                    cache.offsets = None
            if self.memory is not None:
                self.memory = self.memory.index_select(0, index)
            self.src_mask = None if self.src_mask is None else self.src_mask.index_select(0, index)
            self.ys = self.ys.index_select(0, index)
        nxt = torch.tensor(next_tok, dtype=torch.long, device=self.device)[:, None]
        self.ys = nxt if self.use_cache else torch.cat([self.ys, nxt], dim=1)  # the cache holds the past
        return out


def _one(
    model: Transformer,
    src: Tensor,
    search: Search,
    max_new_tokens: int,
    return_attention: bool,
    options: CallOptions,
    use_cache: bool = True,
) -> DecodeResult:
    """One sentence (src (1, S)) through BeamBatch, with its attention when asked."""
    require_eval(model)
    src = src.to(model_device(model))
    run = BeamBatch(model, [src[0].tolist()], search, max_new_tokens, options=options, use_cache=use_cache)
    tokens, score = run.run()[0]
    if not return_attention:
        return DecodeResult(tokens, [model.config.bos_id] + tokens[:-1], None, score)
    return _with_attention(model, src, tokens, score, options)


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
    """Pick the most probable token at each step (BeamBatch, beam 1).

    Shape: src (1, S) token ids.
    """
    return _one(model, src, Search(1), max_new_tokens, return_attention, options, use_cache)


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
    return _one(model, src, Search(beam_size, BeamRule.PAPER, alpha), max_new_tokens, return_attention, options)


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
    search = Search(beam_size, BeamRule.HUGGING_FACE, length_penalty, early_stopping)
    return _one(model, src, search, max_new_tokens, return_attention, options)


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
    eos = model.config.eos_id
    results = BeamBatch(model, sources, Search(1), max_new_tokens, options=options).run()
    return [tokens[: tokens.index(eos)] if eos in tokens else tokens for tokens, _ in results]
