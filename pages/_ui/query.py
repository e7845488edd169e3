"""The model's inputs and the head-and-query picker shared by the lessons and the head lab (no page imports
another page)."""

from __future__ import annotations

from transformer.analysis import Analysis
from transformer.attention import AttentionKind
from transformer.checkpoint import Checkpoint

from .i18n import Translator
from .probe import default_kind
from .session import PICK, Subject
from .widgets import head_picker, token_picker

KINDS = list(AttentionKind)


def model_inputs(ckpt: Checkpoint, a: Analysis) -> tuple[list[int], list[int]]:
    """The encoder's input and the decoder's (teacher-forced on the model's own translation), as ids."""
    return list(a.source_ids), list(a.decoder_ids)


def query_rows(a: Analysis, kind: AttentionKind) -> tuple[list[str], int]:
    """Labels of the query rows of a kind, and the default row (the pronoun's)."""
    if kind is AttentionKind.ENCODER:
        return a.source_pieces, a.pronoun_source or 0
    return a.output_pieces, a.pronoun_step or 0


def pick_head_and_query(key: str, subj: Subject, ckpt: Checkpoint, a: Analysis, tr: Translator):
    """The shared head picker, then a query token of that kind (the pronoun's row by default)."""
    choice = head_picker(PICK, ckpt, tr, kinds=KINDS, default_kind=default_kind(ckpt))
    rows, default = query_rows(a, choice.kind)
    return choice, token_picker(key, rows, default, (subj.path, a.text, choice.kind), tr("steps.query"))
