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
from torch import Tensor

from ..analysis import Analysis, Source, analyse, assemble, max_new_tokens
from ..attention import AttentionKind
from ..beams import PAPER_ALPHA, BeamRule, Search
from ..decoding import BeamBatch
from ..model import AttentionMaps, Capture, Transformer
from ..options import DEFAULT, CallOptions
from ..tokenizer import Tokenizer

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
    """One sentence's analysis in the making: what it asked, its encoder maps and (greedy) its steps' maps."""

    text: str  # as asked (run alone if its group's pass fails)
    source: Source
    encoder: np.ndarray  # (L, H, S, S)
    memory: Tensor  # (S, d_model), for a teacher-forced replay (beam search)
    # greedy: per step, its decoder (L, H, t+1) and cross (L, H, S) weights and (vocab,) log-probabilities
    steps: list[tuple[np.ndarray, np.ndarray, Tensor]] = field(default_factory=list)


class RunningBatch:
    """analysis.analyse for many sentences, which may join while others decode.

        run = RunningBatch(model, tokenizer, beam_size, options)
        handles = run.add(texts)          # at any time: they join at the next step
        while run.active:
            run.step()
            for handle, result in run.done().items(): ...   # an Analysis, or that sentence's exception

    The decoding is decoding.BeamBatch's (the one loop, sentences joining between its steps); this adds
    what an analysis needs around it: the encoder's maps of each arriving group, the decoder's maps of
    every greedy step (a beam search replays its winner in one teacher-forced pass), each cut to its
    sentence.

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
        if not batchable(options):
            raise ValueError("under these options padding changes the result: analyse each sentence alone")
        self.model, self.tokenizer, self.beam_size, self.options = model, tokenizer, beam_size, options
        self.alpha = alpha
        self.search = Search(beam_size, BeamRule.PAPER, alpha)
        self.decoding = BeamBatch(model, (), self.search, options=options)
        self.sentences: dict[int, _Sentence] = {}  # by the decoding's handle
        self._handles: dict[int, int] = {}  # the decoding's handle -> ours
        self._done: dict[int, Analysis | Exception] = {}
        self._next = 0

    @property
    def active(self) -> int:
        """Sentences still decoding."""
        return len(self.decoding.live)

    def rows_and_width(self) -> tuple[int, int]:
        """(rows, longest source) of the running batch: what its memory holds."""
        return self.decoding.rows_and_width()

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
                    self._done[h] = self._alone(text)
        return handles

    @torch.no_grad()
    def step(self) -> None:
        """One decoding step of every live row; sentences that end go to done()."""
        if not self.decoding.live:
            return
        try:
            self._step()
        except Exception as exc:  # noqa: BLE001  the padded pass failed: each live sentence alone
            live = self.decoding.live
            _fell_back("decoding step", [self.sentences[d].text for d in live], exc)
            for d in live:
                self._done[self._handles.pop(d)] = self._alone(self.sentences.pop(d).text)
            self.decoding = BeamBatch(self.model, (), self.search, options=self.options)

    # --- the work -----------------------------------------------------------------------------------

    def _alone(self, text: str) -> Analysis | Exception:
        return _alone(self.model, self.tokenizer, text, self.beam_size, self.options, self.alpha)

    def _join(self, ready: list[tuple[int, str, Source]]) -> None:
        """Encode a group (its maps kept) and let it join the decoding."""
        capture = Capture(AttentionMaps())
        limits = [max_new_tokens(source) for _, _, source in ready]
        added, memory = self.decoding.add([s.ids for _, _, s in ready], limits, capture=capture)
        encoder = torch.stack(capture.attention.encoder, dim=1).float().cpu()  # (B, L, H, S, S)
        for b, (d, (h, text, source)) in enumerate(zip(added, ready)):
            S = len(source.ids)
            # copies: a view would keep the whole group's maps alive in the cache
            self.sentences[d] = _Sentence(text, source, encoder[b, :, :, :S, :S].numpy().copy(), memory[b, :S])
            self._handles[d] = h
            if d not in self.decoding.live:  # no room to produce anything
                self._finish(d)

    def _step(self) -> None:
        greedy = self.beam_size == 1
        seen = Capture(AttentionMaps()) if greedy else None
        step = self.decoding.step(capture=seen)
        if seen is not None:
            own = step.logits.log_softmax(-1)  # the model's own, as a teacher-forced pass gives them
            self_w = torch.stack(seen.attention.decoder)[:, :, :, 0].float().cpu().numpy()  # (L, R, H, len)
            cross_w = torch.stack(seen.attention.cross)[:, :, :, 0].float().cpu().numpy()  # (L, R, H, S)
            for r, (d, offset) in enumerate(zip(step.handles, step.offsets)):
                s = self.sentences[d]
                S = len(s.source.ids)
                s.steps.append((self_w[:, r, :, offset:].copy(), cross_w[:, r, :, :S].copy(), own[r]))
        for d in step.ended:
            self._finish(d)

    def _finish(self, d: int) -> None:
        s, h = self.sentences.pop(d), self._handles.pop(d)
        try:
            tokens = self.decoding.take(d)[0]
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
