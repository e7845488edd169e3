#!/usr/bin/env bash
# Train several presets at once on one GPU machine (the device tool's H200), score each candidate on its dev
# text, and pack what comes back.
#
#   bash scripts/train_on_gpu.sh OUTDIR PACKDIR PRESET...      e.g. /tmp/ck "$OUT" en-fr en-fr-scratch en-zh
#
# Each preset trains in its own process (the trainer picks cuda by itself) into OUTDIR/PRESET, logging to
# OUTDIR/PRESET.log; a run stopped part-way resumes from its last/ when started again. The final weights are
# rounded to float16 (load_checkpoint reads them back into float32; every figure in a card is measured on the
# rounded weights). Each candidate is scored greedily on its dev text (en-fr*: chrF on the everyday dev campaign,
# scripts/evaluate_everyday.py; en-zh*: BLEU on the dev pages, scripts/evaluate_zh.py --dev). Every en-fr* run
# and the best en-zh* run are packed, with every log and score, into PACKDIR/pack.tar.NN parts of 15 MiB (the
# device tool brings back at most 8 files of 16 MiB, 64 MiB in all).
# Rejoin here with: cat pack.tar.* | tar x -C DIR
# A dry run on a CPU: TRAIN_ARGS="--steps 2 --batch-tokens 1000" EVAL_ARGS="--limit 4" bash ...
set -uo pipefail
cd "$(dirname "$0")/.."
out=$1; pack=$2; shift 2
mkdir -p "$out" "$pack"
export PYTHONUNBUFFERED=1
for p in "$@"; do
  probe=""; case $p in en-fr*) probe="--probe" ;; esac  # the coreference probe at every snapshot
  # a bound beside the preset's own time limit, so that scoring and packing always run inside the device's 10 minutes;
  # no evaluation by the trainer there: it reloads the checkpoint on the CPU, where the coreference test set took the
  # 4 December run past its 10 minutes (the cards' figures are measured back here: evaluate_real_coref.py and the rest)
  (timeout -k 10 "${TRAIN_TIMEOUT:-420}" python3 -m transformer train --preset "$p" --out "$out/$p" --quiet --no-evaluate $probe ${TRAIN_ARGS:-} \
    >"$out/$p.log" 2>&1; echo "rc=$?" >>"$out/$p.log") &
done
wait
for p in "$@"; do
  tail -n 2 "$out/$p.log"
  [ -f "$out/$p/model.safetensors" ] || continue  # stopped by the bound: nothing to round, score or pack
  python3 - "$out/$p/model.safetensors" <<'PY'
import sys
import torch
from safetensors.torch import load_file, save_file
path = sys.argv[1]
state = load_file(path)
save_file({k: v.to(torch.float16) if v.is_floating_point() else v for k, v in state.items()}, path)
PY
done
# each candidate's dev score: the everyday dev campaign's chrF (French), the dev pages' BLEU (Chinese)
for p in "$@"; do
  [ -f "$out/$p/model.safetensors" ] || continue
  case $p in
    en-fr*) timeout -k 10 120 python3 scripts/evaluate_everyday.py "$out/$p" --splits dev ${EVAL_ARGS:-} >"$out/$p.dev.txt" 2>&1 & ;;
    en-zh*) timeout -k 10 120 python3 scripts/evaluate_zh.py "$out/$p" --dev ${EVAL_ARGS:-} >"$out/$p.dev.txt" 2>&1 & ;;
  esac
done
wait
# every French candidate comes back (the default is chosen here, by its dev chrF and the coreference goals); of
# the Chinese ones, the best on the dev pages (two 9.6 M models would not fit beside them)
keep=(); best=""; best_score=-1
for p in "$@"; do
  case $p in
    en-fr*) key="everyday_dev" field="chrf" ;;
    en-zh*) key="zh_dev" field="bleu" ;;
    *) [ -f "$out/$p/model.safetensors" ] && keep+=("$p"); continue ;;
  esac
  [ -f "$out/$p/model.safetensors" ] || continue
  c=$(python3 -c "import json,sys;print(json.loads(open(sys.argv[1]).read().split(sys.argv[2]+' ',1)[1].splitlines()[0])[sys.argv[3]])" \
      "$out/$p.dev.txt" "$key" "$field" 2>/dev/null || echo -2)
  echo "$p $key $field $c"
  case $p in
    en-fr*) keep+=("$p") ;;
    en-zh*) if python3 -c "import sys;sys.exit(not float(sys.argv[1])>float(sys.argv[2]))" "$c" "$best_score"; then best=$p; best_score=$c; fi ;;
  esac
done
[ -n "$best" ] && keep+=("$best")
echo "packing: ${keep[*]}"
# never last/: its optimizer state would not fit in what the device tool brings back
(cd "$out" && tar cf - --exclude=last --exclude=.train.lock ./*.log ./*.txt "${keep[@]}") | split -b 15M -d - "$pack/pack.tar."
ls -la "$pack"
