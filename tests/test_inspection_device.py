"""Every inspection function builds its tensors on the model's device.

With test_device.py's harness: the meta device stands in for "not the model's" (a tensor built without
the model's device lands on meta, and every op that returns one is recorded). The model lives on the
CPU; each function must give the same result as without the patch, and no op may produce a meta tensor.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_device import on_a_foreign_default_device

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import load_checkpoint
from transformer.corpus import CorpusSpec, generate_test
from transformer.inspection import attention_variants, masking, positions
from transformer.inspection.arithmetic import walkthrough
from transformer.inspection.headlab import head_map, measure, probe_set, rank_heads, set_statistics
from transformer.inspection.multihead import head_contributions
from transformer.inspection.scaling import model_scaling
from transformer.options import CallOptions, HeadMask

TEXT = "The dog didn't cross the road because it was too tired."
OTHER = "The cat was tired."


def assert_same(a, b) -> None:
    """Equal results: arrays element for element, dataclasses field by field, containers item by item."""
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    else:
        assert a == b or (a != a and b != b), (a, b)  # NaN equals NaN here


@pytest.fixture(scope="module")
def ckpt(trained_checkpoint):
    return load_checkpoint(trained_checkpoint)


def test_every_inspection_builds_on_the_models_device(ckpt):
    m, tok = ckpt.model, ckpt.tokenizer
    src = tok.source_ids(TEXT, m.config.max_len)
    dec = [m.config.bos_id] + tok.encode("Le chien")
    labels = ([str(i) for i in range(len(dec))], [str(i) for i in range(len(src))])
    ps = probe_set(tok, generate_test(CorpusSpec(n_examples=600, n_test=100)), 12)
    off = CallOptions(head_mask=HeadMask.without(m.config, [HeadId(AttentionKind.CROSS, 1, 0)]))
    calls = {
        "walkthrough": lambda: walkthrough(m, src, dec, HeadId(AttentionKind.CROSS, 1, 2), 1, labels),
        "padding_demo": lambda: masking.padding_demo(m, tok, [TEXT, OTHER]),
        "look_ahead_demo": lambda: masking.look_ahead_demo(m, tok, TEXT),
        "padding_effect": lambda: masking.padding_effect(m, tok, OTHER, TEXT),
        "head_contributions": lambda: head_contributions(m, src, dec, AttentionKind.DECODER, 0, 1),
        "position_table": lambda: positions.position_table(m, 16),
        "embedding_norms": lambda: positions.embedding_norms(m, src),
        "order_blindness": lambda: positions.order_blindness(m, tok, TEXT, 1),
        "model_scaling": lambda: model_scaling(m, src, dec),
        "restricted_runs": lambda: attention_variants.restricted_runs(m, tok, TEXT, [None, 2, 0]),
        "measure": lambda: measure(m, ps, off),
        "rank_heads": lambda: rank_heads(m, ps),
        "set_statistics": lambda: set_statistics(m, ps),
        "head_map": lambda: head_map(m, src, dec, HeadId(AttentionKind.ENCODER, 0, 3)),
    }
    for name, call in calls.items():
        expected = call()
        got, ops = on_a_foreign_default_device(call)
        assert ops == [], name
        assert_same(expected, got)
