"""The ``python -m transformer`` command line."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from .attention import AttentionKind
from .checkpoint import CheckpointError, load_checkpoint
from .config import POSITIONAL_KINDS
from .corpus import CorpusFormatError, CorpusSpec, generate
from .layout import DEFAULT_CHECKPOINT, METRICS_FILE, SHIPPED_ROOT
from .marian import MarianError
from .training.lock import RunLock, TrainingError
from .training.presets import shipped_folder


class CLIError(Exception):
    pass


def _load(path: str | None):
    target = Path(path) if path else DEFAULT_CHECKPOINT
    if path is None and not target.exists():
        raise CLIError(
            f"no checkpoint is installed at {target}; train one with "
            "'python -m transformer train --preset coref' or pass --checkpoint DIR"
        )
    return load_checkpoint(target)


def cmd_info(args: argparse.Namespace) -> int:
    ckpt = _load(args.checkpoint)
    print(
        json.dumps(
            {
                "checkpoint": str(ckpt.path),
                "config": ckpt.config.to_dict(),
                "d_k": ckpt.config.d_k,
                "parameters": ckpt.model.num_parameters(),
                "card": ckpt.card,
            },
            indent=2,
            ensure_ascii=False,
        )
    )
    return 0


def translate_record(ckpt, text: str, beam: int) -> dict[str, Any]:
    """Translate one sentence: the record that --json prints."""
    from .analysis import analyse

    a = analyse(ckpt.model, ckpt.tokenizer, text, beam, alpha=ckpt.alpha)
    return {
        "source_pieces": a.source_pieces,
        "target_pieces": a.target_pieces,
        "output_pieces": a.output_pieces,
        "translation": a.translation,
        "attention": {kind.value: a.maps(kind).round(5).tolist() for kind in AttentionKind},
    }


def cmd_translate(args: argparse.Namespace) -> int:
    ckpt = _load(args.checkpoint)
    lines = args.text if args.text else [line.rstrip("\n") for line in sys.stdin]
    for text in lines:
        if not text.strip():
            print("(empty line skipped)", file=sys.stderr)
            continue
        rec = translate_record(ckpt, text, args.beam)
        if args.json:
            print(json.dumps(rec, ensure_ascii=False))
        else:
            print(rec["translation"])
    return 0


MODEL_ARGS = {  # --flag: TransformerConfig field
    "encoder_layers": "n_encoder_layers",
    "decoder_layers": "n_decoder_layers",
    "d_model": "d_model",
    "heads": "n_heads",
    "d_ff": "d_ff",
    "dropout": "dropout",
    "positional": "positional",
}


JOB_LOCK_WAIT_S = 5.0


@contextlib.contextmanager
def job_lock(path: str | None):
    """Hold an exclusive lock for the whole run: one training job per lock file (the app's, per server)."""
    if path is None:
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    busy = "another training job is running on this server"
    # a few seconds of retries: the app's probe never takes the lock, but a job started right after
    # another one ended may find it still being released
    with RunLock(Path(path).parent, Path(path).name, busy=busy, wait_s=JOB_LOCK_WAIT_S):
        yield


def cmd_train(args: argparse.Namespace, argv: list[str] | None = None) -> int:
    from .training import PRESETS, JsonlLogger, ProbeAtSnapshots, TqdmCallback, Trainer

    cfg = PRESETS[args.preset]
    changes: dict[str, Any] = {}
    names = ("steps", "batch_tokens", "lr_factor", "warmup_steps", "label_smoothing", "clip_norm", "seed")
    for name in (*names, "average_every", "average_last"):
        value = getattr(args, name)
        if value is not None:
            changes[name] = value
    overrides = {field: getattr(args, arg) for arg, field in MODEL_ARGS.items() if getattr(args, arg) is not None}
    if overrides:
        changes["model_overrides"] = {**cfg.model_overrides, **overrides}
    if args.snapshots is not None:
        changes["snapshot_steps"] = tuple(int(s) for s in args.snapshots.split(",") if s.strip())
    if args.data:
        changes["data_file"] = args.data
    cfg = dataclasses.replace(cfg, **changes)
    out = Path(args.out or SHIPPED_ROOT / shipped_folder(args.preset))
    callbacks = [JsonlLogger(out / METRICS_FILE)]
    if args.probe:
        callbacks.append(ProbeAtSnapshots(out / METRICS_FILE))
    if not args.quiet:
        callbacks.append(TqdmCallback())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # stop cleanly after this step, keeping what was saved
    trainer = Trainer(cfg, out, callbacks, overwrite=args.overwrite, stop_event=stop)
    if cfg.mixed_precision and not trainer.bfloat16 and trainer.is_main:
        print(
            "note: bfloat16 autocast is off: this machine emulates bfloat16 (no AVX512-BF16 or AMX, no GPU "
            "that has it), where a step costs many float32 ones; the run trains in float32",
            file=sys.stderr,
        )
    if trainer.distributed:
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    try:
        with job_lock(args.job_lock if trainer.is_main else None):  # one holder per run, not per rank
            result = trainer.train()
            evaluated = trainer.is_main and not result["stopped"] and not args.no_evaluate and cfg.data_file is None
            if evaluated:
                from .checkpoint import update_card
                from .evaluate import evaluate

                command = "python -m transformer " + " ".join(sys.argv[1:] if argv is None else argv)
                test = generate(cfg.corpus)[1]
                if test:
                    ckpt = load_checkpoint(out)
                    report = evaluate(ckpt.model, ckpt.tokenizer, test)
                    update_card(out, {"command": command, "evaluation": report})
                    result["pronoun_accuracy"] = report["pronoun_accuracy"]
                else:  # no generated sentences (en-zh): its own script scores it (scripts/evaluate_zh.py)
                    update_card(out, {"command": command})
    finally:
        if trainer.distributed:
            import torch.distributed as dist

            dist.destroy_process_group()
    if trainer.is_main:
        print(json.dumps({"out": str(out), **result}))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from .evaluate import PROBE_QUERIES, best_heads, evaluate

    ckpt = _load(args.checkpoint)
    report = evaluate(ckpt.model, ckpt.tokenizer, generate(CorpusSpec.from_card(ckpt.card))[1])
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    print(f"test sentences    {report['n_sentences']}")
    print(f"pronoun accuracy  {report['pronoun_accuracy']:.4f}")
    print(f"exact match       {report['exact_match']:.4f}")
    print(f"BLEU / chrF       {report['bleu']:.2f} / {report['chrf']:.2f}")
    for s in report["seed_sentences"]:
        print(f"{'ok ' if s['correct'] else 'BAD'} {s['source']} -> {s['translation']}")
    print("best heads (share of test sentences whose row prefers the antecedent):")
    for q in PROBE_QUERIES:
        kind, query = q.kind.value, q.query.value
        top = best_heads([h for h in report["heads"] if h["kind"] == kind and h["query"] == query], 3)
        print(f"  {kind:7s} {query:7s} " + "  ".join(f"L{h['layer']}H{h['head']}={h['score']:.3f}" for h in top))
    return 0


def _pickle_consent(args: argparse.Namespace) -> bool:
    """Whether a folder holding only pytorch_model.bin may be read (through torch.load(weights_only=True))."""
    if args.pickle != "ask":
        return args.pickle == "yes"
    if not sys.stdin.isatty():  # nobody to ask: no is the answer (a script says --pickle yes if it means it)
        print("note: no terminal to ask whether to read pytorch_model.bin; pass --pickle yes to allow it",
              file=sys.stderr)
        return False
    answer = input("The folder may hold only pytorch_model.bin (a pickle). Read it through "
                   "torch.load(weights_only=True), which loads tensors and no code? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def cmd_import_marian(args: argparse.Namespace) -> int:
    from .marian import PICKLE, import_marian, inspect_folder

    src = Path(args.src)
    allow = True
    if not (src / "model.safetensors").exists() and (src / PICKLE).exists():
        allow = _pickle_consent(args)
    folder = inspect_folder(src, allow_pickle=allow, target_lang=args.target_lang)  # every check, nothing read
    for note in folder.notes:
        print(f"note: {note}", file=sys.stderr)
    out = import_marian(src, args.out, overwrite=args.overwrite, allow_pickle=allow, inspected=folder)
    cfg = folder.config
    print(
        json.dumps(
            {
                "out": str(out),
                "layers": [cfg.n_encoder_layers, cfg.n_decoder_layers],
                "d_model": cfg.d_model,
                "n_heads": cfg.n_heads,
                "vocab_size": cfg.vocab_size,
                "tgt_vocab_size": cfg.tgt_vocab_size,  # None: one vocabulary shared by both sides
                "licence": folder.card["licence"],
                "target_lang": folder.card.get("target_lang"),
            },
            ensure_ascii=False,
        )
    )
    return 0


def cmd_export_marian(args: argparse.Namespace) -> int:
    from .marian import export_marian

    out = export_marian(args.checkpoint, args.out, overwrite=args.overwrite)
    print(json.dumps({"out": str(out)}))
    return 0


def cmd_average(args: argparse.Namespace) -> int:
    from .training.average import average_checkpoints

    keep = args.keep_other_files
    out = average_checkpoints(args.checkpoints, args.out, overwrite=args.overwrite, keep_other_files=keep)
    print(json.dumps({"out": str(out), "averaged": [str(p) for p in args.checkpoints]}))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m transformer", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="config, parameter count and card of a checkpoint")
    info.add_argument("--checkpoint", help="checkpoint directory (default: the shipped one)")
    info.set_defaults(func=cmd_info)

    tr = sub.add_parser("translate", help="translate sentences (arguments, or one per line on stdin)")
    tr.add_argument("text", nargs="*")
    tr.add_argument("--checkpoint")
    tr.add_argument(
        "--beam", type=int, default=1, help="beam size (1 = greedy; above, with the card's length penalty α)"
    )
    tr.add_argument("--json", action="store_true", help="one JSON object per line, with attention maps")
    tr.set_defaults(func=cmd_translate)

    from .training.presets import PRESETS

    t = sub.add_parser("train", help="train a model (also under torchrun for DistributedDataParallel)")
    t.add_argument("--preset", choices=sorted(PRESETS), default="coref")
    t.add_argument("--out", help="checkpoint directory to write")
    t.add_argument("--data", help="your own corpus: a UTF-8 file of source<TAB>target lines")
    t.add_argument("--overwrite", action="store_true", help="replace an existing checkpoint at --out")
    t.add_argument("--steps", type=int)
    t.add_argument("--batch-tokens", type=int)
    t.add_argument("--lr-factor", type=float)
    t.add_argument("--warmup-steps", type=int)
    t.add_argument("--label-smoothing", type=float)
    t.add_argument("--dropout", type=float)
    t.add_argument("--encoder-layers", type=int, help="N of the encoder stack")
    t.add_argument("--decoder-layers", type=int, help="N of the decoder stack")
    t.add_argument("--d-model", type=int)
    t.add_argument("--heads", type=int, help="h, the number of attention heads")
    t.add_argument("--d-ff", type=int)
    t.add_argument("--positional", choices=POSITIONAL_KINDS)
    t.add_argument("--probe", action="store_true", help="log the coreference probe at every snapshot")
    t.add_argument("--job-lock", help="a lock file held for the whole run (one job per lock)")
    t.add_argument("--clip-norm", type=float)
    t.add_argument("--seed", type=int)
    t.add_argument("--snapshots", help="comma-separated steps at which to keep a snapshot, e.g. 0,100,300")
    t.add_argument(
        "--average-every", type=int, help="keep the weights every N steps and write averaged/ at the end (§6.1)"
    )
    t.add_argument("--average-last", type=int, help="how many checkpoints averaged/ averages, the final one included")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument("--no-evaluate", action="store_true", help="skip the evaluation written into card.json")
    t.set_defaults(func=cmd_train)

    ev = sub.add_parser("evaluate", help="score a checkpoint on the held-out test split")
    ev.add_argument("--checkpoint")
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=cmd_evaluate)

    im = sub.add_parser("import-marian", help="import an opus-mt (Marian) Hugging Face folder as a checkpoint")
    im.add_argument("src", help="a save_pretrained folder or a Hugging Face cache snapshot folder")
    im.add_argument("--out", required=True, help="the checkpoint directory to write, e.g. checkpoints/opus-mt-en-fr")
    im.add_argument("--overwrite", action="store_true", help="replace an existing checkpoint at --out")
    im.add_argument(
        "--pickle",
        choices=["ask", "yes", "no"],
        default="ask",
        help="a folder with only pytorch_model.bin: read it through torch.load(weights_only=True)? "
        "(ask: on a terminal; yes without one)",
    )
    im.add_argument("--target-lang", help="the target language when the folder does not say it (e.g. fr)")
    im.set_defaults(func=cmd_import_marian)

    ex = sub.add_parser("export-marian", help="write a checkpoint as a Hugging Face Marian folder")
    ex.add_argument("checkpoint", help="a checkpoint directory")
    ex.add_argument("--out", required=True, help="the folder to write")
    ex.add_argument("--overwrite", action="store_true", help="replace an existing folder at --out")
    ex.set_defaults(func=cmd_export_marian)

    av = sub.add_parser(
        "average", help="average the weights of one model's checkpoints taken at different steps (the paper, §6.1)"
    )
    av.add_argument("checkpoints", nargs="+", help="two or more checkpoint directories, oldest first")
    av.add_argument("--out", required=True, help="the checkpoint directory to write (the last input's card, config "
                    "and tokenizer; the card records what was averaged)")
    av.add_argument("--overwrite", action="store_true", help="replace an existing checkpoint at --out")
    av.add_argument("--keep-other-files", action="store_true",
                    help="keep what --out holds besides the checkpoint's files (README.md, snapshots/, metrics)")
    av.set_defaults(func=cmd_average)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.func is cmd_train:
            return cmd_train(args, argv)
        return args.func(args)
    except (CLIError, CheckpointError, CorpusFormatError, TrainingError, MarianError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head, say: stop quietly
        sys.stderr.close()
        return 0
