"""Session state, the sidebar, and the share link (st.query_params).

Every session shares the models and analyses (see cache.py); what belongs to one
session lives in st.session_state under the keys below. Callbacks are module
functions: a page's script namespace is never captured by a widget.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from transformer.attention import AttentionKind, HeadId
from transformer.checkpoint import DECODING, Checkpoint, CheckpointError
from transformer.corpus import SEED_SENTENCES
from transformer.decoding import PAPER_ALPHA
from transformer.inspection import everyday_examples
from transformer.inspection.reorder import card_examples
from transformer.layout import (
    DEFAULT_NAME,
    checkpoints_root,
    inside,
    list_checkpoints,
    outside_links,
    tree_signature,
)

from . import cache
from .i18n import DEFAULT_LANGUAGE, LANGUAGES, Translator
from .lru import BoundedCache
from .probe import default_head
from .slots import WORK_SLOTS, work_slot  # noqa: F401  (app.py runs each page body in a work slot)
from .widgets import ensure_choice, open_tab, set_head

EXAMPLES = [
    SEED_SENTENCES[0][0],
    SEED_SENTENCES[1][0],
    "The cow didn't cross the road because it was too scared.",
    "The cow didn't cross the road because it was too narrow.",
    "The dogs didn't cross the bridge because they were too tired.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "The trophy didn't fit in the suitcase because it was too small.",
    "The horse stopped at the river since it was too flooded.",
    "The goat avoided the bridges because they were too dangerous.",
]
MAX_TEXT = 20_000  # characters kept from a paste; the model reads far fewer pieces (see the page's note)
MAX_SHARED_TEXT = 600  # a longer sentence is left out of the share link
BEAMS = range(1, 9)
# The main head picker of every page uses these keys, so a head chosen on one page is kept on the next.
PICK = "pick"
PERSISTENT = ("lang", "checkpoint", "text", "beam", f"{PICK}_kind", f"{PICK}_layer", f"{PICK}_head")


def translator() -> Translator:
    return Translator(st.session_state.get("lang", DEFAULT_LANGUAGE))


# Keyed by the folders' modification times (tree_signature), so a new sentence does not rescan the folder
# (~12 ms); the time limit is a backstop for what the signature cannot see (a link's target changing).
@st.cache_data(ttl=60, max_entries=16, show_spinner=False)
def _scan(root: str, signature: str) -> dict[str, str]:
    root_path = Path(root)
    found = list_checkpoints(root_path)
    found.sort(key=lambda p: (p.name != DEFAULT_NAME, len(p.relative_to(root_path).parts), str(p)))
    return {str(p.relative_to(root_path)): str(p) for p in found}


@st.cache_data(ttl=60, max_entries=16, show_spinner=False)
def _links(root: str, signature: str) -> list[str]:
    return outside_links(root)


SIGNATURE_S = cache.STAMP_S  # how long one read of the folder's signature serves every session (the same rule)
_signatures: BoundedCache[str] = BoundedCache(16, 2**16, ttl_s=SIGNATURE_S)  # root -> signature


def _signature(root: Path) -> str:
    """tree_signature as one short string (st.cache_data hashes a 40-character key faster than the tuple),
    read at most once per SIGNATURE_S for the whole server: a checkpoint copied in shows within a second.
    Each read is ~150 system calls; read on every run, under 30 sessions each of those calls waited for
    the interpreter lock again, and the reads took a third of the sessions' script time (profiled with
    bench/bench_load.py)."""
    return _signatures.get(root, lambda: hashlib.sha1(repr(tree_signature(root)).encode()).hexdigest())


_insides: BoundedCache[bool] = BoundedCache(256, 2**20, size_of=lambda _: 1, ttl_s=SIGNATURE_S)


def inside_root(path: str) -> bool:
    """layout.inside(checkpoints_root(), path), decided at most once per SIGNATURE_S for the server, and again
    as soon as the folder's signature changes. Each decision resolves every link on the way (~30 system calls);
    made twice per run, under 30 sessions they took a tenth of the server's time (py-spy, bench/bench_load.py)."""
    root = checkpoints_root()
    return _insides.get((str(root), path, _signature(root)), lambda: inside(root, Path(path)))


def checkpoint_choices() -> dict[str, str]:
    """label -> path of every checkpoint under the root, the shipped default first (scanned again when a
    folder under the root changes)."""
    root = checkpoints_root()
    return _scan(str(root), _signature(root))


@st.cache_data(ttl=60, max_entries=16, show_spinner=False)
def _pairs(root: str, signature: str) -> dict[str, str]:
    """label -> "en → zh" of every checkpoint under the root, from its card (an unreadable card: no pair)."""
    from transformer.inspection.languages import pair_label
    from transformer.layout import CARD_FILE

    out = {}
    for label, path in _scan(root, signature).items():
        try:
            card = json.loads((Path(path) / CARD_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        out[label] = pair_label(card)
    return out


def checkpoint_pairs() -> dict[str, str]:
    """label -> the language pair ("en → zh") of every checkpoint the picker lists."""
    root = checkpoints_root()
    return _pairs(str(root), _signature(root))


def refused_links() -> list[str]:
    """Entries of the checkpoints folder that are links leading out of it (never listed nor read)."""
    root = checkpoints_root()
    return _links(str(root), _signature(root))


def refresh_choices() -> None:
    """Scan the checkpoints folder again on the next call (a run has just written a new checkpoint)."""
    _signatures.clear()
    _insides.clear()
    _scan.clear()
    _pairs.clear()
    cache.forget_stamps()


def _loaded(path: str) -> Checkpoint | None:
    """The sidebar's checkpoint, or None when there is none or it cannot load (the page itself says why)."""
    if not path or not inside_root(path):
        return None
    try:
        return cache.checkpoint(path)
    except CheckpointError:
        return None


def examples_for(path: str) -> list[str]:
    """The sidebar's examples: the coreference pairs, then the held-out everyday sentences the model translates
    well and the held-out real sentences whose cross-attention reorders, that the checkpoint's card names (both
    found by computation: transformer/inspection/everyday_examples.py and reorder.py)."""
    ckpt = _loaded(path)
    if ckpt is None:
        return EXAMPLES
    out = list(EXAMPLES)
    for s in everyday_examples.card_examples(ckpt.card) + card_examples(ckpt.card):
        if s not in out:
            out.append(s)
    return out


def everyday_for(path: str) -> set[str]:
    """The everyday examples of the checkpoint's card (marked apart in the sidebar)."""
    ckpt = _loaded(path)
    return set() if ckpt is None else set(everyday_examples.card_examples(ckpt.card)) - set(EXAMPLES)


def _example_label(tr: Translator, text: str, everyday: set[str]) -> str:
    if text in EXAMPLES:
        return text
    return tr("conf.everyday_example", text=text) if text in everyday else tr("sidebar.reorder_example", text=text)


def beam_help(tr: Translator, path: str) -> str:
    """The beam slider's help: the length penalty α this checkpoint's beam search uses, and where it comes from."""
    ckpt = _loaded(path)
    alpha = PAPER_ALPHA if ckpt is None else ckpt.alpha
    why = tr("sidebar.beam_alpha_card" if ckpt is not None and DECODING in ckpt.card else "sidebar.beam_alpha_paper")
    return tr("sidebar.beam_help", alpha=f"{alpha:g}", why=why)


def _use_example() -> None:
    st.session_state["text"] = st.session_state["example"]


def _apply_share_link(choices: dict[str, str]) -> list[str]:
    """Set the session from the URL's parameters (first run of a session); returns the names refused.

    A head is checked against the linked checkpoint's shape; a linked head opens the explorer's
    all-heads tab on it.
    """
    ss, qp, refused = st.session_state, st.query_params, []

    def take(name: str, key: str, parse) -> None:
        if name in qp:
            value = parse(qp[name])
            if value is None:
                refused.append(name)
            else:
                ss[key] = value

    take("lang", "lang", lambda v: v if v in LANGUAGES else None)
    take("ckpt", "checkpoint", lambda v: v if v in choices else None)
    take("text", "text", lambda v: v[:MAX_TEXT])
    take("beam", "beam", lambda v: int(v) if v.isdigit() and int(v) in BEAMS else None)
    take("kind", f"{PICK}_kind", lambda v: AttentionKind(v) if v in {k.value for k in AttentionKind} else None)
    if "text" in qp:
        ss["example"] = ss["text"] if ss["text"] in EXAMPLES else EXAMPLES[0]
    kind = ss.get(f"{PICK}_kind")
    if not (isinstance(kind, AttentionKind) and choices):
        return refused + [name for name in ("layer", "head") if name in qp]  # without a kind they name no head
    path = choices.get(ss.get("checkpoint")) or next(iter(choices.values()))
    try:
        ckpt = cache.checkpoint(path)
    except CheckpointError:
        return refused
    head, bad = linked_head(qp, ckpt, kind)
    set_head(PICK, head, path)
    open_tab("explorer_tab", "overview")  # a linked head opens the all-heads view on it
    return refused + bad


def linked_head(qp, ckpt: Checkpoint, kind: AttentionKind) -> tuple[HeadId, list[str]]:
    """The head a link's "layer" and "head" name in this checkpoint, and the names refused (a part that is
    missing, not a number or not in the model is the picker's default)."""
    default = default_head(ckpt, kind)
    parts = {"layer": default.layer, "head": default.head}
    refused = []
    for name, limit in (("layer", ckpt.config.n_layers(kind)), ("head", ckpt.config.n_heads)):
        if name in qp:
            value = qp[name]
            if value.isdigit() and int(value) < limit:
                parts[name] = int(value)
            else:
                refused.append(name)
    return HeadId(kind, parts["layer"], parts["head"]), refused


def setup() -> Translator:
    """Defaults before any widget exists; the share link on a session's first run; keys kept across pages."""
    ss = st.session_state
    for key in PERSISTENT:  # a widget's value is dropped when a page without it runs; keep these
        if key in ss:
            ss[key] = ss[key]
    choices = checkpoint_choices()
    if "_started" not in ss:
        ss["_started"] = True
        ss["_refused_params"] = _apply_share_link(choices)
    ss.setdefault("lang", DEFAULT_LANGUAGE)
    ss.setdefault("text", EXAMPLES[0])
    ss.setdefault("example", EXAMPLES[0])
    ss.setdefault("beam", 1)
    if choices and ss.get("checkpoint") not in choices:  # first visit, or the folder has gone
        if ss.get("checkpoint") is not None:
            ss["_missing_checkpoint"] = ss["checkpoint"]
        ss["checkpoint"] = next(iter(choices))
    return translator()


def sidebar(tr: Translator) -> None:
    ss = st.session_state
    with st.sidebar:
        st.selectbox(tr("sidebar.language"), list(LANGUAGES), format_func=LANGUAGES.get, key="lang")
        st.header(tr("sidebar.header"))
        choices = checkpoint_choices()
        if choices:
            pairs = checkpoint_pairs()
            st.selectbox(
                tr("sidebar.checkpoint"),
                list(choices),
                key="checkpoint",
                help=tr("sidebar.checkpoint_help"),
                format_func=lambda name: tr("zh.pair", name=name, pair=pairs[name]) if name in pairs else name,
            )
        else:  # the pages that need a model say so; the training page still works
            st.error(tr("sidebar.no_checkpoint", root=str(checkpoints_root())))
        path = choices.get(ss.get("checkpoint"), "")
        examples, everyday = examples_for(path), everyday_for(path)
        ensure_choice("example", examples, ss["text"] if ss.get("text") in examples else examples[0])
        st.selectbox(
            tr("sidebar.examples"),
            examples,
            key="example",
            on_change=_use_example,
            format_func=lambda s: _example_label(tr, s, everyday),
            help=(tr("sidebar.examples_help") + (" " + tr("conf.everyday_examples_help") if everyday else ""))
            if len(examples) > len(EXAMPLES)
            else None,
        )
        st.text_area(tr("sidebar.sentence"), key="text", height=110)
        st.slider(tr("sidebar.beam"), BEAMS.start, BEAMS.stop - 1, key="beam", help=beam_help(tr, path))
        refused = refused_links()
        if refused:
            st.warning(tr("sidebar.outside_links"))
            st.text("\n".join(refused))
        if ss.get("_refused_params"):
            st.warning(tr("sidebar.bad_params", names=", ".join(ss["_refused_params"])))
        if ss.get("_missing_checkpoint"):
            st.warning(tr("sidebar.missing_checkpoint"))
            st.text(str(ss.pop("_missing_checkpoint")))


def share_link() -> None:
    """Write the session's view into the URL, so the address bar is a link that opens the same view."""
    ss, qp = st.session_state, st.query_params
    kind = ss.get(f"{PICK}_kind")
    wanted = {
        "lang": ss.get("lang"),
        "ckpt": ss.get("checkpoint"),
        "beam": ss.get("beam"),
        "text": ss.get("text") if len(str(ss.get("text", ""))) <= MAX_SHARED_TEXT else None,
        "kind": kind.value if isinstance(kind, AttentionKind) else None,
        "layer": ss.get(f"{PICK}_layer"),
        "head": ss.get(f"{PICK}_head"),
    }
    for name, value in wanted.items():
        if value is None:
            if name in qp:
                del qp[name]
        elif qp.get(name) != str(value):
            qp[name] = str(value)


def follow_link(pages: dict) -> None:
    """A button asked to open another page (e.g. the head lab's "open in the explorer"): go there now."""
    target = st.session_state.pop("_goto", None)
    if target in pages:
        st.switch_page(pages[target])


@dataclass(frozen=True)
class Subject:
    """What a page works on: a checkpoint and a sentence, as chosen in the sidebar."""

    label: str
    path: str
    text: str
    beam: int


def subject() -> Subject:
    """The sidebar's checkpoint and sentence; without any checkpoint the page stops with a message."""
    choices = checkpoint_choices()
    if not choices:
        st.error(translator()("sidebar.no_checkpoint", root=str(checkpoints_root())))
        st.stop()
    ss = st.session_state
    label = ss.get("checkpoint")
    if label not in choices:
        label = next(iter(choices))
    return Subject(label, choices[label], str(ss.get("text", ""))[:MAX_TEXT], int(ss.get("beam", 1)))


def load(subj: Subject, tr: Translator) -> Checkpoint:
    """The subject's checkpoint; a checkpoint that fails validation stops the page with the loader's message."""
    if not inside_root(subj.path):
        st.error(tr("common.outside_root"))
        st.stop()
    try:
        if cache.loaded(subj.path):  # no spinner: its timer thread cost every run a thread start
            return cache.checkpoint(subj.path)
        with st.spinner(tr("common.loading")):
            return cache.checkpoint(subj.path)
    except CheckpointError as exc:
        st.error(tr("common.bad_checkpoint"))
        st.text(str(exc))
        st.stop()


def open_page(title_key: str) -> tuple[Translator, Subject, Checkpoint]:
    """The start of every page that works on the sidebar's checkpoint: its title, the subject, the model."""
    tr = translator()
    subj = subject()
    ckpt = load(subj, tr)
    st.title(tr(title_key))
    return tr, subj, ckpt
