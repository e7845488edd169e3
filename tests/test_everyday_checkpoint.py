"""Checkpoints measured by scripts/evaluate_everyday.py --write: their everyday figures re-measured on a sample.

The script wrote "everyday_eval": chrF and BLEU on the everyday corpus's held-out campaigns, and "sample": the
same on the first SAMPLE test sentences. Greedy decoding is deterministic, so re-measuring gives the same
numbers (up to float noise between thread counts). Seconds per checkpoint.
"""

from __future__ import annotations

import json

import pytest

from transformer.checkpoint import load_checkpoint
from transformer.corpus.real import load_real
from transformer.evaluate_real import SAMPLE, score_pairs
from transformer.layout import SHIPPED_ROOT

MEASURED = sorted(
    p.parent.name
    for p in SHIPPED_ROOT.glob("*/card.json")
    if "sample" in json.loads(p.read_text(encoding="utf-8")).get("everyday_eval", {})
)


@pytest.mark.skipif(not MEASURED, reason="no shipped checkpoint has everyday figures yet")
@pytest.mark.parametrize("name", MEASURED)
def test_the_cards_everyday_sample_re_measures(name):
    ckpt = load_checkpoint(SHIPPED_ROOT / name)
    recorded = ckpt.card["everyday_eval"]["sample"]
    again = score_pairs(ckpt.model, ckpt.tokenizer, load_real("test", ("everyday",))[:SAMPLE])
    assert again["n_sentences"] == recorded["n_sentences"] == SAMPLE
    assert again["chrf"] == pytest.approx(recorded["chrf"], abs=0.5)
    assert again["bleu"] == pytest.approx(recorded["bleu"], abs=1.0)
