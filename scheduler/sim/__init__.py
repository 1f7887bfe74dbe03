"""A Kubernetes API emulator over real HTTP on loopback (aiohttp).

It stands in for kube-apiserver in the demo, the benchmarks and the end-to-end tests:
discovery, CRUD, patch, bindings, paged list and watch with kube's resourceVersion,
selector and 410 semantics, the decoding, validation and Priority admission a scheduler's
inputs meet, for pods, nodes, namespaces, events, leases, PriorityClasses, Services,
Deployments, ReplicaSets, StatefulSets, ReplicationControllers, Jobs, the storage kinds and
PodDisruptionBudgets; minimal workload controllers (Deployment -> ReplicaSet -> pods), a
garbage collector, the PV binder and the disruption controller's budget status run beside
them (:mod:`scheduler.sim.controllers`). kopf, the official client and kubectl talk to it
unchanged; ``tests/cluster/test_conformance.py`` holds it to kube-apiserver's answers. It
imports nothing else from ``scheduler``.

Entry points: :class:`scheduler.sim.server.SimServer` (in-process),
:func:`scheduler.sim.server.run_in_thread`, :class:`scheduler.sim.process.SimProcess`
(own process), :mod:`scheduler.sim.workload` (nodes, pods, bulk creation) and
:mod:`scheduler.sim.cli` (``sim serve``).
"""
