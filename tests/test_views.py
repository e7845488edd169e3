"""Pure helpers and figure builders behind the app."""

from __future__ import annotations

import numpy as np

from transformer import figures
from transformer.tokenizer import word_groups
from transformer.views import difference, merge_words, to_csv, token_focus, word_labels

PIECES = ["▁The", "▁an", "imal", "▁didn", "'", "t", "▁it", ".", "</s>"]


def test_word_groups_follow_the_stated_rule():
    groups = word_groups(PIECES)
    assert groups == [[0], [1, 2], [3, 4, 5], [6, 7], [8]]
    assert word_labels(PIECES, groups) == ["The", "animal", "didn't", "it.", "</s>"]


def test_merged_rows_still_sum_to_one():
    rng = np.random.default_rng(0)
    w = rng.random((2, 3, 9, 9))
    w /= w.sum(-1, keepdims=True)
    g = word_groups(PIECES)
    m = merge_words(w, g, g)
    assert m.shape == (2, 3, 5, 5)
    np.testing.assert_allclose(m.sum(-1), 1.0)
    # attention to "animal" = sum of its two pieces; from "animal" = mean of their rows
    np.testing.assert_allclose(m[0, 0, 0, 1], w[0, 0, 0, 1] + w[0, 0, 0, 2])
    np.testing.assert_allclose(m[0, 0, 1, 0], (w[0, 0, 1, 0] + w[0, 0, 2, 0]) / 2)


def test_token_focus_and_difference():
    w = np.arange(2 * 3 * 4 * 4, dtype=float).reshape(2, 3, 4, 4)
    rows = token_focus(w, 2)
    assert rows.shape == (6, 4)
    np.testing.assert_array_equal(rows[4], w[1, 1, 2])  # row = layer * H + head
    d = difference(w, w[..., :3, :])
    assert not d.same_shape and d.delta.shape == (2, 3, 3, 4) and np.all(d.delta == 0)


def test_csv_is_labelled_and_defuses_formulas():
    text = to_csv(np.array([[0.25, 0.75]]), ["=cmd"], ['a"b', "c"])
    lines = text.splitlines()
    assert lines[0] == '"query \\ key","a""b","c"'
    assert lines[1] == '"\'=cmd",0.250000,0.750000'


def test_heatmap_axes_keep_repeated_tokens_apart_and_escape_markup():
    labels = ["▁the", "▁cat", "▁the", "</s>"]
    fig = figures.attention_heatmap(np.eye(4), labels, labels, "<b>x</b>")
    layout = fig.layout
    assert list(layout.xaxis.tickvals) == [0, 1, 2, 3]  # numeric positions: "▁the" twice stays twice
    assert list(layout.yaxis.ticktext) == ["▁the", "▁cat", "▁the", "&lt;/s&gt;"]
    assert layout.yaxis.autorange == "reversed"  # first query on top
    assert "&lt;b&gt;" in layout.title.text
    custom = np.array(fig.data[0].customdata)
    assert custom[3, 0, 0] == "&lt;/s&gt;" and custom[0, 1, 1] == "▁cat"  # hover: query, key


def test_overview_is_one_trace_with_gaps_and_small_payload():
    w = np.random.default_rng(1).random((6, 8, 20, 20))
    fig = figures.heads_overview(w, "all", highlight=(2, 3))
    assert [t.type for t in fig.data] == ["heatmap", "scatter"]  # one heatmap; one clickable dot per head
    dots = fig.data[1]
    assert len(dots.x) == 6 * 8 and list(dots.customdata[8 * 2 + 3]) == [2, 3]
    assert (dots.x[3], dots.y[8 * 2]) == (3 * 21 + 9.5, 2 * 21 + 9.5)  # tile centres
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (6 * 21 - 1, 8 * 21 - 1)
    assert np.isnan(z[20]).all() and np.isnan(z[:, 20]).all()  # one-cell gaps between tiles
    np.testing.assert_allclose(z[21 * 2 : 21 * 2 + 20, 21 * 3 : 21 * 3 + 20], w[2, 3], rtol=1e-6)
    assert len(fig.layout.shapes) == 1
    # large maps go out as 8-bit weights, keeping the payload under 1 MB
    big = np.random.default_rng(2).random((3, 4, 127, 127))
    fig = figures.heads_overview(big, "all")
    zq = np.array(fig.data[0].z, dtype=float)
    np.testing.assert_allclose(zq[:127, :127], np.round(big[0, 0] * 254))
    assert (zq[127] == 255).all()  # gap row
    assert len(fig.to_json()) < 1_000_000
