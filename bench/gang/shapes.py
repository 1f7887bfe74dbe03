"""The gang benchmark's shapes (issue 38, item 7), and the objects each one creates.

Every shape is a cluster of kube's base nodes (``makeBaseNode``: 4 CPU, 32Gi, 110 pods)
and a backlog of pods, built from kube's own gang workload files
(``$(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.2/test/integration/scheduler_perf/podgroup/
gangscheduling``: ``templates/gang-pod.yaml``, 100m and 100Mi, and ``templates/podgroup.yaml``,
a gang whose ``minCount`` is its size), rendered as kube's runner renders them:

* ``gangs-3x1000``: kube's ``5000Nodes_3Gangs_3000Pods_1000PerGroup`` objects;
* ``gangs-1000x3``: kube's ``5000Nodes_1000Gangs_3000Pods``;
* ``plain-3000``: the same 3000 pods with no ``schedulingGroup`` (the baseline for the
  3-pod gangs, and for the pods unrelated to the infeasible gang);
* ``infeasible``: a 1000-pod gang that cannot be placed — each member asks for 3 CPU
  (one per node) and selects the ``gang-pool`` nodes, which are only 500 (every 10th node;
  kube's default sampling looks for 500 feasible nodes at 5000, so one full pass finds the
  whole pool) — beside the 3000 plain pods, created after the gang.

Signature labels: kube's runner labels each pod ``signature: signature-label-<index /
signatureBatchSize>``, 1 by default, so every pod of its gang workloads has a label of its
own, and InterPodAffinity signs a pod's labels (in kube as in ours: existing pods' terms
read them): no two members share a signature. ``labels="pod"`` keeps that (kube's
objects); ``labels="gang"`` labels a gang's members alike (``signatureBatchSize`` =
``podsPerGroup``; the plain pods in runs of 3, as the 3-pod gangs), a gang of identical
members as a Job's would be. kube-scheduler does not batch under its default
configuration (PodTopologySpread's System defaults make every pod unsignable), so its
figures do not depend on the labels; ours' do.

``--nodes`` scales a shape down for development and for the test tier (the pool stays a
tenth of the nodes, the gang twice the pool).

Neighbours: :mod:`bench.gang.backlog` creates the objects and measures,
:mod:`bench.scheduler_perf.objects` renders the templates.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from bench.scheduler_perf import objects
from bench.scheduler_perf.suite import Selected, TestCase, load_suite, select

if TYPE_CHECKING:
    from pathlib import Path

Obj = dict[str, Any]
GANG_CASE = "GangScheduling"
GANG_WORKLOAD = "5000Nodes_3Gangs_3000Pods_1000PerGroup"
GANG_NS = "gang-ns-0"
PLAIN_NS = "plain-ns-0"
POOL_LABEL = "gang-pool"
POOL_EVERY = 10
"""Every 10th node is in the pool the infeasible gang selects."""
INFEASIBLE_CPU = "3"
"""One infeasible member per 4-CPU node."""
LABELS = ("pod", "gang")
PLAIN_RUN = 3
"""With ``labels="gang"``, plain pods share a signature label in runs of 3 (the 3-pod
gangs' members, without their group)."""


@dataclass(frozen=True)
class Shape:
    """A backlog: ``gangs`` PodGroups of ``gang_size`` pods each (``minCount`` the size)
    in :data:`GANG_NS`, then ``plain`` pods with no group in :data:`PLAIN_NS`."""

    name: str
    description: str
    nodes: int
    gangs: int = 0
    gang_size: int = 0
    plain: int = 0
    infeasible: bool = False
    """The gang's members ask 3 CPU and select the pool: it cannot be placed."""
    labels: str = "pod"
    """Signature labels: one per pod (kube's runner) or one per gang (module docstring)."""

    @property
    def pool(self) -> int:
        """Nodes labelled ``gang-pool=true`` (only the infeasible shape needs them)."""
        return self.nodes // POOL_EVERY if self.infeasible else 0

    @property
    def expected(self) -> tuple[str, int]:
        """The namespace whose pods the run waits for, and how many must bind."""
        if self.infeasible or not self.gangs:
            return PLAIN_NS, self.plain
        return GANG_NS, self.gangs * self.gang_size

    def scaled(self, nodes: int) -> Shape:
        """The shape at ``nodes`` nodes: pods and gangs scaled with the nodes (at least 3
        pods a gang, 2 gangs); the infeasible gang stays twice its pool."""
        if nodes == self.nodes:
            return self
        factor = nodes / self.nodes
        plain = round(self.plain * factor)
        if self.infeasible:
            size = 2 * max(1, nodes // POOL_EVERY)
            return replace(self, nodes=nodes, gang_size=size, plain=max(3, plain))
        if self.gangs and self.gang_size >= self.gangs:  # few large gangs: shrink the size
            size = max(3, round(self.gang_size * factor))
            return replace(self, nodes=nodes, gang_size=size)
        gangs = max(2, round(self.gangs * factor)) if self.gangs else 0
        return replace(self, nodes=nodes, gangs=gangs, plain=plain)

    def signature_run(self, *, plain: bool) -> int:
        """kube's ``signatureBatchSize`` for the gang's or the plain pods."""
        if self.labels == "pod":
            return 1
        return PLAIN_RUN if plain else max(1, self.gang_size)


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("gangs-3x1000", "3 gangs of 1000 pods", 5000, gangs=3, gang_size=1000),
        Shape("gangs-1000x3", "1000 gangs of 3 pods", 5000, gangs=1000, gang_size=3),
        Shape("plain-3000", "the same 3000 pods, no group", 5000, plain=3000),
        Shape(
            "infeasible",
            "an infeasible 1000-pod gang, then 3000 plain pods",
            5000,
            gangs=1,
            gang_size=1000,
            plain=3000,
            infeasible=True,
        ),
    )
}


@functools.cache
def gang_selected() -> Selected:
    """kube's GangScheduling workload whose files the shapes render (its test case gives
    the templates' directory, its gates and its scheduler configuration: none)."""
    (chosen,) = select(load_suite(), labels=(), test=f"^{GANG_CASE}/{GANG_WORKLOAD}$")
    return chosen


def _case() -> TestCase:
    return gang_selected().case


def templates() -> tuple[Path, Path]:
    """kube's gang pod and PodGroup templates."""
    directory = _case().directory / "templates"
    return directory / "gang-pod.yaml", directory / "podgroup.yaml"


def node(shape: Shape, index: int, *, scheduler_run: str) -> Obj:
    """The ``index``-th node: kube's base node, named for the run, in the pool when its
    index says so."""
    name = f"node-{scheduler_run}-{index:05d}"
    obj = objects.base_node("")
    obj["metadata"] = {"name": name, "labels": {objects.HOSTNAME: name}}
    if shape.pool and index % POOL_EVERY == 0:
        obj["metadata"]["labels"][POOL_LABEL] = "true"
    return obj


def pod_group(shape: Shape, index: int) -> Obj:
    """kube's PodGroup template for gang ``index``: ``gang-<index>``, minCount the size."""
    _, template = templates()
    group = objects.render(template, {"podsPerGroup": shape.gang_size, "Index": index})
    group.update(apiVersion="scheduling.k8s.io/v1beta1", kind="PodGroup")
    return group


def gang_pod(shape: Shape, index: int, *, scheduler_name: str) -> Obj:
    """kube's gang pod template for pod ``index`` (member of gang ``index / size``); the
    infeasible gang's members ask 3 CPU and select the pool."""
    template, _ = templates()
    count = shape.gangs * shape.gang_size
    pod = objects.pod(
        template,
        {"podsPerGroup": shape.gang_size},
        index=index,
        count=count,
        batch_size=shape.signature_run(plain=False),
        scheduler_name=scheduler_name,
    )
    if shape.infeasible:
        spec = pod["spec"]
        spec["nodeSelector"] = {POOL_LABEL: "true"}
        for container in spec["containers"]:
            container["resources"]["requests"]["cpu"] = INFEASIBLE_CPU
    return pod


def plain_pod(shape: Shape, index: int, *, scheduler_name: str) -> Obj:
    """The gang pod template's pod ``index`` with no ``schedulingGroup``: the same
    requests and labels, no group."""
    template, _ = templates()
    pod = objects.pod(
        template,
        {"podsPerGroup": 1},
        index=index,
        count=shape.plain,
        batch_size=shape.signature_run(plain=True),
        scheduler_name=scheduler_name,
    )
    pod["spec"].pop("schedulingGroup", None)
    pod["metadata"]["name"] = f"test-plain-{index}"
    return pod
