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


# --- No cycles inside an app -----------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(BASE_DIR).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_imports(tree: ast.AST, known: set[str]) -> list[tuple[str, int, bool]]:
    """Return (module, line, deferred) for each import of one of `known` in `tree`.

    Deferred: inside a function or under `if TYPE_CHECKING:` (not run when the module is imported).
    `from package import module` counts as importing the module.
    """
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [alias.name for alias in child.names if alias.name in known]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                for alias in child.names:
                    if f"{child.module}.{alias.name}" in known:
                        targets.append(f"{child.module}.{alias.name}")
                    elif child.module in known:
                        targets.append(child.module)
            found.extend((target, child.lineno, deferred) for target in targets)
            inner = deferred or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            )
            visit(child, inner)

    visit(tree, False)
    return found


def _with_packages(target: str, importer: str, known: set[str]) -> list[str]:
    """Return `target` and the packages above it that importing it runs (their `__init__`), except the
    importer's own packages, which are already being imported."""
    parts = target.split(".")
    chain = [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
    return [name for name in chain if name in known and name != importer and not importer.startswith(f"{name}.")]


def _graphs(sources: dict[str, str]) -> tuple[dict[str, set[str]], dict[str, set[str]], list[tuple[str, str, int]]]:
    """Return the import graph of everything, of what runs at import time, and the deferred imports."""
    known = set(sources)
    every: dict[str, set[str]] = {name: set() for name in sources}
    at_import: dict[str, set[str]] = {name: set() for name in sources}
    deferred: list[tuple[str, str, int]] = []
    for name, text in sources.items():
        for target, line, is_deferred in _project_imports(ast.parse(text), known):
            reached = _with_packages(target, name, known)
            every[name].update(reached)
            if is_deferred:
                deferred.extend((name, module, line) for module in reached)
            else:
                at_import[name].update(reached)
    return every, at_import, deferred


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        current = stack.pop()
        if current == goal:
            return True
        if current not in seen:
            seen.add(current)
            stack.extend(graph[current])
    return False


def _cycle_dodges(sources: dict[str, str]) -> list[str]:
    """Return "module:line imports target" for each deferred import whose target imports the module back
    (directly or through other modules, counting deferred imports too): a cycle moved out of sight."""
    every, _, deferred = _graphs(sources)
    return [f"{name}:{line} imports {target}" for name, target, line in deferred if _reaches(every, target, name)]


def _import_time_cycles(sources: dict[str, str]) -> list[str]:
    """Return the modules that import themselves back at import time (one works only by import order)."""
    _, at_import, _ = _graphs(sources)
    return sorted(name for name in at_import if any(_reaches(at_import, nxt, name) for nxt in at_import[name]))


def test_no_import_inside_a_function_hides_a_cycle() -> None:
    """Services queue jobs through their app's `dispatch` module, steps share types through `state`:
    nothing imports a module that imports it back, at the top or inside a function."""
    sources = {_module_name(path): path.read_text() for path in _modules()}
    assert _cycle_dodges(sources) == []


def test_no_module_imports_itself_back_at_import_time() -> None:
    """Counting the package `__init__` an import runs: chat.generation once imported chat.pipeline.events,
    whose package imports the runner, which imported chat.generation - it worked only by import order."""
    sources = {_module_name(path): path.read_text() for path in _modules()}
    assert _import_time_cycles(sources) == []


def test_a_cycle_through_a_package_init_is_found() -> None:
    sources = {
        "app": "",
        "app.pipeline": "from app.pipeline.run import answer\n",
        "app.pipeline.events": "",
        "app.pipeline.run": "from app.generation import generate\n",
        "app.generation": "from app.pipeline.events import Delta\n",
    }
    assert _import_time_cycles(sources) == ["app.generation", "app.pipeline", "app.pipeline.run"]


def test_a_cycle_hidden_in_a_function_or_type_check_is_found() -> None:
    sources = {
        "app.services": "def run():\n    from app.tasks import job\n",
        "app.tasks": "from app.services import run\n",
        "app.state": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app import judge\n",
        "app.judge": "from app.state import Run\n",
        "app.lazy": "def heavy():\n    import app.tasks\n",  # no cycle: app.tasks never imports app.lazy
    }
    assert _cycle_dodges(sources) == [
        "app.services:2 imports app.tasks",
        "app.state:3 imports app.judge",
    ]


@pytest.mark.parametrize("app", ["pubmed", "research"])
def test_every_task_a_dispatch_module_queues_is_registered(app: str) -> None:
    """`dispatch` modules name their tasks as strings: a renamed or unregistered task fails here, not in use."""
    import re

    from config.celery import task_named

    functions = re.findall(r'task_named\(f"\{TASKS\}\.(\w+)"\)', (BASE_DIR / app / "dispatch.py").read_text())
    assert functions
    for function in functions:
        assert task_named(f"{app}.tasks.{function}").name == f"{app}.tasks.{function}"


def test_an_unregistered_task_name_is_a_clear_error() -> None:
    from config.celery import task_named

    with pytest.raises(LookupError, match=r"pubmed\.tasks\.no_such_task"):
        task_named("pubmed.tasks.no_such_task")


MAX_MODULE_LINES = 400


def test_no_product_module_is_over_400_lines() -> None:
    """A module that outgrows one screenful of concerns is split where its parts separate."""
    long = {
        str(path.relative_to(BASE_DIR)): lines
        for path in _modules()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_pipeline_steps_read_the_database_only_through_selectors() -> None:
    """A step that needs stored rows asks a selector (`evidence.selectors`, `pubmed.selectors`), never a manager."""
    direct = [
        f"{path.relative_to(BASE_DIR)}:{node.lineno}"
        for path in sorted((BASE_DIR / "chat" / "pipeline").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in {"objects", "_default_manager"}
    ]
    assert direct == []


# What a pipeline step may import of the pipeline: the run's state and trace words, its events, the provider
# loop and the result document - never another step; the runner (run.py) calls the steps in order.
PIPELINE_SHARED = {"state", "events", "generation", "trace_words", "result"}
PIPELINE_STEPS = (
    "understand", "classify", "retrieve", "judge", "live_search", "generate", "support", "verify", "format"
)


@pytest.mark.parametrize("step", PIPELINE_STEPS)
def test_a_pipeline_step_calls_no_other_step(step: str) -> None:
    tree = ast.parse((BASE_DIR / "chat" / "pipeline" / f"{step}.py").read_text())
    imported = {
        node.module.split(".")[2]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("chat.pipeline.")
    }
    assert imported <= PIPELINE_SHARED, f"{step}.py imports the steps {sorted(imported - PIPELINE_SHARED)}"
