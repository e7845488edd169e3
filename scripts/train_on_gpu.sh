#!/usr/bin/env bash
# Train several presets at once on one GPU machine (the device tool's H200), score the French candidates on
# the everyday dev campaign, and pack what comes back.
#
#   bash scripts/train_on_gpu.sh OUTDIR PACKDIR PRESET...      e.g. /tmp/ck "$OUT" en-fr en-fr-scratch en-zh
#
# Each preset trains in its own process (the trainer picks cuda by itself) into OUTDIR/PRESET, logging to
# OUTDIR/PRESET.log; a run stopped part-way resumes from its last/ when started again. The final weights are
# rounded to float16 (load_checkpoint reads them back into float32; every figure in a card is measured on the
# rounded weights). Of the presets whose name starts with en-fr, only the one with the best greedy chrF on
# the everyday dev campaign (scripts/evaluate_everyday.py) is packed, with every log and score, into
# PACKDIR/pack.tar.NN parts of 15 MiB (the device tool brings back at most 8 files of 16 MiB, 64 MiB in all).
# Rejoin here with: cat pack.tar.* | tar x -C DIR
# A dry run on a CPU: TRAIN_ARGS="--steps 2 --batch-tokens 1000 --no-evaluate" EVAL_ARGS="--limit 4" bash ...
set -uo pipefail
cd "$(dirname "$0")/.."
out=$1; pack=$2; shift 2
mkdir -p "$out" "$pack"
export PYTHONUNBUFFERED=1
for p in "$@"; do
  probe=""; case $p in en-fr*) probe="--probe" ;; esac  # the coreference probe at every snapshot
  (python3 -m transformer train --preset "$p" --out "$out/$p" --quiet $probe ${TRAIN_ARGS:-} >"$out/$p.log" 2>&1; echo "rc=$?" >>"$out/$p.log") &
done
wait
best=""; best_chrf=-1
for p in "$@"; do
  tail -n 2 "$out/$p.log"
  python3 - "$out/$p/model.safetensors" <<'PY'
import sys
import torch
from safetensors.torch import load_file, save_file
path = sys.argv[1]
state = load_file(path)
save_file({k: v.to(torch.float16) if v.is_floating_point() else v for k, v in state.items()}, path)
PY
done
for p in "$@"; do
  case $p in en-fr*) python3 scripts/evaluate_everyday.py "$out/$p" --splits dev ${EVAL_ARGS:-} >"$out/$p.dev.txt" 2>&1 & ;; esac
done
wait
keep=()
for p in "$@"; do
  case $p in
    en-fr*)
      c=$(python3 -c "import json,sys;print(json.loads(open(sys.argv[1]).read().split('everyday_dev ',1)[1].splitlines()[0])['chrf'])" "$out/$p.dev.txt" 2>/dev/null || echo -2)
      echo "$p everyday dev chrF $c"
      if python3 -c "import sys;sys.exit(not float(sys.argv[1])>float(sys.argv[2]))" "$c" "$best_chrf"; then best=$p; best_chrf=$c; fi ;;
    *) keep+=("$p") ;;
  esac
done
[ -n "$best" ] && keep=("$best" "${keep[@]}")
echo "packing: ${keep[*]}"
(cd "$out" && tar cf - --exclude=last --exclude=.train.lock ./*.log ./*.txt "${keep[@]}") | split -b 15M -d - "$pack/pack.tar."
ls -la "$pack"
