"""The transformer of an embedding model as a cached, graph-optimised (and int8-quantised) ONNX file.

Exported once per set of weights (keyed by their files' size and mtime, `EXPORT_RECIPE` and the versions of
the packages that write the file) under the embedder's cache directory; the claim verifier's export
(`training/export.py`) reuses the optimise and quantise step.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path

import structlog

logger = structlog.get_logger(__name__)

# Bump when the export recipe changes, so cached ONNX files from an older recipe are not reused.
EXPORT_RECIPE = "eager-attention-v2"


# The packages whose versions change the exported bytes. A stale export from before an upgrade is not reused:
# the instruction detector's semantic half was trained on vectors from one export (evidence/injection_model).
EXPORTERS = ("torch", "transformers", "onnx", "onnxruntime")


def _weights_fingerprint(path: Path) -> str:
    from importlib.metadata import PackageNotFoundError, version

    def installed(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "-"

    exporters = ",".join(f"{package}={installed(package)}" for package in EXPORTERS)
    digest = hashlib.sha256(f"{path}|{EXPORT_RECIPE}|{exporters}".encode())
    for file in sorted(path.glob("*")):
        if file.is_file() and file.suffix in {".safetensors", ".bin", ".json", ".txt"}:
            stat = file.stat()
            digest.update(f"{file.name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def _export_onnx(model_dir: Path, target: Path) -> None:
    """Export the transformer (token ids → last hidden state) to ONNX at `target`, atomically."""
    import torch
    from transformers import AutoModel

    # Eager attention exports the classic BERT attention pattern, which ONNX Runtime fuses into one
    # Attention op (and int8 QAttention); the SDPA export is left as many small fp32 ops.
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True, attn_implementation="eager")
    model.eval()
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in inspect.signature(model.forward).parameters:
        names.append("token_type_ids")

    class _HiddenState(torch.nn.Module):
        # Keyword arguments: positional order of forward() differs between transformers versions.
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    dummy = tuple(torch.ones((2, 16), dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".onnx", delete=False) as tmp:
        tmp_path = Path(tmp.name)
    try:
        # The tracer's warnings concern branches that are constant for encoder inputs (mask length
        # equals sequence length); the export is checked against sentence-transformers in tests.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _HiddenState(),
                dummy,
                str(tmp_path),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def optimise_and_quantise(source: Path, target: Path, *, quantise: bool, num_heads: int = 0,
                           hidden_size: int = 0) -> None:
    """Fuse attention/LayerNorm/GELU for ONNX Runtime, then (optionally) quantise weights to int8."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    with tempfile.TemporaryDirectory(dir=target.parent) as tmp_dir:
        optimised = Path(tmp_dir) / "optimised.onnx"
        try:
            optimised_model = optimize_model(
                str(source), model_type="bert", num_heads=num_heads, hidden_size=hidden_size
            )
            optimised_model.save_model_to_file(str(optimised))
        except Exception as exc:  # not every architecture has fusions; the plain graph still works
            logger.warning("embedding_onnx_optimise_skipped", error=str(exc))
            optimised = source
        if quantise:
            staged = Path(tmp_dir) / "quantised.onnx"
            # The fused graph uses com.microsoft ops that ONNX shape inference cannot type.
            quantize_dynamic(
                str(optimised),
                str(staged),
                weight_type=QuantType.QInt8,
                # Per-channel scales keep cosine similarity to fp32 at ~0.995 (per-tensor: ~0.94).
                per_channel=True,
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
            os.replace(staged, target)
        elif optimised != source:
            os.replace(optimised, target)
        else:
            shutil.copyfile(source, target)


_EXPORT_LOCK = threading.Lock()


def onnx_model_path(model_dir: Path, *, name: str, quantise: bool, cache_dir: Path) -> Path:
    """Return the cached ONNX file for the transformer in `model_dir` (called `name` in the log), exporting
    (and quantising) it on first use."""
    # Keyed by the weights, not the setting's spelling: a package and its directory share one export.
    folder = cache_dir / f"{model_dir.name}-{_weights_fingerprint(model_dir)}"
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / ("model-int8-pc.onnx" if quantise else "model-optimised.onnx")
    with _EXPORT_LOCK:
        if final.exists():
            return final
        raw = folder / "model.onnx"
        if not raw.exists():
            logger.info("embedding_onnx_export", model=name, target=str(raw))
            _export_onnx(model_dir, raw)
        config_path = model_dir / "config.json"
        config = json.loads(config_path.read_text()) if config_path.is_file() else {}
        optimise_and_quantise(
            raw,
            final,
            quantise=quantise,
            num_heads=int(config.get("num_attention_heads") or 0),
            hidden_size=int(config.get("hidden_size") or 0),
        )
    return final
