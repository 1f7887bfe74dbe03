"""Helpers for the deployment tests: the manifests as dicts, the Dockerfile as instructions.

tests/deploy has no ``__init__.py``: pytest puts this folder on ``sys.path``, so test modules
import this one as ``deploy_support`` (a unique basename across the suite).
"""

from __future__ import annotations

import copy
import json
import shlex
import socket
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "manifests"
EXAMPLES = MANIFESTS / "examples"
DOCKERFILE = ROOT / "Dockerfile"
SCHEDULER_NAME = "batch-scheduler"
BATCHING_ANNOTATION = "batch-scheduler.io/batching"


def manifest_files() -> list[Path]:
    """Every YAML file under manifests/ (the examples too), sorted."""
    return sorted(MANIFESTS.rglob("*.yaml"))


def documents(path: Path) -> list[dict[str, Any]]:
    """The non-empty YAML documents of one file."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def install_manifests() -> list[dict[str, Any]]:
    """What ``kubectl apply -f manifests/`` applies (top level only), in kubectl's order."""
    return [doc for path in sorted(MANIFESTS.glob("*.yaml")) for doc in documents(path)]


def one(kind: str, docs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The only object of ``kind`` among ``docs`` (default: the install manifests)."""
    found = [d for d in (docs if docs is not None else install_manifests()) if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    """The single container of a Deployment's pod template."""
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, "the scheduler Deployment runs one container"
    return dict(containers[0])


def project_version() -> str:
    """``[project].version`` of pyproject.toml."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(data["project"]["version"])


def console_scripts() -> dict[str, str]:
    """``[project.scripts]`` of pyproject.toml."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(data["project"]["scripts"])


def pods_from_template(workload: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` Pods made from a Job's or Deployment's pod template, as its controller would.

    The emulator runs no controllers (and serves no batch/apps resources), so tests create
    the pods a Job or ReplicaSet controller would create: the template's metadata and spec,
    names ``<workload>-<i>``, the workload's namespace.
    """
    template = workload["spec"]["template"]
    meta = workload["metadata"]
    pods = []
    for i in range(count):
        pod_meta = copy.deepcopy(template.get("metadata") or {})
        pod_meta["name"] = f"{meta['name']}-{i}"
        if "namespace" in meta:
            pod_meta["namespace"] = meta["namespace"]
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": pod_meta,
                "spec": copy.deepcopy(template["spec"]),
            }
        )
    return pods


def replicas(workload: dict[str, Any]) -> int:
    """Pods the workload runs at once: a Job's parallelism, a Deployment's replicas."""
    spec = workload["spec"]
    return int(spec["parallelism"] if workload["kind"] == "Job" else spec["replicas"])


# -- the Dockerfile ------------------------------------------------------------------------


@dataclass(slots=True)
class Instruction:
    keyword: str
    """Upper case: FROM, RUN, COPY, ..."""
    value: str
    """The rest of the logical line (continuations joined, comments dropped)."""

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form ENTRYPOINT/CMD/RUN, else None."""
        try:
            parsed = json.loads(self.value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, list) else None

    def flags(self) -> dict[str, str]:
        """Leading ``--flag=value`` options (COPY --from=..., FROM --platform=...)."""
        out = {}
        for word in shlex.split(self.value):
            if not word.startswith("--"):
                break
            key, _, value = word[2:].partition("=")
            out[key] = value
        return out


@dataclass(slots=True)
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


def dockerfile_instructions(text: str) -> list[Instruction]:
    """Logical instructions: comments and blank lines dropped, ``\\`` continuations joined."""
    out: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # a comment inside a continued instruction is dropped too, as Docker does
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        logical = (pending + line).strip()
        pending = ""
        keyword, _, value = logical.partition(" ")
        out.append(Instruction(keyword.upper(), value.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


def dockerfile_stages(text: str) -> tuple[dict[str, str], list[Stage]]:
    """(global ARG defaults, build stages with ``${ARG}`` expanded in FROM)."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for ins in dockerfile_instructions(text):
        if ins.keyword == "ARG" and not stages:
            name, _, default = ins.value.partition("=")
            args[name] = default
            continue
        if ins.keyword == "FROM":
            words = [w for w in ins.value.split() if not w.startswith("--")]
            base = words[0]
            for name, value in args.items():
                base = base.replace("${" + name + "}", value).replace("$" + name, value)
            alias = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base, alias))
            continue
        assert stages, f"{ins.keyword} before the first FROM"
        stages[-1].instructions.append(ins)
    return args, stages


# -- processes -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(cond: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    """Poll ``cond`` until truthy (returned) or ``timeout`` seconds pass (its last value)."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
