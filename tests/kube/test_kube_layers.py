"""kube's parts import one another one way only, and its import contract names every part.

A part is a module or subpackage directly under ``scheduler/kube`` (``binder``, ``intake``,
``controller``…). import-linter's contract in pyproject.toml checks the layers when
``lint-imports`` runs; these tests keep the package-level picture true from pytest too,
``TYPE_CHECKING`` imports included (the intake once imported the controller's helpers while
the controller ran the intake: no module loop, but a loop between the two packages).
"""

from __future__ import annotations

import tomllib

import pytest

from tests.test_import_cycles import ROOT, import_graph

KUBE = "scheduler.kube"


def _part(module: str) -> str | None:
    """The part of kube ``module`` belongs to (None: outside kube, or kube itself)."""
    if not module.startswith(KUBE + "."):
        return None
    return module[len(KUBE) + 1 :].split(".")[0]


def _part_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        part = _part(module)
        if part is None:
            continue
        edges = graph.setdefault(part, set())
        edges.update(t for t in map(_part, targets) if t is not None and t != part)
    return graph


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def _contract() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    [kube] = [c for c in contracts if c.get("containers") == [KUBE]]
    return dict(kube)


def test_no_kube_part_reaches_itself_through_another() -> None:
    """Imports between kube's parts run one way (the intake/controller loop stays gone)."""
    graph = _part_graph()
    loops = sorted(part for part in graph if part in _reach(graph, part))
    assert not loops, f"kube parts in an import loop: {loops}: {graph}"


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        pytest.param("intake", "controller", id="the-intake-never-imports-the-controller"),
        pytest.param("kinds", "controller", id="the-kind-table-is-below-the-controller"),
        pytest.param("listing", "intake", id="the-list-vocabulary-is-below-the-intake"),
        pytest.param("client", "workers", id="the-client-is-below-the-worker-kit"),
    ],
)
def test_a_lower_part_never_imports_an_upper_one(lower: str, upper: str) -> None:
    """Shared pieces sit one layer down: ``lower`` reaches nothing of ``upper``."""
    assert upper not in _reach(_part_graph(), lower)


def test_the_kube_contract_names_every_part_once() -> None:
    """The layers contract is exhaustive: each kube module or subpackage in one layer."""
    contract = _contract()
    assert contract["type"] == "layers"
    assert contract["exhaustive"] is True
    layers = contract["layers"]
    assert isinstance(layers, list)
    named = [name.strip() for layer in layers for name in str(layer).split("|")]
    assert len(named) == len(set(named)), f"named twice: {named}"
    parts = {p for p in map(_part, import_graph()) if p is not None}
    assert set(named) == parts


MAX_LINES = 500


def test_every_kube_module_is_under_500_lines() -> None:
    """Split along seams before a module passes 500 lines (the client's kubeconfig loading
    is its own module)."""
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "scheduler" / "kube").rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long
