"""Command line: python -m transformer {info,translate,train,evaluate} --help."""

import sys

from .cli import main, restart_keeping_freed_memory

restart_keeping_freed_memory(sys.argv[1:])
raise SystemExit(main())
