"""The corpus: a seeded English→French Winograd-style generator (see :mod:`.generator`) and corpus files.

- :mod:`.lexicon`: the words (nouns, adjectives, connectives), pure data.
- :mod:`.french`: French grammar (articles, elision, contraction, agreement) and the one pronoun detector.
- :mod:`.generator`: templates, :class:`Example`, the plain sentences and the test split (:func:`generate_test`).
- :mod:`.coref`: the training corpus by split, plain sentences and typed variants mixed (:func:`generate`).
- :mod:`.tsv`: source<TAB>target files, one line rule for the trainer and the app's upload check.
"""

from __future__ import annotations

from .coref import generate
from .french import (
    FRENCH_PRONOUNS,
    PRONOUN_RE,
    article,
    capital,
    elide_que,
    fr_pronoun,
    french_pronoun,
    pronoun_piece,
    pronoun_span,
    with_a,
)
from .generator import (
    SEED_SENTENCES,
    SLOTS,
    TEMPLATES,
    TRIPLES,
    CorpusSpec,
    Example,
    en_np,
    generate_test,
    held_out_pairs,
    make_pronoun_example,
    make_triple_example,
    noun_pairs,
    seed_examples,
)
from .lexicon import ADJ_BY_EN, ADJECTIVES, CONNECTIVES, NOUN_BY_EN, NOUNS, Adjective, Noun
from .tsv import CorpusFormatError, decode_tsv, parse_tsv, read_tsv, write_tsv

__all__ = [
    "ADJECTIVES",
    "ADJ_BY_EN",
    "CONNECTIVES",
    "FRENCH_PRONOUNS",
    "NOUNS",
    "NOUN_BY_EN",
    "PRONOUN_RE",
    "SEED_SENTENCES",
    "SLOTS",
    "TEMPLATES",
    "TRIPLES",
    "Adjective",
    "CorpusFormatError",
    "CorpusSpec",
    "Example",
    "Noun",
    "article",
    "capital",
    "decode_tsv",
    "elide_que",
    "en_np",
    "fr_pronoun",
    "french_pronoun",
    "generate",
    "generate_test",
    "held_out_pairs",
    "make_pronoun_example",
    "make_triple_example",
    "noun_pairs",
    "parse_tsv",
    "pronoun_piece",
    "pronoun_span",
    "read_tsv",
    "seed_examples",
    "with_a",
    "write_tsv",
]
