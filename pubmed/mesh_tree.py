"""The NLM MeSH tree (descriptor names and tree numbers), read from `MESH_TREE_PATH` at run time.

Used to broaden a disease name one level up the hierarchy. The file is public data kept outside
the repository (`../shared/data/mesh/`); when it is missing the tree is empty and callers fall back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import structlog
from django.conf import settings

logger = structlog.get_logger(__name__)


def fold(name: str) -> str:
    """Return `name` as the tree indexes it: lower case, punctuation dropped ("Melanoma, X" → "melanoma x")."""
    return " ".join(re.sub(r"[^\w\s-]", " ", name).lower().split())


@dataclass(frozen=True)
class MeshTree:
    """Descriptor name ↔ tree numbers, both directions."""

    numbers: dict[str, tuple[str, ...]]  # folded name (and its uninverted form) → tree numbers
    names: dict[str, str]  # tree number → name as MeSH writes it

    def __len__(self) -> int:
        return len(self.numbers)

    def parents(self, name: str) -> list[str]:
        """Return the descriptors one level above `name` (any of its tree positions), in tree-number order."""
        found: list[str] = []
        for number in sorted(self.numbers.get(fold(name), ())):
            if "." not in number:
                continue
            parent = self.names.get(number.rsplit(".", 1)[0])
            if parent and parent not in found:
                found.append(parent)
        return found

    def is_top_level(self, name: str) -> bool:
        """Return True if `name` sits directly under a tree's root (e.g. Neoplasms, C04)."""
        numbers = self.numbers.get(fold(name), ())
        return any("." not in number for number in numbers)

    def canonical(self, name: str) -> str:
        """Return the descriptor as MeSH spells it, or '' when `name` is not a descriptor."""
        numbers = self.numbers.get(fold(name))
        return self.names[numbers[0]] if numbers else ""


def _read(path: Path) -> MeshTree:
    numbers: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    with path.open(encoding="utf-8-sig") as handle:
        next(handle, None)  # header: Tree Number, Desc Ui, Term
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                continue
            number, _, term = parts
            names[number] = term
            numbers.setdefault(fold(term), []).append(number)
            if term.count(",") == 1:  # "Melanoma, Amelanotic" is also found as "amelanotic melanoma"
                head, modifier = term.split(",")
                numbers.setdefault(fold(f"{modifier} {head}"), []).append(number)
    return MeshTree(numbers={name: tuple(found) for name, found in numbers.items()}, names=names)


@cache
def _load(path: str) -> MeshTree:
    file = Path(path)
    if not file.is_file():
        logger.warning("mesh_tree_missing", path=path)
        return MeshTree(numbers={}, names={})
    return _read(file)


def mesh_tree() -> MeshTree:
    """Return the MeSH tree at `MESH_TREE_PATH` (read once per process); empty when the file is absent."""
    return _load(str(settings.MESH_TREE_PATH))
