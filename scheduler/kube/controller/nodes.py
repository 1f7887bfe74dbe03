"""Node watch events → cache, and the cluster events that may wake unschedulable pods.

* added → ``ClusterState.add_node`` and ``NODE_ADD``;
* changed → ``update_node`` and ``NODE_UPDATE``, but only when something the scheduler
  reads changed (allocatable, labels, taints, unschedulable, images): real nodes update
  their status every few seconds (heartbeats, conditions), and waking every unschedulable
  pod on each heartbeat would spin the queue for nothing (kube's
  ``nodeSchedulingPropertiesChange``);
* deleted → ``remove_node`` (its NodeInfo stays a ghost while pods still name it);
* listed again at a resourceVersion already applied (kopf's LIST after ours, a re-list
  after 410) → nothing, not even a parse.

A node that cannot be parsed is skipped, with one log line naming the node and the field per
problem and ``batch_scheduler_bad_objects_total{kind="Node"}``. A version we held before
leaves the cache too: the change we cannot read may be the taint or the smaller
allocatable that should keep pods away, so the node gets no new pods until it is readable.

Synchronous and await-free, like ``pods``. Neighbours: ``operator`` (kopf), ``sync``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.model.errors import ModelError
from scheduler.model.parse import node_from_raw
from scheduler.queueing.scheduling_queue import ClusterEvent, Pool

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.metrics import Metrics
    from scheduler.model.node import Node

log = logs.get_logger(__name__)

DELETED = "DELETED"


def _name_of(raw: Mapping[str, object]) -> str:
    meta = raw.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def _version(raw: Mapping[str, object]) -> str:
    meta = raw.get("metadata")
    version = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return version if isinstance(version, str) else ""


class NodeEvents:
    """Applies node events to one Scheduler's cache; see the module docstring."""

    def __init__(self, scheduler: Scheduler, *, metrics: Metrics | None = None) -> None:
        self.scheduler = scheduler
        self.metrics = metrics
        self.nodes: dict[str, Node] = {}
        """The version of each node in the cache (its resourceVersion guards the reconcile)."""
        self._bad: dict[str, str] = {}

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """One watch event (``None``: a listed object)."""
        if event_type == DELETED:
            self.delete(_name_of(raw))
            return
        if event_type is None:
            held = self.nodes.get(_name_of(raw))
            if held is not None and held.resource_version == _version(raw) != "":
                return  # listed again (kopf's own LIST, a re-list after 410): already applied
        try:
            node = node_from_raw(raw)
        except ModelError as exc:
            self._unreadable(raw, exc)
            return
        self._bad.pop(node.name, None)
        old = self.nodes.get(node.name)
        self.nodes[node.name] = node
        if old is not None and dataclasses.replace(node, resource_version="") == (
            dataclasses.replace(old, resource_version="")
        ):
            return  # a heartbeat: nothing the scheduler reads changed
        self.scheduler.cluster.add_node(node)
        self._event(ClusterEvent.NODE_ADD if old is None else ClusterEvent.NODE_UPDATE)

    def delete(self, name: str) -> None:
        """The node is gone from the API."""
        self.nodes.pop(name, None)
        self._bad.pop(name, None)
        self.scheduler.cluster.remove_node(name)

    def remove(self, key: str) -> None:
        """``sync``'s name for :meth:`delete` (its appliers share one protocol)."""
        self.delete(key)

    def held(self) -> dict[str, str]:
        """name → resourceVersion of every node in the cache (the Replace compares them)."""
        return {name: node.resource_version for name, node in self.nodes.items()}

    def version(self, key: str) -> str | None:
        """The resourceVersion cached for node ``key`` (None: not cached)."""
        node = self.nodes.get(key)
        return None if node is None else node.resource_version

    def _unreadable(self, raw: Mapping[str, object], exc: ModelError) -> None:
        name = _name_of(raw)
        if name in self.nodes:
            self.delete(name)  # stale now: see the module docstring
        message = str(exc)
        if self._bad.get(name) == message:
            return
        self._bad[name] = message
        if self.metrics is not None:
            self.metrics.bad_objects.labels(kind="Node").inc()
        log.warning("bad_node_skipped", node=name, field=exc.field, error=exc.message)

    def _event(self, event: ClusterEvent) -> None:
        queue = self.scheduler.queue
        if queue.pending()[Pool.UNSCHEDULABLE]:
            queue.on_cluster_event(event)
