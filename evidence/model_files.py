"""Weights shipped as `.npz` files, each with its sha256 in the `metadata.json` beside it: read only when intact."""

from __future__ import annotations

import hashlib
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
