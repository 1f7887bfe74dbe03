"""Signature fragments that more than one plugin returns (KEP-5598).

A fragment is ``(signer key, canonical value)``. The keys are kube's signer names, so two
plugins reading the same pod fields (NodeResourcesFit and BalancedAllocation; TaintToleration
and NodeUnschedulable) give the same fragment and the signature keeps it once. The volume
plugins' shared fragment lives with their other shared parts in volume_helpers.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.model.pod import Pod

NODE_NAME_SIGNER: Final = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER: Final = "v1.Pod.Spec.Affinity.NodeAffinity"
HOST_PORTS_SIGNER: Final = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER: Final = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
TOLERATIONS_SIGNER: Final = "v1.Pod.Spec.Tolerations"
IMAGE_NAMES_SIGNER: Final = "v1.Pod.Spec.CanonicalImageNames()"


def tolerations_fragment(pod: Pod) -> Hashable:
    """The pod's tolerations as a sorted set of what matching reads.

    ``tolerationSeconds`` is left out (no scheduling decision reads it); the operator is
    spelled out (empty means Equal) and Exists drops the value (matching ignores it).
    """
    items = set()
    for t in pod.tolerations:
        operator = t.operator or "Equal"
        value = "" if operator == "Exists" else t.value
        items.add((t.key, operator, value, t.effect.value if t.effect is not None else ""))
    return (TOLERATIONS_SIGNER, tuple(sorted(items)))


def resources_fragment(pod: Pod) -> Hashable:
    """Effective requests plus the non-zero cpu/memory used by scoring (zero scalars dropped:
    a zero request changes no filter or score)."""
    r = pod.requests
    scalar = tuple(sorted((name, amount) for name, amount in r.scalar.items() if amount))
    value = (
        r.milli_cpu,
        r.memory,
        r.ephemeral_storage,
        scalar,
        pod.non_zero_milli_cpu,
        pod.non_zero_memory,
    )
    return (RESOURCES_SIGNER, value)
