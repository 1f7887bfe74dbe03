"""kube's scheduler_perf workload files, read from the pinned module at run time.

``$(go env GOMODCACHE)/k8s.io/kubernetes@<version>/test/integration/scheduler_perf`` holds
one ``performance-config.yaml`` per topic (``misc/``, ``batching/``, ``dra/...``): a list of
test cases, each with a workload template (the ops), ``workloads`` (name, ``params``,
``labels``, ``featureGates``, ``threshold``) and optional ``featureGates``, ``labels``,
``defaultPodTemplatePath``, ``schedulerConfigPath`` and ``metricsCollectorConfig``. The
version is the one ``controlplane/go.mod`` pins, so the files always match the binaries;
nothing is copied into this repository.

Selection is kube's: a workload has its test case's labels and its own, and the label
filter works as ``-perf-scheduling-label-filter`` does (``enabled`` in
``label_selector.go``). ``--test`` is a regular expression searched in ``Test/Workload``.

Neighbours: :mod:`bench.scheduler_perf.ops` turns a workload's template into concrete ops;
:mod:`bench.scheduler_perf.capability` says who can run it.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from controlplane.processes import pinned_versions

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

CONFIG_NAME = "performance-config.yaml"
SUITE_PATH = Path("test/integration/scheduler_perf")
ParamValue = int | float | str | bool | list[object] | dict[str, object] | None


class SuiteError(ValueError):
    """A workload file or a selection that cannot be used; the message names it."""


@dataclass(frozen=True)
class Workload:
    """One workload of a test case, as the file states it."""

    name: str
    params: Mapping[str, ParamValue]
    labels: tuple[str, ...]
    feature_gates: Mapping[str, bool]
    threshold: float | Mapping[str, float] | None


@dataclass(frozen=True)
class TestCase:
    """One test case of a topic's ``performance-config.yaml``."""

    __test__ = False  # not a pytest class

    name: str
    topic: str
    """The file's directory below scheduler_perf/ (``misc``, ``dra/extendedresource``)."""
    directory: Path
    """Where its relative template paths start (the Go test's working directory)."""
    labels: tuple[str, ...]
    feature_gates: Mapping[str, bool]
    default_pod_template: Path | None
    scheduler_config: Path | None
    metrics_collector_config: Mapping[str, object] | None
    workload_template: Sequence[Mapping[str, object]]
    workloads: Sequence[Workload] = field(default_factory=tuple)


@dataclass(frozen=True)
class Selected:
    """A workload chosen to run, with its effective params and gates."""

    case: TestCase
    workload: Workload
    params: Mapping[str, ParamValue]
    overridden: Mapping[str, ParamValue]
    """The params ``--param`` changed (name → the value used); empty when none."""

    @property
    def test_id(self) -> str:
        return f"{self.case.name}/{self.workload.name}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (*self.case.labels, *self.workload.labels)

    @property
    def feature_gates(self) -> dict[str, bool]:
        """kube's ``featureGatesMerge``: the test case's gates, the workload's on top."""
        return {**self.case.feature_gates, **self.workload.feature_gates}

    def threshold(self) -> float | None:
        """The upstream SchedulingThroughput threshold (pods/s), if any: a plain value, or
        the entry for this topic (``dra`` for ``dra/``) of a per-topic map."""
        value = self.workload.threshold
        if value is None:
            return None
        if isinstance(value, int | float):
            return float(value) or None
        found = value.get(self.case.topic.replace("/", "_"))
        return None if found is None else float(found)


@functools.cache
def module_root() -> Path:
    """``$(go env GOMODCACHE)/k8s.io/kubernetes@<the version controlplane/go.mod pins>``."""
    version = pinned_versions().get("kubernetes")
    if version is None:
        raise SuiteError("controlplane/go.mod pins no k8s.io/kubernetes version")
    cache = os.environ.get("GOMODCACHE")
    if not cache:
        try:
            cache = subprocess.run(
                ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SuiteError(f"`go env GOMODCACHE` failed: {exc}") from exc
    root = Path(cache) / f"k8s.io/kubernetes@{version}"
    if not (root / SUITE_PATH).is_dir():
        raise SuiteError(
            f"{root / SUITE_PATH} is missing: the module is not in the Go module cache "
            "(run `make controlplane`, which downloads it)"
        )
    return root


def suite_root() -> Path:
    return module_root() / SUITE_PATH


def load_suite(root: Path | None = None) -> list[TestCase]:
    """Every test case of every topic, topics in path order, as the files list them."""
    root = suite_root() if root is None else root
    cases: list[TestCase] = []
    for path in sorted(root.rglob(CONFIG_NAME)):
        cases.extend(load_file(path, root))
    return cases


def load_file(path: Path, root: Path) -> list[TestCase]:
    """The test cases of one ``performance-config.yaml``."""
    topic = str(path.parent.relative_to(root))
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    if not isinstance(raw, list):
        raise SuiteError(f"{path}: expected a list of test cases")
    return [_test_case(item, topic, path.parent, path) for item in raw]


def _test_case(raw: object, topic: str, directory: Path, path: Path) -> TestCase:
    if not isinstance(raw, dict) or "name" not in raw:
        raise SuiteError(f"{path}: a test case without a name")
    where = f"{path}: {raw['name']}"
    known = {
        "name",
        "featureGates",
        "labels",
        "defaultPodTemplatePath",
        "schedulerConfigPath",
        "metricsCollectorConfig",
        "workloadTemplate",
        "workloads",
        "defaultThresholdMetricSelector",
    }
    unknown = set(raw) - known
    if unknown:
        raise SuiteError(f"{where}: unknown fields {sorted(unknown)}")
    template = raw.get("workloadTemplate") or []
    if not isinstance(template, list) or not all(isinstance(op, dict) for op in template):
        raise SuiteError(f"{where}: workloadTemplate must be a list of ops")
    return TestCase(
        name=str(raw["name"]),
        topic=topic,
        directory=directory,
        labels=tuple(str(label) for label in raw.get("labels") or ()),
        feature_gates=_gates(raw.get("featureGates"), where),
        default_pod_template=_path(directory, raw.get("defaultPodTemplatePath")),
        scheduler_config=_path(directory, raw.get("schedulerConfigPath")),
        metrics_collector_config=raw.get("metricsCollectorConfig"),
        workload_template=tuple(template),
        workloads=tuple(_workload(w, where) for w in raw.get("workloads") or ()),
    )


def _workload(raw: object, where: str) -> Workload:
    if not isinstance(raw, dict) or "name" not in raw:
        raise SuiteError(f"{where}: a workload without a name")
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise SuiteError(f"{where}/{raw['name']}: params must be a map")
    threshold = raw.get("threshold")
    if threshold is not None and not isinstance(threshold, int | float | dict):
        raise SuiteError(f"{where}/{raw['name']}: threshold must be a number or a map")
    return Workload(
        name=str(raw["name"]),
        params=dict(params),
        labels=tuple(str(label) for label in raw.get("labels") or ()),
        feature_gates=_gates(raw.get("featureGates"), f"{where}/{raw['name']}"),
        threshold=threshold,
    )


def _gates(raw: object, where: str) -> dict[str, bool]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, bool) for v in raw.values()):
        raise SuiteError(f"{where}: featureGates must map names to true/false")
    return {str(k): v for k, v in raw.items()}


def _path(directory: Path, raw: object) -> Path | None:
    return None if raw is None else (directory / str(raw)).resolve()


def enabled(filters: Iterable[str], labels: Iterable[str]) -> bool:
    """kube's label filter: ``name`` or ``+name`` must be set, ``-name`` must not be."""
    have = set(labels)
    for label in filters:
        if not label:
            continue
        must = not label.startswith("-")
        if label[0] in "+-":
            label = label[1:]
        if (label in have) != must:
            return False
    return True


def parse_param(text: str) -> tuple[str, ParamValue]:
    """``name=value`` with the value as YAML reads it (``5000`` an int, ``10s`` a string)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SuiteError(f"--param {text!r}: expected name=value")
    parsed: ParamValue = yaml.safe_load(value) if value else ""
    return name, parsed


def select(
    cases: Iterable[TestCase],
    *,
    labels: Sequence[str] = ("performance",),
    test: str | None = None,
    overrides: Mapping[str, ParamValue] | None = None,
) -> list[Selected]:
    """The workloads the label filter and the ``Test/Workload`` regex pick, with the
    overrides applied to the params each of them has."""
    pattern = re.compile(test) if test else None
    overrides = overrides or {}
    chosen: list[Selected] = []
    for case in cases:
        for workload in case.workloads:
            if not enabled(labels, (*case.labels, *workload.labels)):
                continue
            if pattern and not pattern.search(f"{case.name}/{workload.name}"):
                continue
            changed = {
                name: value
                for name, value in overrides.items()
                if name in workload.params and workload.params[name] != value
            }
            chosen.append(Selected(case, workload, {**workload.params, **changed}, changed))
    return chosen
