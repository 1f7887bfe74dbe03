"""No import circles between the project's modules, ``TYPE_CHECKING`` imports included.

import-linter's layer contracts see packages, and skip what only type checking imports; a
reader sees both. This walks every module's ``import`` statements (wherever they stand) and
fails on any set of modules that import each other in a loop, naming the loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scheduler", "controlplane", "bench")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module ``name`` refers to: itself, or the package holding it."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``module`` imports, at any depth of its code."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import mod`` imports the module; ``from mod import name`` the module.
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            target = _resolve(name, modules)
            if target is not None and target != module:
                targets.add(target)
    return targets


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_no_module_imports_itself_through_others() -> None:
    """Every import between the project's modules runs one way (TYPE_CHECKING included)."""
    graph = import_graph()
    cycles = _cycles(graph)
    described = [
        " <-> ".join(cycle)
        + ": "
        + "; ".join(f"{a} -> {b}" for a in cycle for b in sorted(graph[a]) if b in cycle)
        for cycle in cycles
    ]
    assert not cycles, "import circles:\n" + "\n".join(described)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        pytest.param({"a": {"b"}, "b": {"a"}}, [["a", "b"]], id="two-modules-loop"),
        pytest.param({"a": {"b"}, "b": {"c"}, "c": set()}, [], id="a-chain-is-no-loop"),
        pytest.param(
            {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]], id="three-loop"
        ),
    ],
)
def test_the_cycle_finder(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    """The finder reports exactly the loops of a small graph."""
    assert _cycles(graph) == expected
