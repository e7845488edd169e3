"""The coreference corpus by split: the generated sentences (:mod:`.generator`) and their typed variants
(:mod:`.variants`), mixed as a CorpusSpec asks."""

from __future__ import annotations

from .generator import CorpusSpec, Example, generate_plain, generate_test
from .variants import generate_variants


def generate(spec: CorpusSpec = CorpusSpec()) -> tuple[list[Example], list[Example]]:
    """(train, test): disjoint by noun pair; the test split holds every animal+street sentence.

    With spec.variant_share > 0 that share of the training sentences are typed variants (clause first,
    commas, "did not", other adverbs, lower case, new nouns and verbs; :mod:`.variants`)."""
    n_variants = round(spec.n_examples * spec.variant_share)
    train = generate_plain(spec, spec.n_examples - n_variants)
    if n_variants:
        train += generate_variants(spec, n_variants)
    return train, generate_test(spec)
