"""Pure numpy/torch helpers that turn a model's numbers into what a page shows (no UI here)."""
