"""Pure numpy/torch helpers that turn a model's numbers into what a page shows (no UI here)."""

from __future__ import annotations

import functools

from ..decoding import model_device, on_device


def on_model_device(fn):
    """fn(model, ...) with torch's default device set to the model's, so that every tensor it builds lives
    beside the model's weights (the app's models are on the CPU; a trainer's may be on a GPU)."""

    @functools.wraps(fn)
    def run(model, *args, **kwargs):
        with on_device(model_device(model)):
            return fn(model, *args, **kwargs)

    return run
