"""PodTopologySpread's counts kept live for the exact batch (batching/exact.py).

A full pass recounts, in every cycle, the pods each constraint selects per topology domain
(PreFilter for DoNotSchedule, PreScore for ScheduleAnyway). The exact batch counts once
and then moves the counts by one pod at a time, by the same rules:

- hard constraints: the PreFilter state itself, through the plugin's AddPod/RemovePod
  (``_update``), as preemption's dry runs already do;
- soft constraints: ``SoftCounts`` below, the counts PreScore would find in every domain
  (not only the domains of the scored nodes: a scored node reads only its own domain), and
  the per-node counts of hostname constraints.

PreScore for a scored set then needs only which domains the set covers and how many nodes
it has (the weights), which the exact batch knows per group of equal nodes
(``pre_score_state``). ``node_key`` says what Filter and Score read of one node: the
domain's identity for zone-like keys (its count is looked up per group), the count itself
for hostname keys (one node per domain, checked by ``unique_hostnames``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.plugins.pod_topology_spread_args import LABEL_HOSTNAME
from scheduler.plugins.spread_constraints import (
    has_all_keys,
    inclusion_matters,
    node_included,
    pods_by_node_info,
    pods_per_node,
)

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.model.pod import Pod
    from scheduler.plugins.spread_constraints import Constraint


@dataclass(slots=True)
class SoftCounts:
    """What PreScore counts for one pod's soft constraints, over every domain."""

    constraints: tuple[Constraint, ...]
    require_all: bool
    """Nodes need every key (own constraints, or List defaults): kube's requireAllTopologies."""
    counts: tuple[dict[str, int], ...]
    """Per non-hostname constraint: matching pods by topology value ("" for a missing key
    under System defaults); empty for hostname constraints."""
    host_counts: tuple[dict[str, int], ...]
    """Per hostname constraint: matching pods by node name; empty for other keys."""


def count_soft(
    pod: Pod, constraints: tuple[Constraint, ...], require_all: bool, snapshot: Snapshot
) -> SoftCounts:
    """Count as PreScore does, in every domain."""
    counts: tuple[dict[str, int], ...] = tuple({} for _ in constraints)
    host_counts: list[dict[str, int]] = []
    by_selector: dict[int, Mapping[NodeInfo, int]] = {}  # the System defaults share a selector
    for i, c in enumerate(constraints):
        per_info = by_selector.get(id(c.selector))
        if per_info is None:
            per_info = by_selector[id(c.selector)] = pods_by_node_info(snapshot, c, pod.namespace)
        if c.topology_key == LABEL_HOSTNAME:
            host_counts.append(pods_per_node(per_info))
            continue
        host_counts.append({})
        counted = counts[i]
        check = inclusion_matters(c, pod)
        for info, n in per_info.items():
            node = info.node
            if node is None or (require_all and not has_all_keys(node.labels, constraints)):
                continue
            if check and not node_included(c, pod, node):
                continue
            value = node.labels.get(c.topology_key, "")
            counted[value] = counted.get(value, 0) + n
    return SoftCounts(constraints, require_all, counts, tuple(host_counts))


def update_soft(soft: SoftCounts, pod: Pod, other: Pod, info: NodeInfo, delta: int) -> None:
    """Count ``other`` on (``delta`` 1) or off (-1) ``info``, as :func:`count_soft` would."""
    node = info.node
    if node is None or other.namespace != pod.namespace or other.deleting:
        return
    constraints = soft.constraints
    for i, c in enumerate(constraints):
        selector = c.selector
        if selector is None or selector.empty or not selector.matches(other.labels):
            continue
        if c.topology_key == LABEL_HOSTNAME:
            _move(soft.host_counts[i], node.name, delta)
            continue
        if soft.require_all and not has_all_keys(node.labels, constraints):
            continue
        if inclusion_matters(c, pod) and not node_included(c, pod, node):
            continue
        _move(soft.counts[i], node.labels.get(c.topology_key, ""), delta)


def _move(counts: dict[str, int], key: str, delta: int) -> None:
    left = counts.get(key, 0) + delta
    if left > 0:
        counts[key] = left
    else:
        counts.pop(key, None)


def soft_node_key(soft: SoftCounts, labels: Mapping[str, str], name: str) -> Hashable:
    """What Score reads of a node for the soft constraints (see the module docstring)."""
    constraints = soft.constraints
    if soft.require_all and not has_all_keys(labels, constraints):
        return "ignored"
    parts: list[object] = []
    for i, c in enumerate(constraints):
        value = labels.get(c.topology_key)
        if value is None:
            parts.append(None)
        elif c.topology_key == LABEL_HOSTNAME:
            parts.append(soft.host_counts[i].get(name, 0))
        else:
            parts.append(value)
    return tuple(parts)


def hard_node_key(
    checks: Sequence[tuple[str, Mapping[str, int], int]], labels: Mapping[str, str]
) -> Hashable:
    """What Filter reads of a node for the hard constraints: per check, the domain (or its
    count, for hostname), None where the node lacks the key."""
    parts: list[object] = []
    for key, counts, _ in checks:
        value = labels.get(key)
        if value is None:
            parts.append(None)
        elif key == LABEL_HOSTNAME:
            parts.append(counts.get(value, 0))
        else:
            parts.append(value)
    return tuple(parts)


def unique_hostnames(snapshot: Snapshot) -> bool:
    """Every node's hostname label is its own (a count keyed by it moves one node only)."""
    values = snapshot.label_values(LABEL_HOSTNAME)
    return len(values) == snapshot.num_nodes_with_label(LABEL_HOSTNAME)


def scored_domains(
    soft: SoftCounts, nodes: Sequence[NodeInfo], sizes: Sequence[int]
) -> tuple[frozenset[str], int, list[int]]:
    """What PreScore reads of a scored set of ``sum(sizes)`` nodes, ``sizes[i]`` of them
    equal to ``nodes[i]``: the nodes it ignores (a key missing where all are required), how
    many it scores, and per constraint the number of domains they cover (hostname: none
    counted, its weight reads the scored nodes)."""
    constraints = soft.constraints
    ignored: set[str] = set()
    scored = 0
    domains: tuple[set[str], ...] = tuple(set() for _ in constraints)
    for info, size in zip(nodes, sizes, strict=True):
        node = info.node
        if node is None:
            continue
        if soft.require_all and not has_all_keys(node.labels, constraints):
            ignored.add(node.name)
            continue
        scored += size
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:
                domains[i].add(node.labels.get(c.topology_key, ""))
    return frozenset(ignored), scored, [len(values) for values in domains]
