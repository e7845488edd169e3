#!/usr/bin/env bash
# Train several presets at once on one GPU machine (the device tool's H200), then pack what comes back.
#
#   bash scripts/train_on_gpu.sh OUTDIR PACKDIR PRESET...      e.g. /tmp/ck "$OUT" en-fr en-fr-scratch en-zh
#
# Each preset trains in its own process (the trainer picks cuda by itself) into OUTDIR/PRESET, logging to
# OUTDIR/PRESET.log. The final weights are rounded to float16 (load_checkpoint reads them back into float32;
# the figures in each card are measured on the rounded weights) and each checkpoint, without last/, is packed
# into PACKDIR/PRESET.tar.NN parts of 15 MiB (the device tool brings back files of at most 16 MiB).
# Rejoin here with: cat PRESET.tar.* | tar x -C checkpoints
set -uo pipefail
cd "$(dirname "$0")/.."
out=$1; pack=$2; shift 2
mkdir -p "$out" "$pack"
export PYTHONUNBUFFERED=1
for p in "$@"; do
  (python3 -m transformer train --preset "$p" --out "$out/$p" --quiet >"$out/$p.log" 2>&1; echo "rc=$?" >>"$out/$p.log") &
done
wait
for p in "$@"; do
  tail -n 3 "$out/$p.log"
  python3 - "$out/$p/model.safetensors" <<'PY'
import sys
from safetensors.torch import load_file, save_file
import torch
path = sys.argv[1]
state = load_file(path)
save_file({k: v.to(torch.float16) if v.is_floating_point() else v for k, v in state.items()}, path)
PY
  (cd "$out" && tar cf - --exclude=last --exclude=.train.lock "$p") | split -b 15M -d - "$pack/$p.tar."
  cp "$out/$p.log" "$pack/" 2>/dev/null || true
done
ls -la "$pack"
