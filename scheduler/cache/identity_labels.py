"""IdentityLabels: which pod labels some pod (anti-)affinity term reads.

Why: a StatefulSet's pods carry labels of their own (``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index``; an Indexed Job's ``batch.kubernetes.io/job-completion-index``).
kube's InterPodAffinity signs every label of a pod (``SignPod``: existing pods' terms read
them), so no two replicas share a signature and each takes a full pass. A label, however,
is read only through a term whose label selector names its key (``matchLabels`` and
``matchExpressions``; ``matchLabelKeys`` are merged into the selector by the API server, and
so by our parser). While no term of a pod the scheduler knows (assigned: the cache's
``PodIndex.add``; pending: ``Scheduler.enqueue``) names an identity key, no Filter or Score
can tell two pods apart by it, and InterPodAffinity leaves it out of the signature
(:meth:`IdentityLabels.signed`). The first term that names one makes it read for good
(never forgotten: a deleted pod's term costs batching, never a decision); ``generation``
moves, and the scheduler signs its queued pods again (``Scheduler.resign_identity``), which
gives the replicas distinct signatures and so ends their batch state.

For kube's batch (hint and rescore) only these keys are left out, the rest signed as kube
signs them: a label every replica shares (``app``,
``controller-revision-hash``) splits no signature, and the other plugins sign what a
selector makes of the pod (PodTopologySpread: the resolved selectors and whether each
selects the pod), never the bare labels.

The exact batch (batching/exact.py) goes further: it decides as a full pass does, so a
pod it serves is signed with only the labels some known term reads
(:meth:`IdentityLabels.read_only`), whatever they are. kube's scheduler_perf gives every pod
a label of its own (``signature``) that no term reads; its spread and affinity pods then
share an exact signature, and are placed where a full pass of each would place them. Any
key a term comes to read moves ``generation`` as an identity key does; the exact batch then
drops its states (one built from a pod with the key no longer stands for the pods of its
signature without it), and a pod out of the queue then (at Permit, binding) is signed again
before its next decision (``QueuedPodInfo.signed_generation``).

Neighbours: cache.pod_index (observes every cached pod), plugins.inter_pod_affinity (signs
with :meth:`IdentityLabels.signed` and :meth:`IdentityLabels.read_only`),
batching.signature (the memo's generation), cycle.schedule_one (observes queued pods,
re-signs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from scheduler.model.affinity import PodAffinityTerm
    from scheduler.model.pod import Pod

IDENTITY_LABEL_KEYS = frozenset(
    {
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "batch.kubernetes.io/job-completion-index",
    }
)
"""Labels the controllers set to a value of each pod's own."""


class IdentityLabels:
    """The label keys some known term reads; see the module docstring."""

    __slots__ = ("generation", "read")

    def __init__(self) -> None:
        self.read: frozenset[str] = frozenset()
        """Label keys some term of a known pod names (identity keys among them)."""
        self.generation = 0
        """Moves whenever ``read`` grows (signatures made before are stale)."""

    def observe(self, pod: Pod) -> frozenset[str]:
        """Record the label keys ``pod``'s terms name; returns those read only now."""
        if not (pod.has_pod_affinity or pod.has_pod_anti_affinity):
            return frozenset()
        named = {
            requirement.key
            for term in _terms(pod)
            if term.label_selector is not None
            for requirement in term.label_selector.requirements
        }
        new = frozenset(named - self.read)
        if new:
            self.read |= new
            self.generation += 1
        return new

    def signed(self, labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """``labels`` as InterPodAffinity signs them for kube's batch: sorted, without the
        identity labels no term reads."""
        unread = IDENTITY_LABEL_KEYS - self.read
        return tuple(sorted(item for item in labels.items() if item[0] not in unread))

    def read_only(self, labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """``labels`` as InterPodAffinity signs them for the exact batch: sorted, only the
        keys some known term reads."""
        read = self.read
        return tuple(sorted(item for item in labels.items() if item[0] in read))


def _terms(pod: Pod) -> Iterator[PodAffinityTerm]:
    yield from pod.required_pod_affinity
    yield from pod.required_pod_anti_affinity
    for weighted in pod.preferred_pod_affinity:
        yield weighted.term
    for weighted in pod.preferred_pod_anti_affinity:
        yield weighted.term
