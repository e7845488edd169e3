"""Widening a trained model's feed-forward layers (transformer/training/grow.py, TrainConfig.grow_d_ff): the grown
model computes what the old one did, attention included; training then moves its new units; a run that grows its
starting checkpoint records it and resumes from its own (wide) last/."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from conftest import stopped_run

from transformer.attention import AttentionKind
from transformer.checkpoint import load_checkpoint
from transformer.config import TransformerConfig
from transformer.model import Transformer
from transformer.training import PRESETS, Trainer, TrainingError
from transformer.training.grow import widen_feed_forward


def _trained_like_model() -> Transformer:
    torch.manual_seed(3)
    model = Transformer(TransformerConfig.preset("tiny", vocab_size=40)).eval()
    with torch.no_grad():  # non-zero biases everywhere, as after training
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(std=0.1)
    return model


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randint(4, 40, (3, 7), generator=g), torch.randint(4, 40, (3, 5), generator=g)


def test_the_wide_model_computes_what_the_narrow_one_did():
    model = _trained_like_model()
    wide = widen_feed_forward(model, 3 * model.config.d_ff)
    src, tgt = _batch()
    with torch.no_grad():
        a, b = model(src, tgt, return_attention=True), wide(src, tgt, return_attention=True)
    torch.testing.assert_close(b.logits, a.logits, rtol=0, atol=1e-5)
    for kind in AttentionKind:
        for x, y in zip(a.attention.of(kind), b.attention.of(kind), strict=True):
            torch.testing.assert_close(y, x, rtol=0, atol=1e-6)
    assert wide.config.d_ff == 3 * model.config.d_ff and not wide.training
    assert wide.config == dataclasses.replace(model.config, d_ff=3 * model.config.d_ff)
    # the old model is untouched, and the two share no tensor
    assert all(p.shape[0] != wide.config.d_ff for n, p in model.named_parameters() if n.endswith("w_1.weight"))
    ptrs = {p.data_ptr() for p in model.parameters()}
    assert not ptrs & {p.data_ptr() for p in wide.parameters()}


def test_training_moves_the_new_units():
    model = _trained_like_model()
    d_ff = model.config.d_ff
    wide = widen_feed_forward(model, 2 * d_ff).train()
    src, tgt = _batch()
    w_2 = wide.encoder_layers[0].feed_forward.w_2
    assert torch.count_nonzero(w_2.weight[:, d_ff:]) == 0
    out = wide(src, tgt[:, :-1])
    F.cross_entropy(out.logits.reshape(-1, out.logits.size(-1)), tgt[:, 1:].reshape(-1)).backward()
    assert w_2.weight.grad[:, d_ff:].abs().sum() > 0  # the new units' hidden values reach the loss


def test_growing_refuses_a_narrower_or_equal_size():
    model = _trained_like_model()
    with pytest.raises(TrainingError, match="not wider"):
        widen_feed_forward(model, model.config.d_ff)


@pytest.mark.slow  # trains three tiny runs
def test_a_run_grows_its_starting_checkpoint_records_it_and_resumes(tmp_path):
    tiny = dataclasses.replace(PRESETS["tiny"], steps=6, snapshot_steps=(0,), checkpoint_every=100)
    start = tmp_path / "start"
    Trainer(dataclasses.replace(tiny, steps=3, snapshot_steps=()), start).train()
    narrow = load_checkpoint(start)
    d_ff = 2 * narrow.model.config.d_ff
    cfg = dataclasses.replace(tiny, init_from=str(start), grow_d_ff=d_ff)
    straight = tmp_path / "straight"
    Trainer(cfg, straight).train()
    # step 0 is the grown model: it translates as the starting checkpoint did
    s0 = load_checkpoint(straight / "snapshots" / "step-000000")
    src, tgt = _batch()
    src, tgt = src % narrow.model.config.vocab_size, tgt % narrow.model.config.vocab_size
    with torch.no_grad():
        torch.testing.assert_close(s0.model(src, tgt).logits, narrow.model(src, tgt).logits, rtol=0, atol=1e-5)
    final = load_checkpoint(straight)
    assert final.model.config.d_ff == d_ff
    assert final.card["init_from"]["grown"] == {"d_ff": [narrow.model.config.d_ff, d_ff]}
    assert final.card["parameters"] > narrow.card["parameters"]
    # stopped after step 4 and resumed from its own last/ (already wide): the same weights as the straight run
    out = tmp_path / "resumed"
    assert stopped_run(cfg, out, 4)["stopped"]
    Trainer(cfg, out).train()
    resumed = load_checkpoint(out)
    assert resumed.card["init_from"]["grown"] == final.card["init_from"]["grown"]
    for k, v in final.model.state_dict().items():
        torch.testing.assert_close(resumed.model.state_dict()[k], v, rtol=0, atol=0)
    with pytest.raises(TrainingError, match="needs init_from"):
        Trainer(dataclasses.replace(tiny, grow_d_ff=d_ff), tmp_path / "bad").train()


def test_en_fr_wide_preset_grows_en_fr_stories_model():
    wide, stories = PRESETS["en-fr-wide"], PRESETS["en-fr-stories"]
    assert wide.init_from == "checkpoints/en-fr" and wide.grow_d_ff == 2 * 768
    assert wide.real_data == stories.real_data and wide.real_repeat == stories.real_repeat
    assert wide.lr_factor == stories.lr_factor and wide.average_every == 300 and wide.checkpoint_every == 100


def test_en_fr_wider_preset_grows_the_wide_model_again():
    wider, wide = PRESETS["en-fr-wider"], PRESETS["en-fr-wide"]
    assert wider.init_from == "checkpoints/en-fr" and wider.grow_d_ff == 2 * wide.grow_d_ff
    assert (wider.real_data, wider.real_repeat) == (wide.real_data, wide.real_repeat)
    assert wider.lr_factor < wide.lr_factor


def test_en_fr_steady_preset_continues_the_shipped_size_at_the_low_peak():
    steady, wider = PRESETS["en-fr-steady"], PRESETS["en-fr-wider"]
    assert steady.init_from == "checkpoints/en-fr" and not steady.grow_d_ff
    assert (steady.real_data, steady.real_repeat) == (wider.real_data, wider.real_repeat)
    assert steady.lr_factor == wider.lr_factor and steady.average_every == 300


def test_en_fr_everyday_only_preset_leaves_the_manuals_out_and_keeps_the_rest():
    """Session 11: the shipped size, session 10's lr and repeats, every corpus but the manuals'."""
    from transformer.training.presets import REAL_KDE

    only, steady = PRESETS["en-fr-everyday-only"], PRESETS["en-fr-steady"]
    assert only.init_from == "checkpoints/en-fr" and not only.grow_d_ff
    assert not set(only.real_data) & set(REAL_KDE.real_data)
    assert set(only.real_data) == set(steady.real_data) - set(REAL_KDE.real_data)
    assert {"everyday", "everyday_words", "games", "objects", "dialogue", "stories"} == set(only.real_data)
    assert only.real_repeat == steady.real_repeat  # every everyday corpus weighted as before
    assert only.corpus == steady.corpus and only.align_pronoun == steady.align_pronoun  # the coreference corpus stays
    assert only.lr_factor == steady.lr_factor and only.average_every == 300
