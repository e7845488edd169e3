#!/usr/bin/env bash
# The README's test command: install what the tests need, then run them.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -r requirements-test.txt
# The browser tests drive Debian's chromium (never a downloaded browser); the Chinese screenshots need a CJK font.
missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
fc-list 2>/dev/null | grep -qi "wenquanyi" || missing="$missing fonts-wqy-microhei"
# The head lab's syntactic heads: Link Grammar, an English parser that runs offline (its Python binding is Debian's)
[ -d /usr/lib/python3/dist-packages/linkgrammar ] || missing="$missing python3-link-grammar link-grammar-dictionaries-en"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q && $SUDO apt-get install -y -q $missing
fi
python3 -m ruff check .
python3 -m pytest -q "$@"
