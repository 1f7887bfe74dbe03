"""The ops of kube's scheduler_perf workload templates, as typed records.

One frozen dataclass per opcode of ``test/integration/scheduler_perf`` (``createNodes``,
``createPods``, ``barrier``, ``churn``, ...), with every ``...Param`` field already replaced
by the workload's value: :mod:`bench.scheduler_perf.decode` makes them from the YAML as
kube's ``op.UnmarshalJSON`` and ``patchParams`` do; :mod:`bench.scheduler_perf.executor`
runs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

TemplateParams = dict[str, object]


class OpError(ValueError):
    """An op that kube would refuse; the message names the op and the field."""


# -- the ops --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeAllocatable:
    """``nodeAllocatableStrategy``: allocatable to patch in, CSINode drivers to create."""

    node_allocatable: Mapping[str, str]
    csi_node_allocatable: Mapping[str, Mapping[str, object]]
    migrated_plugins: tuple[str, ...]


@dataclass(frozen=True)
class CreateNodes:
    count: int
    node_template: Path | None
    template_params: TemplateParams
    allocatable: NodeAllocatable | None = None
    label_key: str | None = None
    label_values: tuple[str, ...] = ()
    unique_label_key: str | None = None


@dataclass(frozen=True)
class CreateNamespaces:
    prefix: str
    count: int
    template: Path | None


@dataclass(frozen=True)
class CreatePods:
    count: int
    namespace: str | None
    pod_template: Path | None
    template_params: TemplateParams
    collect_metrics: bool = False
    skip_wait: bool = False
    steady_state: bool = False
    duration_s: float = 0.0
    pv_template: Path | None = None
    pvc_template: Path | None = None
    signature_batch_size: int = 1


@dataclass(frozen=True)
class CreateAny:
    template: Path
    namespace: str
    count: int
    template_params: TemplateParams


@dataclass(frozen=True)
class UpdateAny:
    template: Path
    namespace: str
    count: int
    update_per_second: int
    subresources: tuple[str, ...]


@dataclass(frozen=True)
class CreatePodGroups:
    namespace: str
    template: Path
    template_params: TemplateParams
    count: int


@dataclass(frozen=True)
class CreateResourceClaims:
    namespace: str
    template: Path
    count: int


@dataclass(frozen=True)
class AllocResourceClaims:
    namespace: str


@dataclass(frozen=True)
class Barrier:
    namespaces: tuple[str, ...]
    label_selector: Mapping[str, str]
    stage: str  # Scheduled | Attempted


@dataclass(frozen=True)
class Churn:
    mode: str  # create | recreate
    number: int
    interval_ms: int
    namespace: str | None
    templates: tuple[Path, ...]


@dataclass(frozen=True)
class DeletePods:
    namespace: str
    label_selector: Mapping[str, str]
    skip_wait: bool
    per_second: int


@dataclass(frozen=True)
class Sleep:
    duration_s: float


@dataclass(frozen=True)
class StartCollectingMetrics:
    name: str
    namespaces: tuple[str, ...]
    label_selector: Mapping[str, str]


@dataclass(frozen=True)
class StopCollectingMetrics:
    pass


@dataclass(frozen=True)
class CollectingProfile:
    """start/stopCollectingProfile: a pprof of kube's test process itself; a no-op here."""

    start: bool


Op = (
    CreateNodes
    | CreateNamespaces
    | CreatePods
    | CreateAny
    | UpdateAny
    | CreatePodGroups
    | CreateResourceClaims
    | AllocResourceClaims
    | Barrier
    | Churn
    | DeletePods
    | Sleep
    | StartCollectingMetrics
    | StopCollectingMetrics
    | CollectingProfile
)
