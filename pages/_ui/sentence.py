"""The top of every page that works on the sidebar's sentence: the translation and honest warnings."""

from __future__ import annotations

import streamlit as st

from transformer.analysis import Analysis
from transformer.checkpoint import Checkpoint
from transformer.corpus.tatoeba import LEADERBOARD
from transformer.inspection.training_data import (
    PublicFigure,
    RealSource,
    Scores,
    Session,
    public_figures,
    training_summary,
    zh_scores_of,
)
from transformer.provenance import is_imported, target_language
from transformer.vocabulary import Vocabulary, for_card, words_of

from . import cache
from .confidence import confidence_line
from .i18n import Translator, corpus_name, md_literal
from .session import MAX_TEXT, Subject
from .views import Context

VOCAB_SHOWN = 300  # words listed per class (a corpus of real text knows tens of thousands)


def sentence_analysis(subj: Subject, ckpt: Checkpoint, tr: Translator, show: bool = True) -> Analysis:
    """The analysis of the sidebar's sentence, after the notes it needs; an empty sentence stops the page.

    The notes and the translation go out as soon as the analysis is there, before the page takes its
    work slot back (cache.analyse's first): a class's translations arrive together, with one batch.
    """
    if not subj.text.strip():
        st.info(tr("sentence.empty"))
        st.stop()
    if not show:
        return cache.analyse(subj.path, subj.text, subj.beam)
    # an imported model's vocabulary is its tokenizer's (its <unk> notes below), not our corpus's words
    known = None if is_imported(ckpt.card) else cache.memo(for_card, ckpt.card)
    a = cache.analyse(subj.path, subj.text, subj.beam, first=lambda a: notes_and_translation(subj, ckpt, a, known, tr))
    if known is not None:
        with st.expander(tr("sentence.vocabulary", n=len(known.words))):
            for name, words in known.classes.items():
                label = tr(f"vocab.{name}") if tr.has(f"vocab.{name}") else name
                st.caption(label)
                more = [tr("realdata.more_words", n=len(words) - VOCAB_SHOWN)] if len(words) > VOCAB_SHOWN else []
                st.text(", ".join(words[:VOCAB_SHOWN] + more))
    trained_on(ckpt, tr)
    with st.expander(tr("sentence.pieces")):
        st.text(tr("sentence.source") + "  " + " ".join(a.source_pieces))
        st.text(tr("sentence.decoder_input") + "  " + " ".join(a.target_pieces))
        st.text(tr("sentence.produced") + "  " + " ".join(a.output_pieces))
    return a


def notes_and_translation(
    subj: Subject, ckpt: Checkpoint, a: Analysis, known: Vocabulary | None, tr: Translator
) -> None:
    """What the model could not read (cut, unknown characters, unseen or rare words), then the translation."""
    unseen = known.unseen(a.text) if known is not None else []
    rare = known.rare_in(a.text) if known is not None else []
    no_words = not words_of(a.text)
    guess = bool(unseen or no_words or a.unknown_chars)
    with st.container(key="sentence_notes"):
        if len(subj.text) >= MAX_TEXT:
            st.warning(tr("sentence.cut_chars", limit=MAX_TEXT))
        if a.truncated:
            st.warning(tr("sentence.truncated", pieces=a.n_pieces, limit=ckpt.config.max_len - 1))
        if a.unknown_chars:
            st.warning(tr("sentence.unknown_chars"))
            st.text(", ".join(a.unknown_chars))
        if unseen:
            st.warning(tr("sentence.unseen", n=len(unseen)))
            st.text(", ".join(unseen))
        elif no_words:
            st.warning(tr("sentence.no_words"))
        if rare:
            st.info(tr("realdata.rare", n=len(rare)))
            st.text(", ".join(tr("realdata.rare_word", word=w, count=c) for w, c in rare))
    with st.container(key="translation"):
        st.caption(tr("sentence.translation_guess" if guess else "sentence.translation"))
        st.text(a.translation or tr("sentence.nothing"))
    confidence_line(a, tr, ckpt.card)


def trained_on(ckpt: Checkpoint, tr: Translator) -> None:
    """The short card on what a model trained on real text saw (nothing for the other checkpoints)."""
    summary = cache.memo(training_summary, ckpt.card)
    if summary is None:
        return
    with st.expander(tr("realdata.trained_on"), expanded=False):
        sources = tr("realdata.list_sep").join(_source(s, tr) for s in summary.real)
        zh = target_language(ckpt.card) == "zh"  # English → Chinese: its own corpora, no generated sentences
        st.markdown(tr("zh.real" if zh else "realdata.real", pairs=f"{summary.real_pairs:,}", sources=sources))
        if summary.generated or not zh:
            st.markdown(tr("realdata.generated", n=f"{summary.generated:,}", variants=summary.variant_share))
        names = {s.name for s in summary.real}
        held_out = "games" if "games" in names else "everyday" if "everyday" in names else ""
        st.markdown(tr("zh.held_out" if zh else f"realdata.held_out_{held_out}" if held_out else "realdata.held_out"))
        sc = zh_scores_of(ckpt.card) if zh else summary.scores
        if sc is not None:
            _scores(sc, tr, "zh" if zh else "realdata")  # BLEU for Chinese (its goals), chrF for French
        public = cache.memo(public_figures, ckpt.card)
        if public:
            _public(public, tr)
        st.caption(
            tr(
                "realdata.time",
                steps=f"{summary.steps:,}",
                sessions=tr("realdata.list_sep").join(_session(x, tr) for x in summary.sessions),
            )
        )
        if summary.averaged:
            st.caption(tr("realdata.averaged", steps=tr("realdata.list_sep").join(f"{x:,}" for x in summary.averaged)))


def _scores(sc: Scores, tr: Translator, lines: str) -> None:
    """A model's figures on text it never saw, greedy and under its beam search (lines: the catalogue section whose
    scores, scores_beam and scores_everyday say them)."""
    st.markdown(tr(f"{lines}.scores", held_out=f"{sc.held_out:.1f}", gimp=f"{sc.gimp:.1f}"))
    if sc.beam_held_out is not None:
        beam = dict(beam=sc.beam_size, alpha=f"{sc.alpha:g}", held_out=f"{sc.beam_held_out:.1f}")
        st.markdown(tr(f"{lines}.scores_beam", **beam, gimp=f"{sc.beam_gimp:.1f}"))
    if sc.everyday is not None:
        beam = "–" if sc.beam_everyday is None else f"{sc.beam_everyday:.1f}"
        st.markdown(tr(f"{lines}.scores_everyday", greedy=f"{sc.everyday:.1f}", beam=beam))


def _source(s: RealSource, tr: Translator) -> str:
    """One corpus in the card's list: its name, pairs and licence, and the Debian packages it came from (none for
    a corpus extracted from a public repository's snapshot, as Tatoeba's)."""
    name, licence = md_literal(corpus_name(s.name, tr)), md_literal(s.licence)
    if not s.packages:
        return tr("realdata.source_repo", name=name, pairs=f"{s.pairs:,}", licence=licence)
    packages = (
        md_literal(", ".join(s.packages))
        if len(s.packages) <= 4
        else tr("realdata.more_packages", first=md_literal(", ".join(s.packages[:3])), n=len(s.packages) - 3)
    )
    return tr("realdata.source", name=name, pairs=f"{s.pairs:,}", licence=licence, packages=packages)


def _public(figures: tuple[PublicFigure, ...], tr: Translator) -> None:
    """The model's figures on the public test sets, each beside opus-mt's published one, with their source."""
    lines = []
    for f in figures:
        metric = tr(f"realdata.metric_{f.metric}")
        line = tr("realdata.public_line", test=tr(f"realdata.test_{f.test_set}"), metric=metric, ours=f"{f.ours:.1f}",
                  n=f"{f.n_sentences:,}")
        if f.published is not None:
            note = f" ({tr('realdata.public_every_script')})" if f.published.note else ""
            line += tr("realdata.public_beside", model=f.published.model, theirs=f"{f.published.value:.1f}", note=note)
        lines.append(f"- {line}")
    st.markdown(tr("realdata.public_intro") + "\n" + "\n".join(lines))
    st.caption(tr("realdata.public_source", source=LEADERBOARD))


def _session(s: Session, tr: Translator) -> str:
    """Where one training session ran, and for how long."""
    if s.device == "cuda":
        return tr("realdata.on_gpu", minutes=s.minutes)
    if s.threads:
        return tr("realdata.on_cpu", minutes=s.minutes, threads=s.threads)
    return tr("realdata.on_cpu_unknown", minutes=s.minutes)


def view_context(subj: Subject, ckpt: Checkpoint, a: Analysis) -> Context:
    return Context(a, ckpt, lambda text: cache.analyse(subj.path, text[:MAX_TEXT], subj.beam))
