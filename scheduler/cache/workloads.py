"""Workloads: the Services and pod controllers that default topology spreading reads.

kube's PodTopologySpread lists Services, ReplicationControllers, ReplicaSets and
StatefulSets through informers; :meth:`Workloads.default_selector` is its
``helper.DefaultSelector``: the selectors of every Service of the pod's namespace that
selects the pod, plus the selector of the RC, ReplicaSet or StatefulSet that controls it
(by owner reference, not by matching labels). Kept per namespace, so a pod's lookup costs
the Services of its namespace, not of the cluster.

Neighbours: ``model.workloads`` (the records), ``cache.snapshot`` (lends this to plugins),
``plugins.pod_topology_spread`` (the reader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.parse_selectors import canonical

if TYPE_CHECKING:
    from scheduler.model.pod import Pod
    from scheduler.model.workloads import Controller, ControllerKind, Service

__all__ = ["Workloads"]

_EVERYTHING = LabelSelector()


class Workloads:
    """Services and controllers by namespace; see the module docstring."""

    __slots__ = ("_controllers", "_services", "generation")

    def __init__(self) -> None:
        self._services: dict[str, dict[str, Service]] = {}
        self._controllers: dict[tuple[ControllerKind, str, str], Controller] = {}
        self.generation = 0
        """Moves on with every write: what was derived from an older one (a signature)
        may be stale."""

    # -- write side (watch handlers) ------------------------------------------------------

    def set_service(self, service: Service) -> None:
        self.generation += 1
        self._services.setdefault(service.namespace, {})[service.name] = service

    def remove_service(self, namespace: str, name: str) -> None:
        self.generation += 1
        services = self._services.get(namespace)
        if services is not None:
            services.pop(name, None)
            if not services:
                del self._services[namespace]

    def set_controller(self, controller: Controller) -> None:
        self.generation += 1
        self._controllers[(controller.kind, controller.namespace, controller.name)] = controller

    def remove_controller(self, kind: ControllerKind, namespace: str, name: str) -> None:
        self.generation += 1
        self._controllers.pop((kind, namespace, name), None)

    # -- read side ------------------------------------------------------------------------

    def service(self, namespace: str, name: str) -> Service | None:
        return self._services.get(namespace, {}).get(name)

    def controller(self, kind: ControllerKind, namespace: str, name: str) -> Controller | None:
        return self._controllers.get((kind, namespace, name))

    def default_selector(self, pod: Pod) -> LabelSelector:
        """kube's DefaultSelector for ``pod``; empty when nothing selects it (then no
        default constraint applies)."""
        requirements: list[Requirement] = []
        for service in self._services.get(pod.namespace, {}).values():
            selector = service.selector
            if selector is None:  # a nil selector selects nothing, not everything
                continue
            if all(pod.labels.get(k) == v for k, v in selector.items()):
                requirements.extend(Requirement(k, Operator.IN, (v,)) for k, v in selector.items())
        ref = pod.controller_ref
        kind = None if ref is None else ref.controller_kind
        if ref is not None and kind is not None:
            controller = self._controllers.get((kind, pod.namespace, ref.name))
            if controller is not None:
                requirements.extend(controller.selector.requirements)
        if not requirements:
            return _EVERYTHING
        return LabelSelector(canonical(requirements))
