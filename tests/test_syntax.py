"""Syntactic heads (Voita et al. 2019): Link Grammar's arcs, the word of each piece, the accuracy of a head's
word rows against the relation's most-frequent-offset baseline, and the role on the heatmaps' badges."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from transformer.attention import AttentionKind, HeadId
from transformer.inspection import roles as R
from transformer.inspection.syntax import (
    SYNTACTIC_MARGIN,
    Arc,
    Parser,
    SyntaxCounts,
    piece_words,
    relation_of,
    word_of_char,
)

ENC = AttentionKind.ENCODER
FLAGSHIP = "The animal didn't cross the old street quickly because it was very tired."


def test_link_labels_name_the_four_relations():
    assert relation_of("Ss*s") == ("nsubj", False) and relation_of("Sp") == ("nsubj", False)
    assert relation_of("Os") == ("dobj", True)
    assert relation_of("A") == ("amod", False)
    assert relation_of("EA") == ("advmod", False) and relation_of("E") == ("advmod", False)
    assert relation_of("MVa") == ("advmod", True)
    for other in ("SI", "SJl", "MVs", "Ds**c", "Pa", "Xp", "AN", "I*d"):  # not counted
        assert relation_of(other) is None, other


def test_pieces_belong_to_the_word_their_marker_starts():
    pieces = ["▁The", "▁anim", "al", "▁didn", "'", "t", "▁cross", ".", "</s>"]
    assert piece_words(pieces, [False] * 8 + [True]) == [0, 1, 1, 2, 2, 2, 3, 3, None]
    assert word_of_char("ab  c.") == [0, 0, -1, -1, 1, 1]


def test_a_head_that_points_from_each_dependent_to_its_governor_is_syntactic():
    """Four words, arcs amod 1 -> 2 (adjective 1 on noun 2) and nsubj 2 -> 3; head 0 looks from each dependent
    to its governor (accuracy 1), head 1 always at the next word, head 2 at the first word."""
    words = [0, 1, 2, 3, None]  # one piece a word, then EOS
    arcs = [Arc("amod", governor=2, dependent=1), Arc("nsubj", governor=3, dependent=2)]
    S = len(words)
    maps = np.zeros((1, 3, S, S))
    for q in range(S):
        maps[0, 1, q, min(q + 1, S - 1)] = 1.0  # the next piece
        maps[0, 2, q, 0] = 1.0
    maps[0, 0] = maps[0, 2]
    maps[0, 0, 1] = np.eye(S)[2]  # the adjective's row on its noun
    maps[0, 0, 2] = np.eye(S)[3]  # the subject's row on its verb
    counts = SyntaxCounts.empty()
    counts.add(maps, words, arcs)
    counts.add(maps, words, [Arc("amod", governor=3, dependent=1)])  # offset 2: the baseline is 1/2
    assert counts.accuracy("amod_dep", (1, 3)).tolist() == [[0.5, 0.5, 0.0]]
    assert counts.accuracy("nsubj_dep", (1, 3)).tolist() == [[1.0, 1.0, 0.0]]
    assert counts.baseline("amod_dep") == 0.5 and counts.baseline("nsubj_dep") == 1.0
    assert counts.rows["amod_gov"] == 2 and counts.offsets["amod_gov"] == {-1: 1, -2: 1}
    shares = {role: np.zeros((1, 3)) for role in ("previous", "next", "rare")}
    shares["amod_dep"] = np.array([[0.5 + SYNTACTIC_MARGIN, 0.55, 0.0]])
    roles = R.HeadRoles({ENC: shares}, {ENC: 1.0}, 2, baseline={"amod_dep": 0.5}, arcs={"amod_dep": 2})
    assert R.Role.SYNTACTIC in roles.roles(HeadId(ENC, 0, 0))
    assert R.Role.SYNTACTIC not in roles.roles(HeadId(ENC, 0, 1))  # 5 points over the baseline: not enough
    assert roles.syntactic(HeadId(ENC, 0, 0)) == ("amod_dep", pytest.approx(0.6), 0.5)
    assert roles.badges(ENC).tolist() == [["S", "", ""]]


def _parser_or_skip() -> None:
    if not Parser.available():
        if os.environ.get("CI") and sys.version_info[:2] == (3, 11):  # Debian's binding is built for its 3.11
            pytest.fail("Link Grammar is not installed (scripts/test.sh installs python3-link-grammar)")
        pytest.skip("Link Grammar is not installed")


def test_link_grammar_parses_the_flagship_offline():
    _parser_or_skip()
    arcs = set(Parser.shared().arcs(FLAGSHIP))
    # The(0) animal(1) didn't(2) cross(3) the(4) old(5) street(6) quickly(7) because(8) it(9) was(10) very(11)
    # tired.(12)
    assert {
        Arc("nsubj", 2, 1),  # animal -> didn't (the finite verb)
        Arc("dobj", 3, 6),  # cross -> street
        Arc("amod", 6, 5),  # old -> street
        Arc("advmod", 3, 7),  # cross -> quickly
        Arc("nsubj", 10, 9),  # it -> was
        Arc("advmod", 12, 11),  # very -> tired
    } <= arcs
    assert Parser.shared().arcs("") is None and Parser.shared().arcs("   ") is None  # (the library aborts on "")


def test_the_roles_measure_syntactic_heads_on_a_model():
    """measure_roles with arcs: the encoder's grid gains the syntactic roles measured, each with its baseline."""
    _parser_or_skip()
    import torch

    from transformer.inspection.syntax import parse_all
    from transformer.tokenizer import Tokenizer

    texts = [FLAGSHIP, "The cat drinks warm milk.", "My father works in a big hospital.", "She reads the book slowly."]
    tok = Tokenizer.train(texts * 20, vocab_size=90)
    torch.manual_seed(0)
    from transformer import Transformer, TransformerConfig

    model = Transformer(TransformerConfig.preset("tiny", vocab_size=tok.vocab_size, dropout=0.0)).eval()
    pairs = [(t, t) for t in texts]
    freq = R.piece_frequency(tok, {})
    roles = R.measure_roles(model, tok, pairs, freq, arcs=parse_all(texts))
    assert roles.parsed == 4
    measured = set(roles.shares[ENC]) - {"previous", "next", "rare"}
    assert {"nsubj_dep", "nsubj_gov", "dobj_dep", "amod_dep", "advmod_dep"} <= measured
    for role in measured:
        assert roles.shares[ENC][role].shape == (2, 4) and 0.0 < roles.baseline[role] <= 1.0
    without = R.measure_roles(model, tok, pairs, freq)
    assert without.parsed == 0 and set(without.shares[ENC]) == {"previous", "next", "rare"}
