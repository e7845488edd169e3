from __future__ import annotations

import math

import torch

from transformer import Transformer, TransformerConfig, sinusoidal_table


def test_sinusoidal_matches_the_paper_formula():
    table = sinusoidal_table(50, 16)
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / (10000 ** (2 * i / 16))
            assert math.isclose(table[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(table[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)


def _encode(positional: str, tokens: torch.Tensor) -> torch.Tensor:
    torch.manual_seed(0)
    cfg = TransformerConfig.preset("tiny", vocab_size=30, positional=positional)
    return Transformer(cfg).eval().encode(tokens)


def test_without_positions_the_encoder_is_permutation_equivariant():
    tokens = torch.tensor([[5, 6, 7, 8, 9]])
    perm = torch.tensor([3, 0, 4, 1, 2])
    out = _encode("none", tokens)
    out_perm = _encode("none", tokens[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm], atol=1e-5, rtol=1e-5)
    for kind in ("sinusoidal", "learned"):
        out = _encode(kind, tokens)
        assert not torch.allclose(_encode(kind, tokens[:, perm]), out[:, perm], atol=1e-3)


def test_rows_of_a_batch_can_start_at_their_own_positions():
    """Continuous batching: a row that joined later is at its own position (PositionalEncoding's tensor start)."""
    from transformer.positional import PositionalEncoding

    pe = PositionalEncoding("sinusoidal", 20, 16)
    x = torch.randn(3, 2, 16)
    got = pe(x, torch.tensor([0, 5, 17]))
    for row, start in enumerate((0, 5, 17)):
        torch.testing.assert_close(got[row : row + 1], pe(x[row : row + 1], start))
    try:
        pe(x, torch.tensor([0, 5, 19]))  # 19 + 2 > max_len
    except ValueError as exc:
        assert "longer than max_len" in str(exc)
    else:
        raise AssertionError("positions past max_len were accepted")
