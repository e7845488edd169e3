"""Pure helpers, typed views and figure builders behind the app."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
from apptest import z_of

from pages._ui import figures
from pages._ui.export import table_csv, to_csv
from pages._ui.i18n import Translator
from pages._ui.views import Context, DiffView, FocusView, HeadView, OverviewView, WordsView
from transformer.attention import AttentionKind, HeadId
from transformer.inspection.maps import difference, merge_words, token_focus, word_labels
from transformer.tokenizer import word_groups

PIECES = ["▁The", "▁an", "imal", "▁didn", "'", "t", "▁it", ".", "</s>"]
TR = Translator("en")


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
    text = to_csv(np.array([[0.25, -0.75]]), ["=cmd"], ['a"b', "c"])
    lines = text.splitlines()
    assert lines[0] == '"query \\ key","a""b","c"'
    assert lines[1] == '"\'=cmd",0.250000,-0.750000'  # a negative number stays a number
    # every cell a spreadsheet would read as a formula gets an apostrophe, in tables as in matrices
    rows = [
        {"token": t, "n": i, "share": 0.5, "none": None} for i, t in enumerate(["=1+1", "+x", "-x", "@x", "\tx", "\rx"])
    ]
    lines = table_csv(rows).splitlines()
    assert lines[0] == '"token","n","share","none"'
    assert lines[1] == '"\'=1+1",0,0.500000,'
    assert [line.split(",")[0] for line in lines[2:4]] == ['"\'+x"', '"\'-x"']
    assert table_csv(rows[3:4]) == '"token","n","share","none"\n"\'@x",3,0.500000,\n'
    assert table_csv(rows[4:5]).splitlines()[1].startswith('"\'\tx"') and '"\'\rx"' in table_csv(rows[5:])
    assert table_csv([{"a": "plain", "b": float("nan")}]) == '"a","b"\n"plain",\n'


def test_heatmap_keeps_repeated_tokens_apart_and_escapes_markup():
    labels = ["▁the", "▁cat", "▁the", "</s>"]
    fig = figures.attention_heatmap(np.eye(4), labels, labels, TR, "<b>x</b>").to_plotly()
    trace = fig.data[0]
    assert len(set(trace.x)) == 4  # "▁the" twice stays two columns
    assert [s.replace("\u200b", "") for s in trace.y] == ["▁the", "▁cat", "▁the", "&lt;/s&gt;"]
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.xaxis.type == "category"  # first query on top
    assert "&lt;b&gt;" in fig.layout.title.text
    assert "query: %{y}" in trace.hovertemplate and "key: %{x}" in trace.hovertemplate


def test_masked_scores_show_minus_infinity_not_a_large_number():
    scores = np.array([[1.5, -np.inf], [0.5, 2.0]], dtype=np.float32)
    heatmap = figures.attention_heatmap(scores, ["a", "b"], ["a", "b"], TR, diverging=True)
    fig = heatmap.to_plotly()
    z = np.array(fig.data[0].z, dtype=float)
    assert np.isnan(z[0, 1]) and z[1, 1] == 2.0  # the masked cell carries no number
    assert fig.data[0].text[0][1] == "−∞"
    # what the canvas chart receives: the same z as plotly's typed array, the texts, a colour scale it can read
    sent = json.loads(json.dumps(heatmap.to_dict()))
    trace = sent["data"][0]
    assert trace["z"]["dtype"] == "f4" and trace["z"]["shape"] == "2,2"
    np.testing.assert_array_equal(z_of(trace), z)
    assert trace["text"][0][1] == "−∞" and sent["layout"]["plot_bgcolor"] == figures.MASKED_COLOR
    assert trace["reversescale"] and trace["colorscale"][0] == [0.0, "rgb(103,0,31)"]  # RdBu, resolved
    assert trace["meta"]["hover"] == ["query", "key", "Δ weight"]
    assert trace["meta"]["buttons"] == [TR("fig.save_png"), TR("fig.reset_zoom")]


def test_overview_is_one_byte_per_cell_with_gaps_and_clickable_rings():
    w = np.random.default_rng(1).random((6, 8, 20, 20))
    fig = figures.heads_overview(w, TR, "all", highlight=(2, 3))
    assert [t.type for t in fig.data] == ["heatmap", "scatter"]
    dots = fig.data[1]
    assert len(dots.x) == 6 * 8 and list(dots.customdata[8 * 2 + 3]) == [2, 3]
    assert (dots.x[3], dots.y[8 * 2]) == (3 * 21 + 9.5, 2 * 21 + 9.5)  # tile centres
    z = np.asarray(fig.data[0].z)
    assert z.dtype == np.uint8 and z.shape == (6 * 21 - 1, 8 * 21 - 1)
    assert (z[20] == 255).all() and (z[:, 20] == 255).all()  # white one-cell gaps between tiles
    np.testing.assert_array_equal(z[21 * 2 : 21 * 2 + 20, 21 * 3 : 21 * 3 + 20], np.round(w[2, 3] * 254))
    assert len(fig.layout.shapes) == 1
    big = np.random.default_rng(2).random((3, 4, 127, 127))
    assert len(pio.to_json(figures.heads_overview(big, TR, "all"), validate=False)) < 1_000_000


class _A:
    """A stand-in analysis with three source pieces and two produced ones."""

    source_pieces = ["▁it", "▁it", "</s>"]
    target_pieces = ["<s>", "▁il"]
    output_pieces = ["▁il", "</s>"]
    encoder = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 3))
    decoder = np.random.default_rng(1).dirichlet(np.ones(2), size=(1, 4, 2))
    cross = np.random.default_rng(2).dirichlet(np.ones(3), size=(1, 4, 2))

    def maps(self, kind):
        return {AttentionKind.ENCODER: self.encoder, AttentionKind.DECODER: self.decoder}.get(kind, self.cross)

    def labels(self, kind):
        from transformer.analysis import Analysis

        return Analysis.labels(self, kind)


class _Ckpt:
    card: dict = {}

    class config:
        n_encoder_layers, n_decoder_layers, n_heads = 2, 1, 4


def test_views_give_the_matrix_the_csv_and_the_figure_show():
    a, b = _A(), _A()
    b.encoder = b.encoder[..., :2, :2]
    ctx = Context(a, _Ckpt(), lambda text: b)
    head = HeadView(HeadId(AttentionKind.CROSS, 0, 2)).matrix(ctx)
    np.testing.assert_array_equal(head.values, a.cross[0, 2])
    assert head.rows == a.output_pieces and head.cols == a.source_pieces
    csv = HeadView(HeadId(AttentionKind.CROSS, 0, 2)).csv(ctx).splitlines()
    assert csv[0] == '"query \\ key","▁it","▁it","</s>"' and len(csv) == 1 + 2
    assert csv[1] == '"▁il",' + ",".join(f"{x:.6f}" for x in a.cross[0, 2, 0])
    fig = HeadView(HeadId(AttentionKind.CROSS, 0, 2)).figure(ctx, TR).to_plotly()
    np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float), a.cross[0, 2], rtol=1e-6)
    focus = FocusView(AttentionKind.ENCODER, 1).matrix(ctx)
    assert focus.values.shape == (8, 3) and focus.rows[5] == "L1 H1"
    diff = DiffView(HeadId(AttentionKind.ENCODER, 1, 0), "other").matrix(ctx)
    assert diff.values.shape == (2, 2) and diff.diverging
    words = WordsView(HeadId(AttentionKind.ENCODER, 0, 0)).matrix(ctx)
    assert words.values.shape == (3, 3) and words.cols == ["it", "it", "</s>"]
    overview = OverviewView(AttentionKind.ENCODER, HeadId(AttentionKind.ENCODER, 1, 2)).matrix(ctx)
    assert overview.values.shape == (2 * 4 * 3, 3) and overview.rows[0].startswith("L0 H0")
    # views are values: equal views are equal keys, whatever their title
    same = HeadView(HeadId(AttentionKind.CROSS, 0, 2))
    assert (
        same == HeadView(HeadId(AttentionKind.CROSS, 0, 2))
        and {same: 1}[HeadView(HeadId(AttentionKind.CROSS, 0, 2))] == 1
    )
    assert same != HeadView(HeadId(AttentionKind.CROSS, 0, 1)) and same.file_name() == "cross_L0_H2"
