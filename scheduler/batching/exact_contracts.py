"""Which plugins the exact batch (batching/exact.py) can serve, and why.

Its argument (docs/architecture.md, "The exact batch's argument") needs every Filter and
Score plugin of a profile to be one of:

- a **domain plugin** (PodTopologySpread, InterPodAffinity) that keeps its counts live
  (``ExactDomainPlugin``);
- **node-local**: its Filter and Score read only the pod and the node asked about, and its
  Score is not normalized over the nodes (the in-tree ones below, or an out-of-tree plugin
  that says so: ``NodeLocalPlugin``);
- a **statically normalized** score (TaintToleration, NodeAffinity), whose raw score reads
  only the Node object, fixed while no node changes.

A plugin that is none of these keeps the profile off the exact path; ``exact_blockers``
names it, and the Signer gives it as the reason such pods are not batched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.framework.interfaces import ExactDomainPlugin, NodeLocalPlugin
from scheduler.plugins import names

if TYPE_CHECKING:
    from scheduler.framework.interfaces import Plugin
    from scheduler.framework.profile import Profile

NODE_LOCAL_FILTERS = frozenset(
    {
        names.NODE_NAME,
        names.NODE_UNSCHEDULABLE,
        names.TAINT_TOLERATION,
        names.NODE_AFFINITY,
        names.NODE_PORTS,
        names.NODE_RESOURCES_FIT,
        names.VOLUME_RESTRICTIONS,
        names.NODE_VOLUME_LIMITS,
        names.VOLUME_BINDING,
        names.VOLUME_ZONE,
        names.DYNAMIC_RESOURCES,
    }
)
"""Filters that read only the pod and the node asked about (exact pods have no PVCs unbound).
DynamicResources reads the node's devices too: it signs only pods whose claims come from
templates, and serves them (``ExactPodStatePlugin``) only while every slice is on one node,
telling the exact batch which nodes' devices changed."""

NODE_LOCAL_SCORES = frozenset(
    {
        names.NODE_RESOURCES_FIT,
        names.NODE_RESOURCES_BALANCED_ALLOCATION,
        names.IMAGE_LOCALITY,
        names.VOLUME_BINDING,
    }
)
"""Scores of one node that are not normalized (ImageLocality reads node counts: static)."""

STATIC_NORMALIZED_SCORES = frozenset(
    {names.TAINT_TOLERATION, names.NODE_AFFINITY, names.DYNAMIC_RESOURCES}
)
"""Normalized scores whose raw reads only the Node object: fixed while no node changes
(DynamicResources scores only prioritized lists, whose pods it does not sign)."""

DOMAIN_PLUGINS = frozenset({names.POD_TOPOLOGY_SPREAD, names.INTER_POD_AFFINITY})


def _node_local(plugin: Plugin, in_tree: frozenset[str]) -> bool:
    return plugin.name in in_tree or (
        isinstance(plugin, NodeLocalPlugin) and plugin.exact_node_local()
    )


def exact_blockers(profile: Profile) -> list[str]:
    """The Filter and Score plugins of ``profile`` without a contract above, in order;
    empty when the exact batch can serve the profile."""
    blockers: list[str] = []
    for plugin in profile.filter_plugins:
        if plugin.name in DOMAIN_PLUGINS:
            if not isinstance(plugin, ExactDomainPlugin):
                blockers.append(plugin.name)
        elif not _node_local(plugin, NODE_LOCAL_FILTERS):
            blockers.append(plugin.name)
    for weighted in profile.score_plugins:
        scorer = weighted.plugin
        if scorer.name in DOMAIN_PLUGINS:
            ok = isinstance(scorer, ExactDomainPlugin)
        elif weighted.normalizer is None:
            ok = _node_local(scorer, NODE_LOCAL_SCORES)
        else:
            ok = scorer.name in STATIC_NORMALIZED_SCORES
        if not ok and scorer.name not in blockers:
            blockers.append(scorer.name)
    return blockers
