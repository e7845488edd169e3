"""Many sentences through the model in one padded pass, each result equal to ``analysis.analyse``.

The work of one unbatched analysis, done for B sentences at once:
1. the encoder on the (B, S) right-padded sources (the padding mask hides the pads);
2. beam search (beam 1 is greedy decoding) on B·K flattened rows sharing one key/value cache,
   every sentence keeping its own beams, finished hypotheses and length limit, exactly as
   ``decoding.beam_search`` / ``greedy_decode`` do for one;
3. the decoder's maps: greedy decoding (beam 1) records them at every step, each row's step t being
   row t of the teacher-forced pass; a beam search replays the winners in one teacher-forced pass over
   the (B, T) right-padded decoder inputs with every map captured;
4. each sentence's maps cut back to its own (S_i, T_i).
A padded key gets weight 0 and the real ones are renormalised over the same keys, so the cut maps
equal the unbatched ones up to float rounding (tests: 1e-5), and the decoded ids are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from ..analysis import Analysis, Source, analyse, assemble, max_new_tokens
from ..attention import AttentionKind
from ..decoding import beam_step, length_penalty, next_log_probs, require_eval
from ..model import AttentionMaps, Capture, DecoderCache, Transformer
from ..options import DEFAULT, CallOptions
from ..tokenizer import Tokenizer, pad_batch


def batchable(options: CallOptions) -> bool:
    """Whether padding can change nothing under these options: the padding mask hides padded source
    keys, and the look-ahead mask hides padded target positions (they all come after the real ones).
    A window is left out: a padded query whose window holds pads only gets NaN weights, and
    cross-attention's zero weights on NaN pads still give NaN."""
    return options.padding_mask and options.look_ahead_mask and options.window is None


@dataclass
class DecodingStep:
    """What one greedy step saw: the sentence of each row, its next-token log-probabilities, its weights."""

    rows: list[int]  # (R,) the sentence index of each row
    log_probs: Tensor  # (R, vocab): the model's own, as a teacher-forced pass gives them (pad not masked)
    attention: AttentionMaps  # decoder [L] (R, H, 1, t+1), cross [L] (R, H, 1, S)


@torch.no_grad()
def beam_search_batch(
    model: Transformer,
    sources: Sequence[Sequence[int]],
    beam_size: int,
    limits: Sequence[int],
    *,
    alpha: float = 0.6,
    options: CallOptions = DEFAULT,
    capture: Capture | None = None,
    steps: list[DecodingStep] | None = None,
) -> tuple[list[list[int]], Tensor, Tensor | None, Tensor]:
    """decoding.beam_search for B sentences at once (beam 1: greedy); returns the tokens of each
    (EOS included when reached), and the padded sources, their mask and the memory (B, S, d_model)
    for the teacher-forced pass. capture: filled with the encoder's maps. steps (beam 1 only): filled
    with every step's DecodingStep.

    Shape: sources B lists of ids (EOS last); limits: each sentence's max_new_tokens.
    """
    if beam_size < 1:
        raise ValueError("beam_size must be at least 1")
    if steps is not None and beam_size != 1:
        raise ValueError("steps are recorded by greedy decoding (beam 1) only")
    require_eval(model)
    bos_id, eos_id = model.config.bos_id, model.config.eos_id
    device = next(model.parameters()).device
    B = len(sources)
    limits = [min(n, model.config.max_len - 1) for n in limits]
    src = pad_batch(sources, model.config.pad_id).to(device)  # (B, S)
    src_mask = model.source_mask(src, options)  # (B, 1, 1, S)
    memory = model.encode(src, src_mask, options=options, capture=capture)  # (B, S, d_model)
    cache = DecoderCache.empty(len(model.decoder_layers))
    # the live rows are sentence by sentence, each sentence's beams next to each other
    beams: list[list[list[int]]] = [[[]] for _ in range(B)]
    scores: list[Tensor] = [torch.zeros(1, device=device) for _ in range(B)]
    finished: list[list[tuple[float, float, list[int]]]] = [[] for _ in range(B)]
    result: list[list[int] | None] = [None if n > 0 else [] for n in limits]
    live = [i for i in range(B) if limits[i] > 0]  # sentences still decoding, in row order
    last = torch.full((len(live), 1), bos_id, dtype=torch.long, device=device)
    step = 0
    while live:
        counts = [len(beams[i]) for i in live]
        sent = torch.tensor([i for i, n in zip(live, counts) for _ in range(n)], device=device)  # (R,)
        mask = None if src_mask is None else src_mask.index_select(0, sent)
        # the memory is read at the first step only: later ones use the cached cross-attention keys/values
        mem = memory.index_select(0, sent) if step == 0 else memory[:1].expand(len(sent), -1, -1)
        seen = None if steps is None else Capture(AttentionMaps())
        logits = model.decode(last, mem, mask, options=options, cache=cache, capture=seen)[:, -1]
        logp = next_log_probs(model, logits)  # (R, vocab)
        if seen is not None:
            steps.append(DecodingStep(sent.tolist(), logits.log_softmax(-1), seen.attention))
        vocab = logp.size(-1)
        step += 1
        keep_rows: list[int] = []
        next_live, next_tok = [], []
        start = 0
        for i, n in zip(live, counts):
            cand = (scores[i][:, None] + logp[start : start + n]).view(-1)  # (n · vocab)
            keep_beam, keep_tok, keep_score = beam_step(cand, vocab, beams[i], finished[i], eos_id, beam_size, alpha)
            if not keep_beam or len(finished[i]) >= beam_size:
                result[i] = max(finished[i], key=lambda f: f[0])[2]
            else:
                beams[i] = [beams[i][b] + [t] for b, t in zip(keep_beam, keep_tok)]
                scores[i] = torch.tensor(keep_score, device=device)
                if step >= limits[i]:  # ran out of length
                    done = finished[i] or [
                        (s / length_penalty(len(b), alpha), s, b) for s, b in zip(scores[i].tolist(), beams[i])
                    ]
                    result[i] = max(done, key=lambda f: f[0])[2]
                else:
                    next_live.append(i)
                    keep_rows += [start + b for b in keep_beam]
                    next_tok += keep_tok
            start += n
        live = next_live
        if live:
            if keep_rows != list(range(len(sent))):  # greedy rows that all go on need no reordering
                cache = cache.index_select(torch.tensor(keep_rows, device=device))
            last = torch.tensor(next_tok, dtype=torch.long, device=device)[:, None]
    return [r if r is not None else [] for r in result], src, src_mask, memory


@torch.no_grad()
def analyse_batch(
    model: Transformer,
    tokenizer: Tokenizer,
    texts: Sequence[str],
    beam_size: int = 1,
    options: CallOptions = DEFAULT,
) -> list[Analysis | Exception]:
    """analysis.analyse of every text, in one padded pass; a text that fails gets its exception.

    When the options let padding change the result (a mask switched off), or the batched pass
    itself fails, each text is analysed alone, so one bad request never fails the others.
    """
    if not batchable(options):
        return [_alone(model, tokenizer, t, beam_size, options) for t in texts]
    prepared: list[Source | Exception] = []
    for text in texts:
        try:
            prepared.append(Source.of(tokenizer, text, model.config.max_len))
        except Exception as exc:  # noqa: BLE001  (the request's own error, reported to it alone)
            prepared.append(exc)
    good = [i for i, p in enumerate(prepared) if isinstance(p, Source)]
    out: list[Analysis | Exception] = [p if isinstance(p, Exception) else None for p in prepared]  # type: ignore[misc]
    if not good:
        return out
    try:
        done = _batched(model, tokenizer, [prepared[i] for i in good], beam_size, options)
    except Exception:  # noqa: BLE001  one text broke the batch: find which, by running each alone
        done = [_alone(model, tokenizer, texts[i], beam_size, options) for i in good]
    for i, a in zip(good, done):
        out[i] = a
    return out


def _alone(
    model: Transformer, tokenizer: Tokenizer, text: str, beam_size: int, options: CallOptions
) -> Analysis | Exception:
    try:
        return analyse(model, tokenizer, text, beam_size, options)
    except Exception as exc:  # noqa: BLE001
        return exc


def _batched(
    model: Transformer, tokenizer: Tokenizer, sources: list[Source], beam_size: int, options: CallOptions
) -> list[Analysis]:
    capture = Capture(AttentionMaps())  # the encoder's maps come from the decoding's own encoder pass
    steps: list[DecodingStep] | None = [] if beam_size == 1 else None
    tokens, src, src_mask, memory = beam_search_batch(
        model,
        [s.ids for s in sources],
        beam_size,
        [max_new_tokens(s) for s in sources],
        options=options,
        capture=capture,
        steps=steps,
    )
    bos_id = model.config.bos_id
    dec_inputs = [[bos_id] + t[:-1] if t else [bos_id] for t in tokens]
    encoder = torch.stack(capture.attention.encoder, dim=1).float().cpu()  # (B, L, H, S, S)
    src_lengths = [len(s.ids) for s in sources]
    if steps is not None and all(len(t) > 0 for t in tokens):
        decoded = _maps_of_steps(steps, src_lengths, [len(t) for t in tokens])
    else:
        decoded = _teacher_forced(model, dec_inputs, src_lengths, src, memory, src_mask, options)
    out = []
    for i, (source, toks, dec, S) in enumerate(zip(sources, tokens, dec_inputs, src_lengths)):
        decoder, cross, log_probs = decoded[i]
        # copies: a view would keep the whole batch's maps alive in the cache
        maps = {
            AttentionKind.ENCODER: encoder[i, :, :, :S, :S].numpy().copy(),
            AttentionKind.DECODER: decoder,
            AttentionKind.CROSS: cross,
        }
        out.append(assemble(tokenizer, source, toks, dec, maps, log_probs))
    return out


def _teacher_forced(
    model: Transformer,
    dec_inputs: list[list[int]],
    src_lengths: list[int],
    src: Tensor,
    memory: Tensor,
    src_mask: Tensor | None,
    options: CallOptions,
) -> list[tuple[np.ndarray, np.ndarray, Tensor]]:
    """Per sentence: its decoder (L, H, T, T) and cross (L, H, T, S) maps and (T, vocab) log-probabilities,
    from one teacher-forced pass on what was produced (in eval mode row t equals what decoding step t saw)."""
    capture = Capture(AttentionMaps())
    tgt = pad_batch(dec_inputs, model.config.pad_id).to(src.device)  # (B, T)
    log_probs = model.decode(tgt, memory, src_mask, options=options, capture=capture).log_softmax(-1)
    att = capture.attention
    decoder = torch.stack(att.decoder, dim=1).float().cpu()  # (B, L, H, T, T)
    cross = torch.stack(att.cross, dim=1).float().cpu()  # (B, L, H, T, S)
    out = []
    for i, (dec, S) in enumerate(zip(dec_inputs, src_lengths)):
        T = len(dec)
        out.append((decoder[i, :, :, :T, :T].numpy().copy(), cross[i, :, :, :T, :S].numpy().copy(), log_probs[i, :T]))
    return out


def _maps_of_steps(
    steps: list[DecodingStep], src_lengths: list[int], tgt_lengths: list[int]
) -> list[tuple[np.ndarray, np.ndarray, Tensor]]:
    """The same as _teacher_forced, from greedy decoding's own steps: row t of each sentence's maps is what
    step t computed (the look-ahead mask's zeros to its right), so no second pass is needed."""
    L, H = len(steps[0].attention.decoder), steps[0].attention.decoder[0].size(1)
    decoder = [np.zeros((L, H, T, T), dtype=np.float32) for T in tgt_lengths]
    cross = [np.zeros((L, H, T, S), dtype=np.float32) for T, S in zip(tgt_lengths, src_lengths)]
    log_probs: list[list[Tensor]] = [[] for _ in tgt_lengths]
    for t, step in enumerate(steps):
        self_w = torch.stack(step.attention.decoder)[:, :, :, 0].float().cpu().numpy()  # (L, R, H, t+1)
        cross_w = torch.stack(step.attention.cross)[:, :, :, 0].float().cpu().numpy()  # (L, R, H, S)
        for r, i in enumerate(step.rows):
            decoder[i][:, :, t, : t + 1] = self_w[:, r]
            cross[i][:, :, t] = cross_w[:, r, :, : src_lengths[i]]
            log_probs[i].append(step.log_probs[r])
    return [(d, c, torch.stack(lp)) for d, c, lp in zip(decoder, cross, log_probs)]
