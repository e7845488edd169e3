from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from transformer import Transformer, TransformerConfig
from transformer.checkpoint import load_checkpoint
from transformer.decoding import beam_search, greedy_decode, greedy_decode_batch
from transformer.tokenizer import BOS_ID, EOS_ID


@pytest.mark.slow  # trains or re-measures
def test_tiny_model_overfits_a_small_batch():
    torch.manual_seed(0)
    cfg = TransformerConfig.preset("tiny", vocab_size=20, dropout=0.0)
    model = Transformer(cfg)
    src = torch.randint(4, 20, (4, 6))
    tgt = torch.randint(4, 20, (4, 6))
    tgt_in = torch.cat([torch.full((4, 1), BOS_ID), tgt], 1)
    tgt_out = torch.cat([tgt, torch.full((4, 1), EOS_ID)], 1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(300):
        loss = F.cross_entropy(model(src, tgt_in).logits.reshape(-1, 20), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.05
    model.eval()
    for i in range(4):
        out = greedy_decode(model, src[i : i + 1], 10)
        assert out.tokens == tgt_out[i].tolist()


def test_beam_one_equals_greedy_and_cache_equals_no_cache(trained_checkpoint):
    ckpt = load_checkpoint(trained_checkpoint)
    tok, model = ckpt.tokenizer, ckpt.model
    for text in ["The dog didn't cross the road because it was too tired.", "The cow was too scared."]:
        src = torch.tensor([tok.encode(text) + [EOS_ID]])
        cached = greedy_decode(model, src, 30)
        uncached = greedy_decode(model, src, 30, use_cache=False)
        assert cached.tokens == uncached.tokens
        beam1 = beam_search(model, src, beam_size=1, max_new_tokens=30)
        assert beam1.tokens == cached.tokens
        assert abs(beam1.score - cached.score) < 1e-4
        batch = greedy_decode_batch(model, [src[0].tolist()], 30)[0]
        assert batch == [t for t in cached.tokens if t != EOS_ID]


def test_cached_steps_equal_the_full_pass(tiny_model):
    """Incremental decoding with the cache gives the same logits as a full teacher-forced pass."""
    from transformer.model import DecoderCache

    src = torch.tensor([[5, 6, 7, 3]])
    tgt = torch.tensor([[2, 9, 10, 11, 12]])
    memory = tiny_model.encode(src)
    full = tiny_model.decode(tgt, memory)
    cache = DecoderCache.empty(2)
    steps = [tiny_model.decode(tgt[:, i : i + 1], memory, cache=cache) for i in range(5)]
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=1e-5)


def test_decoded_attention_covers_the_produced_sequence(trained_checkpoint):
    ckpt = load_checkpoint(trained_checkpoint)
    src = torch.tensor([ckpt.tokenizer.encode("The dog was too tired.") + [EOS_ID]])
    out = beam_search(ckpt.model, src, beam_size=3, max_new_tokens=20)
    T, S = len(out.tokens), src.size(1)
    assert out.decoder_input[0] == BOS_ID and len(out.decoder_input) == T
    assert out.attention.cross[0].shape == (1, ckpt.config.n_heads, T, S)
    assert out.attention.decoder[-1].shape == (1, ckpt.config.n_heads, T, T)


def test_decoding_never_switches_the_mode_of_a_shared_model(trained_checkpoint):
    import pytest

    from transformer.analysis import analyse

    ckpt = load_checkpoint(trained_checkpoint)
    before = {k: v.clone() for k, v in ckpt.model.state_dict().items()}
    analyse(ckpt.model, ckpt.tokenizer, "The dog was too tired.", beam_size=2)
    assert not any(m.training for m in ckpt.model.modules())
    assert all(torch.equal(before[k], v) for k, v in ckpt.model.state_dict().items())
    ckpt.model.train()
    with pytest.raises(ValueError, match="eval mode"):
        greedy_decode(ckpt.model, torch.tensor([[5, 3]]), 5)
    assert ckpt.model.training  # still as the caller left it


@pytest.mark.parametrize("rule", ["paper", "hugging_face"])
def test_sentences_that_join_a_beam_batch_decode_as_they_would_alone(trained_checkpoint, rule):
    """BeamBatch is the one decoding loop: sentences added after 0, 2 and 5 steps (shorter and longer
    sources, so rows have empty first slots and the source axis widens) end with the tokens and scores
    they get alone, under either beam rule."""
    from transformer.beams import BeamRule, Search
    from transformer.decoding import BeamBatch

    ckpt = load_checkpoint(trained_checkpoint)
    tok, model = ckpt.tokenizer, ckpt.model
    texts = [
        "The dog didn't cross the road because it was too tired.",
        "The cow was too scared.",
        "It is red.",
        "The horse didn't jump over the fence because it was too high.",
    ]
    sources = [tok.encode(t) + [EOS_ID] for t in texts]
    search = Search(3, BeamRule(rule), 1.0)
    alone = [BeamBatch(model, [s], search, 30).run()[0] for s in sources]
    run = BeamBatch(model, sources[:1], search, 30)
    plan, step = {2: sources[1:3], 5: sources[3:]}, 0
    while run.live or step <= max(plan):
        if step in plan:
            run.add(plan[step])
        if run.live:
            run.step()
        step += 1
    for (tokens, score), (want, want_score) in zip(run.run(), alone):
        assert tokens == want
        assert abs(score - want_score) < 1e-4

