"""The app on an English → 简体中文 checkpoint (issue 34): every page, in both interface languages."""

from __future__ import annotations

import pytest
from apptest import app, run
from zh_fixture import make_en_zh_checkpoint

from pages._ui.entry import SECTIONS

PAGES = [module for entries in SECTIONS.values() for module, _, _ in entries]


@pytest.fixture(scope="module")
def zh_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("zh-ckpts")
    make_en_zh_checkpoint(root / "en-zh")
    return root


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_an_en_zh_model(zh_root, monkeypatch, page, lang):
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(zh_root))
    at = run(app(None if page == "explorer" else page, lang=lang, checkpoint="en-zh", text="The book is on the table."))
    assert at.session_state["checkpoint"] == "en-zh"
    assert not at.exception


def test_the_picker_shows_each_models_language_pair(zh_root, monkeypatch):
    from apptest import EN

    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(zh_root))
    at = run(app(lang="zh", checkpoint="en-zh"))  # the interface in Chinese, the pair as the card says
    box = at.selectbox(key="checkpoint")
    assert box.format_func("en-zh") == "en-zh · en → zh" == EN("zh.pair", name="en-zh", pair="en → zh")


def test_words_tab_states_and_applies_the_chinese_rule(zh_root, monkeypatch):
    from apptest import EN, figures, tab

    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(zh_root))
    at = run(app(checkpoint="en-zh", text="The book is on the table."))
    assert EN("zh.coref_unmeasured") in [e.value for e in at.get_by_key("route")[0] if hasattr(e, "value")] or any(
        EN("zh.coref_unmeasured") == i.value for i in at.info
    )
    from transformer.attention import AttentionKind

    at.session_state["pick_kind"] = AttentionKind.CROSS
    tab(at, "explorer_tab", "explorer.tab.words")
    captions = [c.value for c in at.caption]
    assert EN("zh.words_rule") in captions and EN("zh.words_full_width") in captions  # its spm folds "，"
    fig = figures(at)["words"]
    labels = fig["data"][0]["y"] if "data" in fig else fig["rows"]
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in str(label)) for label in labels), labels


def test_evaluate_zh_writes_scores_probe_and_pair_into_the_card(zh_root, monkeypatch, tmp_path):
    import importlib.util
    import shutil

    from apptest import EN, node_text

    from transformer.checkpoint import load_checkpoint
    from transformer.layout import REPO_ROOT

    root = tmp_path / "ckpts"
    shutil.copytree(zh_root / "en-zh", root / "en-zh")
    spec = importlib.util.spec_from_file_location("evaluate_zh", REPO_ROOT / "scripts" / "evaluate_zh.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(root / "en-zh"), "--limit", "3", "--probe", "12", "--write"]) == 0
    card = load_checkpoint(root / "en-zh").card
    assert card["target_lang"] == "zh" and card["zh_eval"]["bleu_tokenize"] == "zh"
    assert {"held_out", "gimp", "everyday_test", "goals"} <= set(card["zh_eval"])
    assert {h["kind"] for h in card["evaluation"]["heads"]} == {"encoder"} and card["evaluation"]["n_sentences"] > 0
    assert card["real_data"]["zh/everyday"]["pairs"] > 20000
    assert isinstance(card["reordering_examples"], list) and isinstance(card["everyday_examples"], list)
    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(root))
    at = run(app(checkpoint="en-zh", text="The book is on the table."))
    route = " ".join(i.value for i in at.info)
    assert "il/elle" in route and "L" in route and EN("zh.coref_unmeasured") not in route
    body = " ".join(m.value for m in at.markdown)
    assert "English–Chinese pairs" in body and "GPL-2.0-or-later" in body
    assert EN("zh.name_everyday") in body and "zh/everyday" not in body
    assert "generated coreference sentences" not in body
    assert node_text(at.get_by_key("translation"))


def test_evaluate_zh_dev_prints_each_corpus_of_the_pooled_rule(zh_root, capsys):
    import importlib.util
    import json

    from transformer.layout import REPO_ROOT

    spec = importlib.util.spec_from_file_location("evaluate_zh", REPO_ROOT / "scripts" / "evaluate_zh.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(zh_root / "en-zh"), "--dev", "--limit", "4"]) == 0
    lines = dict(line.split(" ", 1) for line in capsys.readouterr().out.splitlines() if line.startswith("zh_dev"))
    assert json.loads(lines["zh_dev"])["n_sentences"] == 4
    by_corpus = json.loads(lines["zh_dev_by_corpus"])
    # the four pooled sentences are LibreOffice's (the first corpus of the rule)
    assert set(by_corpus) == {"zh/libreoffice", "mean"}
    assert by_corpus["mean"] == by_corpus["zh/libreoffice"]
    # --dev-corpora pools the corpora named, each read off the pooled translations
    assert module.main([str(zh_root / "en-zh"), "--dev", "--dev-corpora", "zh/docs,zh/everyday"]) == 0
    lines = dict(line.split(" ", 1) for line in capsys.readouterr().out.splitlines() if line.startswith("zh_dev"))
    by_corpus = json.loads(lines["zh_dev_by_corpus"])
    assert set(by_corpus) == {"zh/docs", "zh/everyday", "mean"}
    assert by_corpus["mean"] == round((by_corpus["zh/docs"] + by_corpus["zh/everyday"]) / 2, 2)


def test_every_head_lab_tab_renders_and_the_probe_says_why_it_does_not_apply(zh_root, monkeypatch):
    from apptest import EN, tab

    from pages.headlab import TABS

    monkeypatch.setenv("TRANSFORMER_CHECKPOINTS", str(zh_root))
    at = run(app("headlab", checkpoint="en-zh", text="The book is on the table."))
    for t in TABS:
        tab(at, "lab_tab", f"lab.tab.{t}")
        if t in ("probe", "ablation"):
            assert EN("zh.no_probe_set") in [i.value for i in at.info], t


def test_the_length_penalty_sweep_scores_a_chinese_checkpoint_as_chinese(zh_root, monkeypatch, tmp_path):
    """A freshly trained en-zh card holds no "target_lang" (evaluate_zh.py writes it later): the sweep reads the
    language from the corpora the card names, as the app does, so its BLEU tokenizes Chinese from the start."""
    import importlib.util
    import shutil

    import transformer.evaluate_real as evaluate_real
    from transformer.checkpoint import load_checkpoint
    from transformer.layout import REPO_ROOT

    shutil.copytree(zh_root / "en-zh", tmp_path / "en-zh")
    assert "target_lang" not in load_checkpoint(tmp_path / "en-zh").card
    seen, real_score = [], evaluate_real.score
    monkeypatch.setattr(evaluate_real, "score", lambda h, r, **kw: seen.append(kw) or real_score(h, r, **kw))
    spec = importlib.util.spec_from_file_location("sweep", REPO_ROOT / "scripts" / "sweep_length_penalty.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(tmp_path / "en-zh"), "--limit", "3", "--alphas", "1.0", "2.0"]) == 0
    assert len(seen) == 3 and all(kw == {"target_lang": "zh"} for kw in seen)  # greedy, then each α
