"""Weights shipped as `.npz` files, each with its sha256 in the `metadata.json` beside it: read only when intact."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def checked_arrays(path: Path, recorded: str | None, error: type[Exception], rebuild: str) -> dict[str, np.ndarray]:
    """Return the arrays of `path`, raising `error` (naming the `rebuild` command) when the file is missing or its
    sha256 is not `recorded`."""
    if not path.exists():
        raise error(f"{path} is missing; {rebuild}.")
    if recorded != hashlib.sha256(path.read_bytes()).hexdigest():
        raise error(f"{path} is not the file metadata.json names; {rebuild}.")
    with np.load(path) as stored:
        return dict(stored)


def shipped_arrays(
    directory: Path, filename: str, sha_path: Sequence[str], error: type[Exception], rebuild: str
) -> dict[str, np.ndarray]:
    """Return the arrays of `directory/filename`, checked against the sha256 that `metadata.json` beside it records
    under `sha_path` (["sha256"], or ["semantic", "sha256"])."""
    metadata = directory / "metadata.json"
    recorded: object = json.loads(metadata.read_text()) if metadata.exists() else None
    for key in sha_path:
        recorded = recorded.get(key) if isinstance(recorded, dict) else None
    return checked_arrays(directory / filename, recorded if isinstance(recorded, str) else None, error, rebuild)


@dataclass(frozen=True)
class LinearHead:
    """Logistic regression over a sentence embedding: weights, bias, and the score at or above which it says yes."""

    weights: np.ndarray
    bias: float
    threshold: float

    def score(self, vector: np.ndarray) -> float:
        return float(np.asarray(vector, dtype=np.float32) @ self.weights + self.bias)

    def reads(self, vector: np.ndarray) -> bool:
        return self.score(vector) >= self.threshold
