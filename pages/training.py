"""Train a model in the browser: the project's own `python -m transformer train` in its own process."""

from __future__ import annotations

import json

import streamlit as st

from pages._ui import figures, roles
from pages._ui.folder import checkpoint_choices, refresh_choices
from pages._ui.i18n import Translator
from pages._ui.session import translator
from pages._ui.widgets import choice_radio, plot
from transformer import jobs
from transformer.config import POSITIONAL_KINDS
from transformer.corpus import CorpusFormatError
from transformer.evaluate import ProbeQuery
from transformer.layout import CARD_FILE, check_name, checkpoints_root
from transformer.training import PRESETS
from transformer.training.presets import shipped_folder

FORM_PRESETS = ("tiny", "coref")
FLAGS = (  # python -m transformer train flag, form field
    ("--preset", "tr_preset"),
    ("--steps", "tr_steps"),
    ("--lr-factor", "tr_lr_factor"),
    ("--seed", "tr_seed"),
    ("--encoder-layers", "tr_encoder_layers"),
    ("--decoder-layers", "tr_decoder_layers"),
    ("--d-model", "tr_d_model"),
    ("--heads", "tr_heads"),
    ("--d-ff", "tr_d_ff"),
    ("--positional", "tr_positional"),
)
D_MODELS = (16, 32, 64, 128, 256)
HEADS = (1, 2, 4, 8)


def preset_values(name: str) -> dict:
    """The form's fields as the preset sets them (model overrides on top of its model size)."""
    from transformer.config import PRESETS as MODEL_PRESETS

    cfg = PRESETS[name]
    model = {**MODEL_PRESETS[cfg.model_preset], **cfg.model_overrides}
    return {
        "tr_encoder_layers": model["n_encoder_layers"],
        "tr_decoder_layers": model["n_decoder_layers"],
        "tr_d_model": model["d_model"],
        "tr_heads": model["n_heads"],
        "tr_d_ff": model["d_ff"],
        "tr_positional": model.get("positional", "sinusoidal"),
        "tr_steps": cfg.steps,
        "tr_lr_factor": float(cfg.lr_factor),
        "tr_seed": cfg.seed,
    }


def _fill_from_preset() -> None:
    st.session_state.update(preset_values(st.session_state["tr_preset"]))


def expected_seconds(name: str, steps: int) -> tuple[float, dict] | None:
    """The preset's measured wall time on this machine, from the card of a checkpoint it trained, scaled to steps."""
    root = checkpoints_root()
    for folder in dict.fromkeys((name, shipped_folder(name))):
        card_path = root / folder / CARD_FILE
        try:
            card = json.loads(card_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        trained = card.get("train_config", {}).get("steps") or card.get("step")
        wall = card.get("wall_time_s")
        if isinstance(trained, int) and trained > 0 and isinstance(wall, (int, float)):
            return wall * steps / trained, {"folder": folder, "wall": wall, "steps": trained}
    return None


def snapshot_steps(steps: int) -> str:
    marks = sorted({0, steps // 10, steps // 4, steps // 2, 3 * steps // 4} - {steps})
    return ",".join(str(s) for s in marks)


def _stop() -> None:
    if not roles.may_operate():  # a button drawn before the role changed, or a crafted message
        st.session_state["_train_refused"] = True
        return
    jobs.stop(checkpoints_root())


def _delete() -> None:
    if not roles.may_operate():
        st.session_state["_train_refused"] = True
        return
    try:
        jobs.delete(checkpoints_root())
    except jobs.JobError as exc:
        st.session_state["_train_delete_failed"] = str(exc)
        return
    refresh_choices()


def _open_result() -> None:
    job = jobs.last_job(checkpoints_root())
    if job is not None:
        st.session_state["checkpoint"] = job.name


def job_panel(tr: Translator) -> None:
    """The last job's state, progress and curves, read from its files (the same for every session)."""
    status = jobs.status(checkpoints_root())
    if status is None:
        st.info(tr("train.no_job"))
        return
    job = status.job
    with st.container(key="job_state"):
        st.markdown(tr(f"train.state.{status.state.value}", name=job.name, step=status.step, total=status.total_steps))
    eta = "—" if status.eta_s is None else f"{status.eta_s:.0f} s"
    st.progress(status.progress, text=tr("train.progress", step=status.step, total=status.total_steps, eta=eta))
    operate = roles.may_operate()  # in lecture mode only the teacher changes jobs; students watch
    if status.state is jobs.JobState.RUNNING and operate:
        st.button(tr("train.stop"), on_click=_stop, key="train_stop", type="secondary")
    elif status.state is jobs.JobState.FINISHED:
        st.button(tr("train.open", name=job.name), on_click=_open_result, key="train_open")
    if status.state not in (jobs.JobState.RUNNING, jobs.JobState.STARTING) and operate:
        st.button(tr("train.delete", name=job.name), on_click=_delete, key="train_delete", help=tr("train.delete_help"))
    if st.session_state.pop("_train_refused", False):
        st.error(tr("train.teacher_only"))
    failed = st.session_state.pop("_train_delete_failed", None)
    if failed:
        st.error(tr("train.delete_failed"))
        st.text(failed)
    if status.state is jobs.JobState.FAILED:
        st.text(status.log_tail[-1500:])
    if status.metrics:
        x = [m["step"] for m in status.metrics]
        c1, c2, c3 = st.columns(3)
        for col, name, key in ((c1, "loss", "train_loss"), (c2, "accuracy", "train_accuracy"), (c3, "lr", "train_lr")):
            with col:
                fig = figures.line_chart(
                    {tr(f"train.{name}"): (x, [m.get(name, 0.0) for m in status.metrics])},
                    tr(f"train.{name}_title"),
                    x_title=tr("fig.step"),
                    height=260,
                )
                plot(fig, key, tr)
    if status.probes:
        labels = {
            ProbeQuery.ENCODER_PRONOUN.label(): tr("train.probe_encoder"),
            ProbeQuery.ENCODER_CUE.label(): tr("train.probe_cue"),
            ProbeQuery.CROSS_PRONOUN.label(): tr("train.probe_cross"),
        }
        series = {
            labels.get(k, k): ([p["step"] for p in status.probes], [p["probe"].get(k, 0.0) for p in status.probes])
            for k in status.probes[-1]["probe"]
        }
        plot(
            figures.line_chart(
                series,
                tr("train.probe_title"),
                x_title=tr("fig.step"),
                y_title=tr("train.probe_axis"),
                markers=True,
                y_range=(0, 1.02),
            ),
            "train_probe",
            tr,
        )
    if status.state is jobs.JobState.FINISHED and job.name not in checkpoint_choices():
        refresh_choices()  # the picker lists the new checkpoint now, not after the scan's cache expires
    seen = st.session_state.get("_job_seen")
    st.session_state["_job_seen"] = (job.name, status.state.value)
    running = jobs.JobState.RUNNING
    if seen is not None and seen[0] == job.name and seen[1] == running and status.state is not running:
        st.rerun(scope="app")  # the run ended: let the sidebar's picker show the new checkpoint


@st.fragment(run_every=1.0)
def _live(tr_lang: str) -> None:
    job_panel(Translator(tr_lang))


def form(tr: Translator, busy: bool) -> None:
    ss = st.session_state
    ss.setdefault("tr_preset", "tiny")
    if "tr_steps" not in ss:
        ss.update(preset_values(ss["tr_preset"]))
    st.selectbox(
        tr("train.preset"),
        FORM_PRESETS,
        key="tr_preset",
        on_change=_fill_from_preset,
        format_func=lambda p: tr(f"train.preset_{p}"),
    )
    with st.form("train_form", border=True):
        st.text_input(tr("train.name"), key="tr_name", help=tr("train.name_help"))
        c1, c2, c3 = st.columns(3)
        c1.number_input(tr("train.encoder_layers"), 1, 6, key="tr_encoder_layers")
        c2.number_input(tr("train.decoder_layers"), 1, 6, key="tr_decoder_layers")
        c3.selectbox(tr("train.d_model"), D_MODELS, key="tr_d_model")
        c1.selectbox(tr("train.heads"), HEADS, key="tr_heads")
        c2.number_input(tr("train.d_ff"), 8, 2048, step=8, key="tr_d_ff")
        c3.selectbox(tr("train.positional"), POSITIONAL_KINDS, key="tr_positional")
        c1.number_input(tr("train.steps"), 1, 20_000, key="tr_steps")
        c2.number_input(tr("train.lr_factor"), 0.05, 5.0, step=0.05, key="tr_lr_factor")
        c3.number_input(tr("train.seed"), 0, 2**31 - 1, key="tr_seed")
        choice_radio(tr("train.corpus"), ("generated", "upload"), "tr_corpus", "train.corpus", tr)
        st.file_uploader(
            tr("train.upload"), type=["tsv", "txt"], key="tr_upload", help=tr("train.upload_help"), max_upload_size=5
        )
        submitted = st.form_submit_button(tr("train.start"), disabled=busy, type="primary", key="train_start")
    estimate = expected_seconds(ss["tr_preset"], int(ss["tr_steps"]))
    if estimate is not None:
        seconds, src = estimate
        st.caption(tr("train.expected", minutes=seconds / 60, **src))
    if submitted:
        _submit(tr)


def _submit(tr: Translator) -> None:
    ss = st.session_state
    if not roles.may_operate():
        st.error(tr("train.teacher_only"))
        return
    root = checkpoints_root()
    name = str(ss.get("tr_name", "")).strip()
    try:
        check_name(name)
    except ValueError as exc:
        st.error(tr("train.bad_name", reason=str(exc)))
        return
    if (root / name).exists():
        st.error(tr("train.name_taken", name=name))
        return
    if int(ss["tr_d_model"]) % int(ss["tr_heads"]):
        st.error(tr("train.bad_heads"))
        return
    tsv = None
    if ss["tr_corpus"] == "upload":
        upload = ss.get("tr_upload")
        if upload is None:
            st.error(tr("train.need_upload"))
            return
        tsv = upload.getvalue()
        pairs, problems = jobs.validate_tsv(tsv)
        if problems:
            st.error(tr("train.bad_tsv"))
            st.text("\n".join(problems))
            return
        st.caption(tr("train.tsv_ok", pairs=pairs))
    steps = int(ss["tr_steps"])
    args = [arg for flag, key in FLAGS for arg in (flag, str(ss[key]))] + ["--snapshots", snapshot_steps(steps)]
    try:
        jobs.start(root, name, args, steps, tsv)
    except (jobs.JobError, CorpusFormatError, ValueError) as exc:
        st.error(tr("train.cannot_start"))
        st.text(str(exc))
        return
    st.rerun()


def page() -> None:
    tr = translator()
    st.title(tr("train.title"))
    st.markdown(tr("train.intro"))
    root = checkpoints_root()
    busy = jobs.running(root)
    if busy:
        st.warning(tr("train.busy"))
    status = jobs.status(root)
    if status is not None and status.state in (jobs.JobState.RUNNING, jobs.JobState.STARTING):
        _live(tr.lang)
    else:
        job_panel(tr)
    st.subheader(tr("train.new"))
    if not roles.may_operate():
        with st.container(key="train_students"):
            st.info(tr("train.teacher_only"))
        return
    form(tr, busy)


if __name__ == "__main__":  # see pages/_ui/entry.py
    from pages._ui.entry import run_entry_page

    run_entry_page()
