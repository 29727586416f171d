"""The project's import graph: layered packages (robots < retarget < trainers < cli) and no module cycles.

Every import statement counts, including those inside functions (a deferred import is still a dependency);
only ``if TYPE_CHECKING:`` blocks are left out. ``bench/`` scripts never import ``tests/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("robots", "retarget", "trainers", "cli")


def _module_files() -> dict[str, Path]:
    mods = {}
    for pkg in LAYERS:
        for f in (REPO / pkg).rglob("*.py"):
            parts = f.relative_to(REPO).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return mods


def _imports(path: Path, modules: frozenset[str] = frozenset()) -> list[str]:
    """Absolute module names imported by ``path``. ``from pkg import sub`` names ``pkg.sub`` alone when ``sub`` is
    one of ``modules`` (it depends on that module, not on ``pkg/__init__``, which only re-exports)."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for b in node.body
        for n in ast.walk(b)
    }
    names = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{a.name}" for a in node.names]
            names += subs if all(sub in modules for sub in subs) else [node.module, *subs]
    return names


def _graph() -> dict[str, set[str]]:
    mods = _module_files()
    names = frozenset(mods)
    return {name: {i for i in _imports(path, names) if i in mods and i != name} for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_another_that_imports_it_back():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_a_package_imports_only_the_packages_below_it(layer):
    above = LAYERS[LAYERS.index(layer) + 1 :]
    offenders = {
        f"{path.relative_to(REPO)} imports {imported}"
        for path in (REPO / layer).rglob("*.py")
        for imported in _imports(path)
        if imported.split(".")[0] in above
    }
    assert offenders == set()


def test_benches_do_not_import_the_tests():
    for path in (REPO / "bench").glob("*.py"):
        assert '"tests"))' not in path.read_text(), path.name  # sys.path.insert(0, str(ROOT / "tests"))
        assert not any(i.split(".")[0] in ("tests", "conftest") for i in _imports(path)), path.name


def test_no_module_imports_another_modules_private_names():
    """A leading underscore marks what a module keeps to itself; other modules use its public functions."""
    mods = _module_files()
    found = []
    for name, path in sorted(mods.items()):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in mods and node.level == 0:
                found += [f"{name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert found == []
