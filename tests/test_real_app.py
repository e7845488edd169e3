"""The app with a model trained on real text: the short card on what it saw, notes on rare words."""

from __future__ import annotations

import json
import shutil

from apptest import EN, app, node_text, run

from transformer.corpus.real import DATA_DIR
from transformer.inspection.training_data import real_data_entry
from transformer.layout import SHIPPED_ROOT


def test_trained_on_card_and_rare_word_notes(tmp_path, monkeypatch):
    ckpt = tmp_path / "real-tiny"
    shutil.copytree(SHIPPED_ROOT / "tiny", ckpt, ignore=shutil.ignore_patterns("snapshots"))
    card = json.loads((ckpt / "card.json").read_text(encoding="utf-8"))
    card["train_config"]["real_data"] = ["libreoffice", "handbook", "apps"]
    card["real_data"] = real_data_entry(("libreoffice", "handbook", "apps"), DATA_DIR / "MANIFEST.json")
    vocab = card["vocabulary"]
    vocab["words"] = sorted(set(vocab["words"]) | {"selected", "file"})
    vocab["rare"] = {"selected": 2}
    (ckpt / "card.json").write_text(json.dumps(card), encoding="utf-8")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    at = run(app(text="The selected file"))
    notes = node_text(at.get_by_key("sentence_notes"))
    assert EN("realdata.rare", n=1) in notes
    assert EN("realdata.rare_word", word="selected", count=2) in notes
    assert "file (seen" not in notes  # a word seen often is not noted
    labels = [e.label for e in at.expander]
    assert EN("realdata.trained_on") in labels
    body = " ".join(m.value for m in at.markdown)
    pairs = sum(entry["pairs"] for entry in card["real_data"].values())
    assert f"{pairs:,}" in body and "MPL-2.0" in body and "4:7.4.7-1+deb12u14" in body
    assert EN("realdata.name_libreoffice") in body and EN("realdata.name_handbook") in body
    # 64 help packages are named by their first three and a count, not listed one by one
    apps = card["real_data"]["apps"]
    assert EN("realdata.name_apps") in body and f"{apps['pairs']:,}" in body
    first = ", ".join(f"{p} {v}" for p, v in sorted(apps["packages"].items())[:3])
    assert EN("realdata.more_packages", first=first, n=61) in body
    assert "zenity-common" not in body


def test_a_cards_reordering_examples_join_the_sidebar_examples(tmp_path, monkeypatch):
    from pages._ui.session import EXAMPLES

    ckpt = tmp_path / "real-tiny"
    shutil.copytree(SHIPPED_ROOT / "tiny", ckpt, ignore=shutil.ignore_patterns("snapshots"))
    card = json.loads((ckpt / "card.json").read_text(encoding="utf-8"))
    card["train_config"]["real_data"] = ["libreoffice", "handbook"]
    card["reordering_examples"] = [{"source": "The selected file opens."}, {"source": EXAMPLES[0]}, {"source": 3}]
    (ckpt / "card.json").write_text(json.dumps(card), encoding="utf-8")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    at = run(app())
    box = at.selectbox(key="example")
    assert box.options == [*EXAMPLES, EN("sidebar.reorder_example", text="The selected file opens.")]
    box.select("The selected file opens.")
    run(at)
    assert at.session_state["text"] == at.text_area(key="text").value == "The selected file opens."
    # the shipped checkpoints keep the coreference examples only (coref-variants' card has reordering
    # examples too, computed on real sentences it never saw: not offered)
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(SHIPPED_ROOT))
    for name in ("coref-en-fr", "coref-variants"):
        assert run(app(checkpoint=name)).selectbox(key="example").options == EXAMPLES


def test_every_shipped_real_text_checkpoint_shows_what_it_was_trained_on(monkeypatch):
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(SHIPPED_ROOT))
    for name in ("real-kde-align", "en-fr"):
        at = run(app(checkpoint=name, text="Select the layer you want to move."))
        assert not at.exception, name
        assert EN("realdata.trained_on") in [e.label for e in at.expander]
        body = " ".join(m.value for m in at.markdown)
        assert EN("realdata.name_libreoffice") in body
        assert EN("realdata.name_apps") in body and EN("realdata.name_kde") in body
        assert node_text(at.get_by_key("translation")).strip()
        card = json.loads((SHIPPED_ROOT / name / "card.json").read_text(encoding="utf-8"))
        averaged = [f"{a['step']:,}" for a in card.get("averaged_from", ())]  # averaged weights say of which steps
        shown = EN("realdata.averaged", steps=EN("realdata.list_sep").join(averaged))
        assert (shown in [c.value for c in at.caption]) == bool(averaged)
        full = card["real_coref"]
        assert EN("realdata.scores", held_out=f"{full['real']['chrf']:.1f}", gimp=f"{full['gimp']['chrf']:.1f}") in body
        beam = full["beam"]  # each card chose its α on the dev pages and measured its beam search under it
        shown = EN(
            "realdata.scores_beam",
            beam=beam["beam_size"],
            alpha=f"{beam['alpha']:g}",
            held_out=f"{beam['real']['chrf']:.1f}",
            gimp=f"{beam['gimp']['chrf']:.1f}",
        )
        assert shown in body
        card = json.loads((SHIPPED_ROOT / name / "card.json").read_text(encoding="utf-8"))
        captions = " ".join(c.value for c in at.caption)
        if name == "real-kde-align":  # one run on the CPU
            assert EN("realdata.on_cpu", minutes=card["wall_time_s"] / 60, threads=2) in captions
            assert EN("realdata.held_out") in body
        else:  # sessions on a GPU and on the CPU, each named; the everyday campaigns held out and scored
            kept = [x for x in card["sessions"] if x["kept"]]
            assert captions.count(EN("realdata.on_gpu", minutes=5.0)) == sum(
                x == {**x, "device": "cuda", "minutes": 5.0} for x in kept
            )
            for x in kept:  # each CPU session with its own minutes
                if x["device"] == "cpu":
                    assert EN("realdata.on_cpu", minutes=x["minutes"], threads=x["threads"]) in captions
            held_out = "held_out_games" if "games" in card["train_config"]["real_data"] else "held_out_everyday"
            assert EN(f"realdata.{held_out}") in body and EN("realdata.name_everyday") in body
            greedy, beam = (card[k]["everyday_test"]["chrf"] for k in ("everyday_eval", "everyday_eval_beam"))
            assert EN("realdata.scores_everyday", greedy=f"{greedy:.1f}", beam=f"{beam:.1f}") in body


def test_the_chinese_model_shows_its_bleu_on_text_it_never_saw(monkeypatch):
    """en-zh's short card gives the BLEU its goals are set in (evaluate_zh.py's figures), greedy and beam, where
    each of its kept sessions ran (GPU, or CPU and threads) and, when its weights are an average, the steps they
    average; in the Chinese interface too."""
    from pages._ui.i18n import Translator
    from pages._ui.sentence import _session as where
    from transformer.inspection.training_data import training_summary

    ZH = Translator("zh")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(SHIPPED_ROOT))
    card = json.loads((SHIPPED_ROOT / "en-zh" / "card.json").read_text(encoding="utf-8"))
    greedy, beam = card["zh_eval"], card["zh_eval_beam"]
    for tr, lang in ((EN, "en"), (ZH, "zh")):
        at = run(app(checkpoint="en-zh", text="The cat is sleeping on the sofa.", lang=lang))
        assert not at.exception
        body = " ".join(m.value for m in at.markdown)
        bleu = {k: f"{greedy[k]['bleu']:.1f}" for k in ("held_out", "gimp")}
        assert tr("zh.scores", **bleu) in body and tr("zh.held_out") in body
        shown = {k: f"{beam[k]['bleu']:.1f}" for k in ("held_out", "gimp")}
        assert tr("zh.scores_beam", beam=4, alpha=f"{card['decoding']['alpha']:g}", **shown) in body
        every = {"greedy": f"{greedy['everyday_test']['bleu']:.1f}", "beam": f"{beam['everyday_test']['bleu']:.1f}"}
        assert tr("zh.scores_everyday", **every) in body
        captions = " ".join(c.value for c in at.caption)
        sessions = training_summary(card).sessions
        assert sessions and all(where(s, tr) in captions for s in sessions)  # each kept session, where it ran
        # Debian versions with "~" (debian-edu-doc-en 2.12.23~deb12u1) are shown as written, not as strikethrough
        tilde = [f"{p} {v}" for d in card["real_data"].values() for p, v in d.get("packages", {}).items() if "~" in v]
        assert tilde and all(t.replace("~", "\\~") in body for t in tilde if "debian-edu-doc" in t), tilde
        if "averaged_from" in card:  # an average of kept weights names their steps
            steps = tr("realdata.list_sep").join(f"{a['step']:,}" for a in card["averaged_from"])
            assert tr("realdata.averaged", steps=steps) in captions
        else:  # no average claimed for weights that are not one
            assert tr("realdata.averaged", steps="@").split("@")[0] not in captions


def test_the_chinese_model_writes_chinese_punctuation_and_its_card_was_measured_so():
    """en-zh's target sentencepiece folds "，" into ","; its translations (live, and those its card's figures were
    measured on) write ，：；？！ after Chinese characters, never the ASCII marks."""
    import re

    import torch

    from transformer.checkpoint import load_checkpoint
    from transformer.evaluate_real import translate

    ascii_after_chinese = re.compile("[\u4e00-\u9fff][,:;?!]")
    ckpt = load_checkpoint(SHIPPED_ROOT / "en-zh")
    assert ckpt.tokenizer.restores_full_width
    with torch.inference_mode():
        out = translate(ckpt.model, ckpt.tokenizer, ["She opened the door and went into the kitchen."])[0]
    assert "，" in out and not ascii_after_chinese.search(out), out
    for search in ("zh_eval", "zh_eval_beam"):
        for name in ("held_out", "gimp", "everyday_test"):
            shown = [e["translation"] for e in ckpt.card[search][name]["examples"]]
            assert not any(ascii_after_chinese.search(t) for t in shown), (search, name)
    assert any("，" in t for t in shown)


def test_the_beam_slider_searches_with_the_length_penalty_the_card_chose():
    """real-kde-align's card chose α on its dev pages (scripts/sweep_length_penalty.py --write); at beam 4 the app
    translates with it (here a dev sentence whose translation α changes), and the slider's help says so."""
    import torch

    from transformer.analysis import analyse
    from transformer.beams import PAPER_ALPHA
    from transformer.checkpoint import DECODING, load_checkpoint
    from transformer.layout import SHIPPED_ROOT

    ckpt = load_checkpoint(SHIPPED_ROOT / "real-kde-align")
    assert DECODING in ckpt.card and ckpt.alpha != PAPER_ALPHA
    text = "The Base service can be invoked in a variety of ways."
    with torch.inference_mode():
        chosen = analyse(ckpt.model, ckpt.tokenizer, text, 4, alpha=ckpt.alpha).translation
        paper = analyse(ckpt.model, ckpt.tokenizer, text, 4, alpha=PAPER_ALPHA).translation
    assert chosen != paper
    at = run(app(text=text, beam=4, checkpoint="real-kde-align"))
    assert node_text(at.get_by_key("translation")).splitlines()[-1] == chosen
    assert at.slider(key="beam").help == EN(
        "sidebar.beam_help", alpha=f"{ckpt.alpha:g}", why=EN("sidebar.beam_alpha_card")
    )


def test_card_text_is_shown_literally_in_markdown():
    from pages._ui.i18n import md_literal

    assert md_literal("edu 2.12.23~deb12u1") == "edu 2.12.23\\~deb12u1"
    assert md_literal("[x](http://e) $a$ *b*") == "\\[x\\](http://e) \\$a\\$ \\*b\\*"
    assert md_literal("a_b `c` <i> |") == "a\\_b \\`c\\` \\<i\\> \\|"
    assert md_literal("GPL-2.0+ (LibreOffice help)") == "GPL-2.0+ (LibreOffice help)"
    assert md_literal("a\n\n# heading\n- item") == "a # heading - item"  # no new block from card text


def test_a_heads_same_token_sentence_shows_the_token_literally():
    """The multi-head page's "attends to the same token" sentence quotes the user's text: "~~" is not markup."""
    from types import SimpleNamespace

    from pages._ui.i18n import Translator
    from pages.multihead import describe

    same = SimpleNamespace(pattern="same", head=2, share=0.5, key=1, entropy=0.0)
    for lang in ("en", "zh"):
        text = describe(same, ["▁a", "▁~~x~~", "</s>"], Translator(lang))
        assert "'▁\\~\\~x\\~\\~'" in text and "~~x" not in text, text
    assert "'▁\\*'" in describe(same, ["▁a", "▁*"], Translator("en"))


def test_the_card_shows_the_public_test_figures_beside_opus_mt(tmp_path, monkeypatch):
    """Issue 61: the "trained on" panel states the model's figures on the public test sets (the card's
    public_eval), each beside opus-mt's published figure, with the source; a corpus from a repository snapshot
    (Tatoeba) is named without Debian packages."""
    ckpt = tmp_path / "real-tiny"
    shutil.copytree(SHIPPED_ROOT / "tiny", ckpt, ignore=shutil.ignore_patterns("snapshots"))
    card = json.loads((ckpt / "card.json").read_text(encoding="utf-8"))
    card["train_config"]["real_data"] = ["libreoffice", "tatoeba"]
    card["real_data"] = real_data_entry(("libreoffice", "tatoeba"), DATA_DIR / "MANIFEST.json")
    card["public_eval"] = {
        "greedy": {
            "tatoeba-test-v2021-08-07": {"n_sentences": 12681, "chrf": 61.24, "bleu": 40.1},
            "flores200-devtest": {"n_sentences": 1012, "chrf": 44.5, "bleu": 15.0},
        }
    }
    (ckpt / "card.json").write_text(json.dumps(card), encoding="utf-8")
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(tmp_path))
    at = run(app())
    body = " ".join(m.value for m in at.markdown)
    tatoeba = EN("realdata.public_line", test=EN("realdata.test_tatoeba-test-v2021-08-07"), metric="chrF",
                 ours="61.2", n="12,681")
    assert tatoeba + EN("realdata.public_beside", model="opus-mt-en-fr", theirs="68.3", note="") in body
    assert EN("realdata.test_flores200-devtest") in body and "70.3" in body
    assert EN("realdata.public_source", source="Helsinki-NLP/OPUS-MT-leaderboard") in [c.value for c in at.caption]
    assert EN("realdata.name_tatoeba") in body and "CC BY 2.0 FR" in body
