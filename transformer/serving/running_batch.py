"""Many sentences through the model in one padded pass, each result equal to ``analysis.analyse``.

``RunningBatch`` does the work of one unbatched analysis for many sentences at once, and lets new
sentences join between decoding steps (continuous batching: sentences that arrive while others
decode do not wait for the whole batch to end, and each result leaves as soon as its sentence ends):
1. the encoder on each arriving group's (B, S) right-padded sources (the padding mask hides the
   pads), and their cross-attention keys and values, which join the running key/value cache;
2. beam search (beam 1 is greedy decoding) on the flattened rows of every live sentence, each
   keeping its own beams, finished hypotheses and length limit, exactly as ``decoding.beam_search``
   / ``greedy_decode`` do for one. A row that joined after k steps has k empty self-attention slots
   first, masked, and its own positions (``DecoderCache.offsets``);
3. the decoder's maps: greedy decoding (beam 1) records them at every step, each row's step t being
   row t of the teacher-forced pass; a beam search replays its winner in one teacher-forced pass;
4. each sentence's maps cut back to its own (S_i, T_i).
A padded or empty key gets weight 0 and the real ones are renormalised over the same keys, so the
cut maps equal the unbatched ones up to float rounding (tests: 1e-5), and the decoded ids are the same.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ..analysis import Analysis, Source, analyse, assemble, max_new_tokens
from ..attention import AttentionKind
from ..decoding import PAPER_ALPHA, PaperBeams, next_log_probs, require_eval
from ..model import AttentionMaps, Capture, DecoderCache, Transformer
from ..options import DEFAULT, CallOptions
from ..tokenizer import Tokenizer, pad_batch

log = logging.getLogger(__name__)

_fallbacks = 0
_fallbacks_lock = threading.Lock()


def fallbacks() -> int:
    """How many times a padded pass failed and its sentences were analysed one at a time, since the process
    started: each is a bug or a fault in the batched path (it costs only speed, so it is counted and logged;
    the tests fail when it moves)."""
    return _fallbacks


def _fell_back(stage: str, texts: Sequence[str], exc: Exception) -> None:
    global _fallbacks
    with _fallbacks_lock:
        _fallbacks += 1
    log.warning(
        "the padded %s of %d sentence(s) failed (%s: %s): each is analysed alone",
        stage,
        len(texts),
        type(exc).__name__,
        exc,
    )


def batchable(options: CallOptions) -> bool:
    """Whether padding can change nothing under these options: the padding mask hides padded source
    keys, and the look-ahead mask hides padded target positions (they all come after the real ones).
    A window is left out: a padded query whose window holds pads only gets NaN weights, and
    cross-attention's zero weights on NaN pads still give NaN."""
    return options.padding_mask and options.look_ahead_mask and options.window is None


@dataclass
class _Sentence:
    """One sentence's decoding: its hypotheses (decoding.PaperBeams, BeamBatch's rule) and (greedy) its steps' maps."""

    text: str  # as asked (run alone if its group's pass fails)
    source: Source
    limit: int  # its max_new_tokens, cut to the model's length
    encoder: np.ndarray  # (L, H, S, S)
    memory: Tensor  # (S, d_model), for a teacher-forced replay (beam search)
    hyps: PaperBeams  # its beams, their scores and what it has finished (decoding's rule)
    # greedy: per step, its decoder (L, H, t+1) and cross (L, H, S) weights and (vocab,) log-probabilities
    steps: list[tuple[np.ndarray, np.ndarray, Tensor]] = field(default_factory=list)


class RunningBatch:
    """analysis.analyse for many sentences, which may join while others decode.

        run = RunningBatch(model, tokenizer, beam_size, options)
        handles = run.add(texts)          # at any time: they join at the next step
        while run.active:
            run.step()
            for handle, result in run.done().items(): ...   # an Analysis, or that sentence's exception

    Args:
        options: must be batchable (padding changes nothing under them).
        alpha: beam search's length penalty (§6.1).

    A text that cannot be read gets its exception; when a padded pass fails, the sentences in it are
    each analysed alone, so only a guilty one fails.
    """

    def __init__(
        self,
        model: Transformer,
        tokenizer: Tokenizer,
        beam_size: int = 1,
        options: CallOptions = DEFAULT,
        *,
        alpha: float = PAPER_ALPHA,
    ) -> None:
        if beam_size < 1:
            raise ValueError("beam_size must be at least 1")
        if not batchable(options):
            raise ValueError("under these options padding changes the result: analyse each sentence alone")
        require_eval(model)
        self.model, self.tokenizer, self.beam_size, self.options = model, tokenizer, beam_size, options
        self.alpha = alpha
        self.device = next(model.parameters()).device
        self.sentences: dict[int, _Sentence] = {}
        self.live: list[int] = []  # handles still decoding, in row order (a sentence's beams together)
        self.cache: DecoderCache | None = None  # every live beam's row
        self.src_mask: Tensor | None = None  # (R, 1, 1, S)
        self.last: Tensor | None = None  # (R, 1) each row's last token
        self._done: dict[int, Analysis | Exception] = {}
        self._next = 0

    @property
    def active(self) -> int:
        """Sentences still decoding."""
        return len(self.live)

    def rows_and_width(self) -> tuple[int, int]:
        """(rows, longest source) of the running batch: what its memory holds."""
        return (0, 0) if self.src_mask is None else (self.src_mask.size(0), self.src_mask.size(-1))

    def done(self) -> dict[int, Analysis | Exception]:
        """The results that ended since the last call, by handle."""
        out, self._done = self._done, {}
        return out

    @torch.no_grad()
    def add(self, texts: Sequence[str]) -> list[int]:
        """Start decoding texts: their encoder pass now, their first step with the next step()."""
        handles = list(range(self._next, self._next + len(texts)))
        self._next += len(texts)
        ready: list[tuple[int, str, Source]] = []
        for h, text in zip(handles, texts):
            try:
                ready.append((h, text, Source.of(self.tokenizer, text, self.model.config.max_len)))
            except Exception as exc:  # noqa: BLE001  (the request's own error, reported to it alone)
                self._done[h] = exc
        if ready:
            try:
                self._join(ready)
            except Exception as exc:  # noqa: BLE001  one text broke the group's pass: find which, each alone
                _fell_back("encoder pass", [text for _, text, _ in ready], exc)
                for h, text, _ in ready:
                    self.sentences.pop(h, None)
                    self._done[h] = self._alone(text)
        return handles

    @torch.no_grad()
    def step(self) -> None:
        """One decoding step of every live row; sentences that end go to done()."""
        if not self.live:
            return
        try:
            self._step()
        except Exception as exc:  # noqa: BLE001  the padded pass failed: each live sentence alone
            _fell_back("decoding step", [self.sentences[h].text for h in self.live], exc)
            for h in self.live:
                self._done[h] = self._alone(self.sentences.pop(h).text)
            self.live, self.cache, self.src_mask, self.last = [], None, None, None

    # --- the work -----------------------------------------------------------------------------------

    def _alone(self, text: str) -> Analysis | Exception:
        return _alone(self.model, self.tokenizer, text, self.beam_size, self.options, self.alpha)

    def _join(self, ready: list[tuple[int, str, Source]]) -> None:
        """Encode a group and add its rows (one per sentence: a beam starts from one hypothesis)."""
        model = self.model
        src = pad_batch([s.ids for _, _, s in ready], model.config.pad_id).to(self.device)  # (B, S)
        src_mask = model.source_mask(src, self.options)  # (B, 1, 1, S)
        capture = Capture(AttentionMaps())
        memory = model.encode(src, src_mask, options=self.options, capture=capture)  # (B, S, d_model)
        encoder = torch.stack(capture.attention.encoder, dim=1).float().cpu()  # (B, L, H, S, S)
        cross = model.cross_kv(memory)  # per layer 2 × (B, H, S, d_k)
        joining = []
        for b, (h, text, source) in enumerate(ready):
            S = len(source.ids)
            limit = min(max_new_tokens(source), model.config.max_len - 1)
            # copies: a view would keep the whole group's maps alive in the cache
            hyps = PaperBeams(self.beam_size, self.alpha, limit, model.config.eos_id, self.device)
            sentence = _Sentence(text, source, limit, encoder[b, :, :, :S, :S].numpy().copy(), memory[b, :S], hyps)
            self.sentences[h] = sentence
            if limit > 0:
                joining.append(b)
            else:
                self._finish(h, [])
        if not joining:
            return
        rows = torch.tensor(joining, device=self.device)
        cross = [(k.index_select(0, rows), v.index_select(0, rows)) for k, v in cross]
        self._merge(cross, src_mask.index_select(0, rows))
        self.live += [ready[b][0] for b in joining]
        bos = torch.full((len(joining), 1), model.config.bos_id, dtype=torch.long, device=self.device)
        self.last = bos if self.last is None else torch.cat([self.last, bos])

    def _merge(self, cross: list[tuple[Tensor, Tensor]], src_mask: Tensor) -> None:
        """Append new rows to the cache: no past keys yet (their slots masked), cross keys padded to one width."""
        n = src_mask.size(0)
        if self.cache is None:  # no offsets while every row starts at slot 0: decode's unmasked one-row path
            self.cache = DecoderCache([None] * len(cross), list(cross), 0)
            self.src_mask = src_mask
            return
        cache, old_mask = self.cache, self.src_mask
        S = max(old_mask.size(-1), src_mask.size(-1))

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

    def _step(self) -> None:
        model, cache = self.model, self.cache
        assert cache is not None and self.src_mask is not None and self.last is not None
        greedy = self.beam_size == 1
        counts = [self.sentences[h].hyps.rows for h in self.live]
        rows = len(self.last)
        seen = Capture(AttentionMaps()) if greedy else None
        # the memory is never read: every row's cross-attention keys and values are in the cache
        placeholder = torch.zeros(rows, 1, model.config.d_model, device=self.device)
        logits = model.decode(self.last, placeholder, self.src_mask, options=self.options, cache=cache, capture=seen)
        logits = logits[:, -1]
        logp = next_log_probs(model, logits)  # (R, vocab)
        if seen is not None:
            own = logits.log_softmax(-1)  # the model's own, as a teacher-forced pass gives them
            self_w = torch.stack(seen.attention.decoder)[:, :, :, 0].float().cpu().numpy()  # (L, R, H, len)
            cross_w = torch.stack(seen.attention.cross)[:, :, :, 0].float().cpu().numpy()  # (L, R, H, S)
            offsets = cache.offsets.tolist() if cache.offsets is not None else [0] * rows
            for r, h in enumerate(self.live):
                s = self.sentences[h]
                S = len(s.source.ids)
                s.steps.append((self_w[:, r, :, offsets[r] :].copy(), cross_w[:, r, :, :S].copy(), own[r]))
        keep_rows: list[int] = []
        next_live, next_tok = [], []
        start = 0
        for h, n in zip(self.live, counts):
            s = self.sentences[h]
            kept = s.hyps.advance(logp[start : start + n])  # decoding's own rule (BeamBatch's)
            if kept is None:
                self._finish(h, s.hyps.result()[0])
            else:
                next_live.append(h)
                keep_rows += [start + b for b in kept[0]]
                next_tok += kept[1]
            start += n
        self.live = next_live
        if not next_live:
            self.cache, self.src_mask, self.last = None, None, None
            return
        if keep_rows != list(range(rows)):  # greedy rows that all go on need no reordering
            index = torch.tensor(keep_rows, device=self.device)
            cache = self.cache = cache.index_select(index)
            self.src_mask = self.src_mask.index_select(0, index)
            first = 0 if cache.offsets is None else int(cache.offsets.min())
            if first:  # slots that no remaining row reads
                cache.self_kv = [(k[:, :, first:], v[:, :, first:]) for k, v in cache.self_kv]
                cache.length -= first
                cache.offsets = cache.offsets - first
            if cache.offsets is not None and not bool(cache.offsets.any()):
                cache.offsets = None
        self.last = torch.tensor(next_tok, dtype=torch.long, device=self.device)[:, None]

    def _finish(self, h: int, tokens: list[int]) -> None:
        s = self.sentences.pop(h)
        try:
            if self.beam_size == 1 and tokens:
                decoder, cross, log_probs = _maps_of_steps(s.steps, len(s.source.ids))
            else:
                decoder, cross, log_probs = _teacher_forced(self.model, s, tokens, self.options)
            bos_id = self.model.config.bos_id
            maps = {AttentionKind.ENCODER: s.encoder, AttentionKind.DECODER: decoder, AttentionKind.CROSS: cross}
            self._done[h] = assemble(self.tokenizer, s.source, tokens, [bos_id] + tokens[:-1], maps, log_probs)
        except Exception as exc:  # noqa: BLE001  its own failure
            self._done[h] = exc


@torch.no_grad()
def analyse_batch(
    model: Transformer,
    tokenizer: Tokenizer,
    texts: Sequence[str],
    beam_size: int = 1,
    options: CallOptions = DEFAULT,
    *,
    alpha: float = PAPER_ALPHA,
) -> list[Analysis | Exception]:
    """analysis.analyse of every text, in one padded pass; a text that fails gets its exception.

    When the options let padding change the result (a mask switched off), or the batched pass
    itself fails, each text is analysed alone, so one bad request never fails the others.
    """
    if not batchable(options):
        return [_alone(model, tokenizer, t, beam_size, options, alpha) for t in texts]
    run = RunningBatch(model, tokenizer, beam_size, options, alpha=alpha)
    handles = run.add(texts)
    results = run.done()
    while run.active:
        run.step()
        results.update(run.done())
    return [results[h] for h in handles]


def _alone(
    model: Transformer, tokenizer: Tokenizer, text: str, beam_size: int, options: CallOptions, alpha: float
) -> Analysis | Exception:
    try:
        return analyse(model, tokenizer, text, beam_size, options, alpha=alpha)
    except Exception as exc:  # noqa: BLE001
        return exc


def _teacher_forced(
    model: Transformer, s: _Sentence, tokens: list[int], options: CallOptions
) -> tuple[np.ndarray, np.ndarray, Tensor]:
    """Its decoder (L, H, T, T) and cross (L, H, T, S) maps and (T, vocab) log-probabilities, from one
    teacher-forced pass on what was produced (in eval mode row t equals what decoding step t saw)."""
    capture = Capture(AttentionMaps())
    src = torch.tensor([s.source.ids], device=s.memory.device)
    tgt = torch.tensor([[model.config.bos_id] + tokens[:-1]], device=s.memory.device)  # (1, T)
    logits = model.decode(tgt, s.memory[None], model.source_mask(src, options), options=options, capture=capture)
    att = capture.attention
    decoder = torch.stack(att.decoder, dim=1)[0].float().cpu().numpy()  # (L, H, T, T)
    cross = torch.stack(att.cross, dim=1)[0].float().cpu().numpy()  # (L, H, T, S)
    return decoder, cross, logits.log_softmax(-1)[0]


def _maps_of_steps(steps: list[tuple[np.ndarray, np.ndarray, Tensor]], S: int) -> tuple[np.ndarray, np.ndarray, Tensor]:
    """The same as _teacher_forced, from greedy decoding's own steps: row t of the maps is what step t
    computed (the look-ahead mask's zeros to its right), so no second pass is needed."""
    T = len(steps)
    L, H = steps[0][0].shape[:2]
    decoder = np.zeros((L, H, T, T), dtype=np.float32)
    cross = np.zeros((L, H, T, S), dtype=np.float32)
    for t, (self_w, cross_w, _) in enumerate(steps):
        decoder[:, :, t, : t + 1] = self_w
        cross[:, :, t] = cross_w
    return decoder, cross, torch.stack([lp for _, _, lp in steps])
