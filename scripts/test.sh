#!/usr/bin/env bash
# The README's test command: install what the tests need, then run them.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -r requirements-test.txt
if ! command -v chromium >/dev/null 2>&1; then
  # The browser test drives Debian's chromium (never a downloaded browser).
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q && $SUDO apt-get install -y -q chromium
fi
python3 -m ruff check .
python3 -m pytest -q "$@"
