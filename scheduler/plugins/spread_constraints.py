"""PodTopologySpread's constraints as the plugin evaluates them: resolved from the pod's own
``topologySpreadConstraints`` or the profile's defaults, and the node and pod questions
they ask of the snapshot (which nodes count, which domains are eligible, which pods a
constraint counts). The plugin's state, Filter and Score are in ``pod_topology_spread``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.model.taints import Effect
from scheduler.plugins.pod_topology_spread_args import (
    HONOR,
    IGNORE,
    LABEL_HOSTNAME,
    DefaultConstraint,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.model.labels import LabelSelector
    from scheduler.model.node import Node
    from scheduler.model.pod import Pod

BLOCKING_EFFECTS = (Effect.NO_SCHEDULE, Effect.NO_EXECUTE)
"""The taint effects nodeTaintsPolicy Honor leaves a node out for."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """A constraint as the plugin uses it: defaults resolved (minDomains 1, policies)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int
    honor_node_affinity: bool
    honor_node_taints: bool

    def selects(self, labels: Mapping[str, str]) -> bool:
        # A nil selector matches nothing (metav1.LabelSelectorAsSelector(nil)).
        return self.selector is not None and self.selector.matches(labels)


def own_constraints(pod: Pod, action: str) -> tuple[Constraint, ...]:
    """The pod's own constraints with ``whenUnsatisfiable == action`` (matchLabelKeys were
    merged into the selector by the parser)."""
    return tuple(
        Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=c.label_selector,
            min_domains=c.min_domains if c.min_domains is not None else 1,
            honor_node_affinity=c.node_affinity_policy == HONOR,
            honor_node_taints=c.node_taints_policy == HONOR,
        )
        for c in pod.topology_spread_constraints
        if c.when_unsatisfiable == action
    )


def from_default(c: DefaultConstraint, selector: LabelSelector) -> Constraint:
    """A default constraint with the pod's DefaultSelector. kube merges matchLabelKeys into
    the entry's (nil) selector first and then replaces it, so they change nothing."""
    return Constraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        selector=selector,
        min_domains=c.min_domains if c.min_domains is not None else 1,
        honor_node_affinity=(c.node_affinity_policy or HONOR) == HONOR,
        honor_node_taints=(c.node_taints_policy or IGNORE) == HONOR,
    )


def has_all_keys(labels: Mapping[str, str], constraints: tuple[Constraint, ...]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def eligible_domains(
    pod: Pod, constraints: tuple[Constraint, ...], snapshot: Snapshot
) -> tuple[int, ...]:
    """Per constraint, how many topology domains the nodes that count form: nodes with every
    constraint's key that pass the constraint's inclusion policies.

    When every node carries every key and no policy can exclude a node, that is the number
    of values of the key, kept by the snapshot; otherwise the nodes are scanned (no pods).
    """
    num_nodes = snapshot.num_nodes
    if all(snapshot.num_nodes_with_label(c.topology_key) == num_nodes for c in constraints) and (
        not any(inclusion_matters(c, pod) for c in constraints)
    ):
        return tuple(len(snapshot.label_values(c.topology_key)) for c in constraints)
    seen: tuple[set[str], ...] = tuple(set() for _ in constraints)
    for info in snapshot.node_infos:
        node = info.node
        if node is None or not has_all_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if node_included(c, pod, node):
                seen[i].add(node.labels[c.topology_key])
    return tuple(len(values) for values in seen)


def inclusion_matters(c: Constraint, pod: Pod) -> bool:
    """Whether the constraint's inclusion policies can leave any node out for ``pod``."""
    if c.honor_node_taints:
        return True
    return c.honor_node_affinity and bool(
        pod.node_selector or pod.required_node_affinity is not None
    )


def pods_by_node_info(snapshot: Snapshot, c: Constraint, namespace: str) -> Mapping[NodeInfo, int]:
    """How many pods the constraint counts on each NodeInfo that holds any: pods of
    ``namespace`` the selector matches, terminating ones excluded (#87621). A nil or empty
    selector counts no pod (kube's countPodsMatchSelector), although an empty one still
    matches the incoming pod itself in Filter. Ghost NodeInfos (``node`` None) are
    included; callers skip them. Per NodeInfo, so that the node checks after it run once
    per node, not once per pod; a one-label selector's counts are kept by the pod index,
    any other's are counted from the pods it matches. Read only."""
    selector = c.selector
    if selector is None or selector.empty:
        return {}
    index = snapshot.pod_index
    kept = index.counts_on_nodes(namespace, selector)
    if kept is not None:
        return kept
    counts: dict[NodeInfo, int] = {}
    for other, info in index.matching(namespace, selector):
        if not other.deleting:
            counts[info] = counts.get(info, 0) + 1
    return counts


def node_included(c: Constraint, pod: Pod, node: Node) -> bool:
    """Node inclusion policies: nodeAffinityPolicy and nodeTaintsPolicy set to Honor."""
    if c.honor_node_affinity and not matches_required_node_affinity(pod, node):
        return False
    if c.honor_node_taints:
        for taint in node.taints:
            if taint.effect in BLOCKING_EFFECTS and not any(
                t.tolerates(taint) for t in pod.tolerations
            ):
                return False
    return True


def matches_required_node_affinity(pod: Pod, node: Node) -> bool:
    """The pod's nodeSelector and required node affinity (kube's GetRequiredNodeAffinity)."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    required = pod.required_node_affinity
    return required is None or required.matches(labels, node.name)


def pods_per_node(counted: Mapping[NodeInfo, int]) -> dict[str, int]:
    """:func:`pods_by_node_info`'s counts by the name of the node (ghosts left out)."""
    per_node: dict[str, int] = {}
    for info, n in counted.items():
        node = info.node
        if node is not None:
            per_node[node.name] = per_node.get(node.name, 0) + n
    return per_node


def topology_weights(
    constraints: Sequence[Constraint], domains: Sequence[int], scored: int
) -> tuple[float, ...]:
    """Each soft constraint's weight: log(scored nodes + 2) for hostname (the nodes PreScore
    ignores not counted), log(domains among the scored nodes + 2) for other keys."""
    return tuple(
        topology_weight(scored if c.topology_key == LABEL_HOSTNAME else domains[i])
        for i, c in enumerate(constraints)
    )


def topology_weight(size: int) -> float:
    """log(size + 2): counts in smaller topologies are not watered down by bigger ones."""
    return math.log(float(size + 2))
