"""The claim verifier model: a cross-encoder trained here (training/verifier.py), run with ONNX Runtime.

`VERIFIER_MODEL` names a directory with `model.onnx` (int8), `tokenizer.json` and `verifier.json`
(labels, maximum length, calibrated thresholds, the model file's sha256). The default is the model
shipped in `evidence/claims/model/`. Nothing is downloaded; a missing, altered or unreadable model
raises `VerifierModelError` with the command that rebuilds it, and start-up (`evidence.apps`) refuses
to run without it. Every claim check asks it (`evidence.claims.judge`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REBUILD = 'rebuild it with `make verifier` (README "Rebuilding the claim verifier") or point VERIFIER_MODEL at one'
LABELS = ("supported", "contradicted", "not_enough_info")
MEMO_SIZE = 4096  # (claim, evidence) pairs whose probabilities a loaded model remembers


class VerifierModelError(RuntimeError):
    """The claim verifier model is missing, altered or cannot be loaded."""


@dataclass(frozen=True)
class VerifierConfig:
    path: Path
    max_length: int
    support_threshold: float
    contradict_threshold: float
    sha256: str


def read_config(path: Path) -> VerifierConfig:
    """Return the model directory's settings, checking that its three files are there and the weights intact."""
    missing = [name for name in ("model.onnx", "tokenizer.json", "verifier.json") if not (path / name).is_file()]
    if missing:
        raise VerifierModelError(f"claim verifier model at {path} lacks {', '.join(missing)}; {REBUILD}")
    try:
        raw = json.loads((path / "verifier.json").read_text())
        config = VerifierConfig(
            path,
            int(raw["max_length"]),
            float(raw["support_threshold"]),
            float(raw["contradict_threshold"]),
            str(raw["sha256"]),
        )
        if tuple(raw["labels"]) != LABELS:
            raise ValueError(f"labels {raw['labels']} are not {list(LABELS)}")
    except (ValueError, KeyError, TypeError) as exc:
        raise VerifierModelError(
            f"claim verifier settings {path / 'verifier.json'} are unreadable ({exc}); {REBUILD}"
        ) from exc
    digest = hashlib.sha256((path / "model.onnx").read_bytes()).hexdigest()
    if digest != config.sha256:
        raise VerifierModelError(
            f"claim verifier weights {path / 'model.onnx'} do not match verifier.json (sha256 {digest[:12]}…, "
            f"expected {config.sha256[:12]}…); {REBUILD}"
        )
    return config


class ClaimVerifierModel:
    """Probabilities of supported / contradicted / not enough information for (claim, evidence) pairs."""

    def __init__(self, path: Path, *, threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.config = read_config(path)
        try:
            options = ort.SessionOptions()
            if threads:
                options.intra_op_num_threads = threads
            self.session = ort.InferenceSession(str(path / "model.onnx"), options, providers=["CPUExecutionProvider"])
            self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        except Exception as exc:  # onnxruntime and tokenizers raise their own types for unreadable files
            raise VerifierModelError(f"claim verifier model at {path} cannot be loaded ({exc}); {REBUILD}") from exc
        self.tokenizer.enable_truncation(self.config.max_length, strategy="longest_first")
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.inputs = {i.name for i in self.session.get_inputs()}
        self._memo: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._memo_lock = threading.Lock()

    def probabilities(self, claim: str, evidence: Sequence[str]) -> np.ndarray:
        """Return an (n, 3) array: for each evidence text, P(supported), P(contradicted), P(not enough info).

        Pairs read before are not read again (the streamed preview and the finished answer judge the same
        claims); the memo keeps the last `MEMO_SIZE` pairs.
        """
        keys = [(claim, text) for text in evidence]
        with self._memo_lock:
            rows = {key: self._memo[key] for key in keys if key in self._memo}
        unread = list(dict.fromkeys(key for key in keys if key not in rows))
        if unread:
            rows.update(zip(unread, self._read(claim, [text for _, text in unread]), strict=True))
            with self._memo_lock:
                for key in unread:
                    self._memo[key] = rows[key]
                while len(self._memo) > MEMO_SIZE:
                    self._memo.popitem(last=False)
        if not keys:
            return np.zeros((0, 3), dtype=np.float32)
        return np.vstack([rows[key] for key in keys]).astype(np.float32)

    def _read(self, claim: str, evidence: Sequence[str]) -> np.ndarray:
        """Read each pair on its own: the int8 model quantises its activations over the whole input, so a pair
        read in a batch (padding and neighbours included) would score differently from the same pair alone.
        One pair at a time, a pair's probabilities never depend on what else was read with it."""
        rows = []
        for text in evidence:
            encoding = self.tokenizer.encode(claim, text)
            feeds = {
                "input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
            }
            rows.append(self.session.run(["logits"], {k: v for k, v in feeds.items() if k in self.inputs})[0][0])
        logits = np.array(rows, dtype=np.float32).reshape(-1, 3)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)


class UnitReader:
    """The verifier model's reading of one claim's candidate units, made when a verdict first needs a unit.

    A claim its closest unit supports costs one read of the model; a claim nothing supports has every unit read.
    Readings are kept, so deciding again (other thresholds) reads nothing twice.
    """

    def __init__(self, model: ClaimVerifierModel, claim: str, texts: Sequence[str]) -> None:
        self.model, self.claim, self.texts = model, claim, list(texts)
        self.rows: dict[int, tuple[float, float, float]] = {}
        self.lock = threading.Lock()

    def row(self, index: int) -> tuple[float, float, float]:
        with self.lock:
            if index not in self.rows:
                p = self.model.probabilities(self.claim, [self.texts[index]])[0]
                self.rows[index] = (float(p[0]), float(p[1]), float(p[2]))
            return self.rows[index]


_MODELS: dict[Path, ClaimVerifierModel] = {}
_LOCK = threading.Lock()


def get_verifier_model(path: Path | None = None) -> ClaimVerifierModel:
    """Return the process's verifier model for `path` (default: settings.VERIFIER_MODEL), loading it once."""
    from django.conf import settings

    target = Path(path or settings.VERIFIER_MODEL).expanduser().resolve()
    with _LOCK:
        model = _MODELS.get(target)
        if model is None:
            model = _MODELS[target] = ClaimVerifierModel(target, threads=int(settings.VERIFIER_THREADS))
        return model
