"""Imports run one way: research → chat → pubmed / trials → evidence → config."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent
# An app may import apps of a lower layer only; pubmed and trials share a layer and never import each other.
LAYERS = {"config": 0, "evidence": 1, "pubmed": 2, "trials": 2, "chat": 3, "research": 4}
# Known upward imports still to be removed: module path → the app it imports.
KNOWN_UPWARD: dict[str, str] = {}


def _imported_apps(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """Return (app, line, inside a function) for each import of one of our apps in `tree`."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module]
            for name in names:
                app = name.split(".")[0]
                if app in LAYERS:
                    found.append((app, child.lineno, in_function))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(tree, False)
    return found


def _modules() -> list[Path]:
    return sorted(
        path
        for app in LAYERS
        for path in (BASE_DIR / app).rglob("*.py")
        if "migrations" not in path.parts
    )


def test_every_app_is_scanned() -> None:
    scanned = {path.relative_to(BASE_DIR).parts[0] for path in _modules()}
    assert scanned == set(LAYERS)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(BASE_DIR)))
def test_module_imports_only_its_own_or_lower_layers(path: Path) -> None:
    relative = path.relative_to(BASE_DIR).as_posix()
    own = relative.split("/")[0]
    upward = [
        f"line {line}: imports {app}{' inside a function' if in_function else ''}"
        for app, line, in_function in _imported_apps(ast.parse(path.read_text(), filename=relative))
        if app != own
        and LAYERS[app] >= LAYERS[own]
        and KNOWN_UPWARD.get(relative) != app
    ]
    assert upward == [], f"{relative} imports upward ({' → '.join(sorted(LAYERS, key=LAYERS.__getitem__))}): {upward}"


def test_upward_import_is_found_even_inside_a_function() -> None:
    tree = ast.parse("def f():\n    from research.registries import page_get\n")
    assert _imported_apps(tree) == [("research", 2, True)]


def test_known_upward_imports_still_exist() -> None:
    """Drop an entry from KNOWN_UPWARD once its import is gone, so the list never hides a new one."""
    for relative, app in KNOWN_UPWARD.items():
        apps = {found for found, _, _ in _imported_apps(ast.parse((BASE_DIR / relative).read_text()))}
        assert app in apps, f"{relative} no longer imports {app}: remove it from KNOWN_UPWARD."
