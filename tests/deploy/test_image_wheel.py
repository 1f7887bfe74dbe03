"""The image's Python content without Docker: the builder stage's wheel, installed and run.

The builder stage is replayed: its COPY sources go into a temporary build context and its
``pip wheel`` RUN line runs there as written (only ``python`` and ``/wheels`` are replaced
by this interpreter and a temporary directory). The wheel is installed with ``--no-deps``
into a fresh venv whose dependencies come from the project's venv through a ``.pth`` line
(installing them from PyPI takes half a minute); that the wheel declares every third-party
package the code imports is checked separately, so the shortcut cannot hide a missing one.
Then the venv's own ``batch-scheduler`` console script answers ``--version`` and places the
example Job's pods with ``simulate``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_support import (
    DOCKERFILE,
    EXAMPLES,
    ROOT,
    dockerfile_stages,
    documents,
    one,
    pods_from_template,
    project_version,
)

from tests.builders import make_node


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _builder_wheel_command() -> tuple[list[str], str]:
    """(argv of the builder's ``pip wheel`` RUN, its WORKDIR)."""
    _, stages = dockerfile_stages(DOCKERFILE.read_text(encoding="utf-8"))
    builder = stages[0]
    (run,) = [i.value for i in builder.all("RUN") if "pip wheel" in i.value]
    (workdir,) = [i.value for i in builder.all("WORKDIR")]
    return shlex.split(run), workdir


def _replay_copies(context: Path) -> None:
    """The builder's COPY instructions into ``context`` (its WORKDIR), minus .dockerignore'd
    caches."""
    _, stages = dockerfile_stages(DOCKERFILE.read_text(encoding="utf-8"))
    for ins in stages[0].all("COPY"):
        *sources, dest = ins.value.split()
        for source in sources:
            src = ROOT / source
            target = context / dest / src.name if dest.endswith("/") else context / dest
            if src.is_dir():
                shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, check=False, env=env, **kwargs
    )
    assert proc.returncode == 0, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built exactly as the Dockerfile's builder stage builds it."""
    context = tmp_path_factory.mktemp("context")
    wheels = tmp_path_factory.mktemp("wheels")
    argv, _ = _builder_wheel_command()
    assert argv[:4] == ["python", "-m", "pip", "wheel"]
    assert "/wheels" in argv
    _replay_copies(context)
    argv = [sys.executable if a == "python" else str(wheels) if a == "/wheels" else a for a in argv]
    _run(argv, cwd=context)
    (built,) = wheels.glob("*.whl")
    assert built.name == f"batch_scheduler-{project_version()}-py3-none-any.whl"
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (--no-deps; deps from the project's venv)."""
    root = tmp_path_factory.mktemp("venv") / "v"
    _run([sys.executable, "-m", "venv", str(root)])
    python = root / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--no-cache-dir", "--no-deps", str(wheel)])
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    # Appended after the venv's own site-packages: the wheel's `scheduler` wins; the project's
    # editable install is not activated (.pth files in an added directory are not run).
    Path(site.stdout.strip(), "project-deps.pth").write_text(sysconfig.get_paths()["purelib"])
    return root


def test_wheel_declares_every_third_party_import(wheel: Path) -> None:
    """Requires-Dist = pyproject's dependencies, and covers what scheduler/ imports."""
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = zf.read(meta).decode()
        names = zf.namelist()
    declared = {
        _normalize(re.split(r"[<>=!~;\[ ]", line.split(":", 1)[1].strip())[0])
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    }
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert declared == {_normalize(re.split(r"[<>=!~;\[ ]", d)[0]) for d in project["dependencies"]}
    imported: set[str] = set()
    for path in (ROOT / "scheduler").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"scheduler", "__future__"}
    distributions = packages_distributions()
    needed = {_normalize(distributions[m][0]) for m in third_party}
    assert needed <= declared, f"imported but not declared: {needed - declared}"
    assert "scheduler/py.typed" in names
    assert not [n for n in names if n.startswith("tests/")]


def test_console_script_from_the_wheel_reports_its_version(venv: Path, tmp_path: Path) -> None:
    """The venv's batch-scheduler script runs the wheel's code and prints the version."""
    proc = _run([str(venv / "bin" / "batch-scheduler"), "--version"], cwd=tmp_path)
    assert proc.stdout.strip() == f"batch-scheduler {project_version()}"
    where = _run(
        [str(venv / "bin" / "python"), "-c", "import scheduler; print(scheduler.__file__)"],
        cwd=tmp_path,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout


def test_simulate_from_the_wheel_places_the_example_job(venv: Path, tmp_path: Path) -> None:
    """simulate places 3 pods of the example Job on 3 four-CPU nodes, two of them by hint."""
    job = one("Job", documents(EXAMPLES / "job-one-per-node.yaml"))
    nodes = [make_node(f"node-{i}") for i in range(3)]
    for node in nodes:
        node["metadata"].pop("uid", None)
    pods = pods_from_template(job, 3)
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(yaml.safe_dump_all([*nodes, *pods]))
    proc = _run(
        [str(venv / "bin" / "batch-scheduler"), "simulate", str(snapshot), "--output", "json"],
        cwd=tmp_path,
    )
    report = json.loads(proc.stdout)
    placed = {p["pod"]: p["node"] for p in report["placements"]}
    assert sorted(placed.values()) == ["node-0", "node-1", "node-2"], report
    assert report["summary"]["scheduled"] == 3
    assert report["summary"]["batched"] == 2
