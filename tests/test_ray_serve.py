"""The Ray Serve deployment (transformer/serving/ray_serve.py) on a local Ray instance gives the in-process answers."""

from __future__ import annotations

import threading

import pytest
import ray
import torch
from conftest import ROOT
from ray import serve
from test_batcher import SHIPPED, same

from transformer.analysis import analyse
from transformer.checkpoint import load_checkpoint
from transformer.layout import DEFAULT_CHECKPOINT
from transformer.serving import backend_from_env
from transformer.serving.ray_serve import RayClient, RemoteAnalysisError, deploy

pytestmark = pytest.mark.slow  # Ray starts a cluster


@pytest.fixture(scope="module")
def client():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}},
    )
    try:
        deploy()
        yield RayClient("auto")
    finally:
        serve.shutdown()
        ray.shutdown()


def test_the_deployment_gives_the_in_process_answers_to_concurrent_sessions(client):
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT.parent / "real-kde-align")  # whose beam 4 (α 3) changes sentence 2
    model = ckpt.model.eval()
    asks = [(text, beam) for beam in (1, 4) for text in SHIPPED]
    got: dict[int, object] = {}

    def session(i: int, text: str, beam: int) -> None:
        got[i] = client.analyse(ckpt, text, beam)

    threads = [threading.Thread(target=session, args=(i, t, b)) for i, (t, b) in enumerate(asks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    with torch.inference_mode():
        for i, (text, beam) in enumerate(asks):
            same(analyse(model, ckpt.tokenizer, text, beam, alpha=ckpt.alpha), got[i])  # the card's α
    assert got[2].translation != got[6].translation  # beam 4 changes the third sentence


def test_a_failing_request_fails_alone_with_its_message(client, tmp_path):
    ckpt = load_checkpoint(DEFAULT_CHECKPOINT)
    results: dict[str, object] = {}

    def ask(name: str, text: str, c=ckpt) -> None:
        try:
            results[name] = client.analyse(c, text)
        except RemoteAnalysisError as exc:
            results[name] = exc

    missing = load_checkpoint(DEFAULT_CHECKPOINT)
    missing.path = tmp_path / "gone"
    threads = [
        threading.Thread(target=ask, args=("good", SHIPPED[0])),
        threading.Thread(target=ask, args=("bad", "\ud800 unreadable")),
        threading.Thread(target=ask, args=("gone", SHIPPED[1], missing)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    with torch.inference_mode():
        same(analyse(ckpt.model.eval(), ckpt.tokenizer, SHIPPED[0]), results["good"])
    assert isinstance(results["bad"], RemoteAnalysisError) and "Unable to cast" in str(results["bad"])
    assert isinstance(results["gone"], RemoteAnalysisError) and "gone" in str(results["gone"])


def test_the_environment_variable_turns_the_app_into_a_thin_client(client, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_RAY_ADDRESS", "auto")
    assert isinstance(backend_from_env(), RayClient)

