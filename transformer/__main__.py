"""Command line: python -m transformer {info,translate,train,evaluate} --help."""

from .cli import main

raise SystemExit(main())
