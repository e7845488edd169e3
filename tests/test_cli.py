from __future__ import annotations

import json

import pytest
from conftest import run_cli

from transformer.checkpoint import load_checkpoint
from transformer.cli import main


def test_info_prints_config_parameters_and_card(trained_checkpoint, capsys):
    assert main(["info", "--checkpoint", str(trained_checkpoint)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["n_heads"] == 4 and out["parameters"] > 0 and out["card"]["step"] == 60


def test_translate_json_has_pieces_and_attention_of_the_right_shapes(trained_checkpoint, capsys):
    code = main(
        [
            "translate",
            "--checkpoint",
            str(trained_checkpoint),
            "--json",
            "--beam",
            "2",
            "The dog was too tired.",
            "The cow didn't cross the road.",
        ]
    )
    assert code == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    cfg, tokenizer = load_checkpoint(trained_checkpoint).config, load_checkpoint(trained_checkpoint).tokenizer
    for line in lines:
        rec = json.loads(line)
        S, T = len(rec["source_pieces"]), len(rec["target_pieces"])
        assert rec["source_pieces"][-1] == "</s>" and rec["target_pieces"][0] == "<s>"
        assert len(rec["output_pieces"]) == T
        assert rec["target_pieces"][1:] == rec["output_pieces"][:-1]
        att = rec["attention"]
        assert len(att["encoder"]) == cfg.n_encoder_layers and len(att["cross"]) == cfg.n_decoder_layers
        assert [len(att["encoder"][0]), len(att["encoder"][0][0]), len(att["encoder"][0][0][0])] == [cfg.n_heads, S, S]
        assert [len(att["decoder"][0][0]), len(att["decoder"][0][0][0])] == [T, T]
        assert [len(att["cross"][0][0]), len(att["cross"][0][0][0])] == [T, S]
        produced = [p for p in rec["output_pieces"] if p != "</s>"]
        assert rec["translation"] == tokenizer.sp.decode_pieces(produced) != ""


@pytest.mark.slow
def test_translate_reads_stdin_and_skips_empty_lines(trained_checkpoint):
    res = run_cli(
        "translate",
        "--checkpoint",
        str(trained_checkpoint),
        input="The dog was too tired.\n\nThe cat was too scared.\n",
    )
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.strip().splitlines()) == 2 and "empty line" in res.stderr


def test_a_missing_or_broken_checkpoint_is_a_clear_error(tmp_path, capsys):
    assert main(["info", "--checkpoint", str(tmp_path / "nope")]) == 2
    assert "not a checkpoint directory" in capsys.readouterr().err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{}")
    assert main(["translate", "--checkpoint", str(tmp_path / "bad"), "hi"]) == 2
    assert "missing" in capsys.readouterr().err


def test_evaluate_json_reports_metrics_and_every_head(trained_checkpoint, capsys):
    assert main(["evaluate", "--checkpoint", str(trained_checkpoint), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("pronoun_accuracy", "exact_match", "bleu", "chrf", "n_sentences", "heads"):
        assert key in report
    cfg = load_checkpoint(trained_checkpoint).config
    heads = report["heads"]
    kinds = {(h["kind"], h["query"]) for h in heads}
    assert kinds == {("encoder", "pronoun"), ("encoder", "cue"), ("cross", "pronoun")}
    assert len(heads) == cfg.n_heads * (2 * cfg.n_encoder_layers + cfg.n_decoder_layers)
    assert all(0.0 <= h["score"] <= 1.0 for h in heads)
    assert 0.0 <= report["pronoun_accuracy"] <= 1.0 and report["n_sentences"] == 100


def test_without_a_shipped_checkpoint_the_cli_says_so(monkeypatch, tmp_path, capsys):
    import transformer.cli as cli

    monkeypatch.setattr(cli, "DEFAULT_CHECKPOINT", tmp_path / "absent")
    assert main(["translate", "hello"]) == 2
    assert "no checkpoint is installed" in capsys.readouterr().err


def test_a_preset_without_out_trains_into_its_own_shipped_folder(capsys):
    """`train --preset coref` writes checkpoints/coref-en-fr (its checkpoint), never another preset's: all
    exist, so each run is refused before anything is built, naming the folder it would have replaced."""
    cases = (("coref", "coref-en-fr"), ("real-kde-align", "real-kde-align"), ("coref-variants", "coref-variants"))
    for preset, folder in cases:
        assert main(["train", "--preset", preset]) == 2
        assert f"checkpoints/{folder} already holds a trained checkpoint" in capsys.readouterr().err


def test_pickle_ask_without_a_terminal_means_no(monkeypatch, capsys):
    """Issue 60, fault 7: --pickle ask read a pickle whenever stdin was not a terminal (a script, a pipe)."""
    import argparse
    import io

    from transformer.cli import _pickle_consent

    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # not a terminal, whatever it holds
    assert _pickle_consent(argparse.Namespace(pickle="ask")) is False
    assert "--pickle yes" in capsys.readouterr().err
    assert _pickle_consent(argparse.Namespace(pickle="yes")) is True
