"""What the four volume plugins share: kube's VolumesSigner, and kube's messages for claims
and objects that are missing.

kube's VolumeBinding, VolumeRestrictions, VolumeZone and NodeVolumeLimits all sign a pod by
the same fragment (``v1.Pod.Spec.Volumes.NonSyntheticSources()``): every volume source but
ConfigMap and Secret, sorted. Ours adds the namespace when the pod uses a claim: a claim name
means a different claim in another namespace, so two such pods must not share a signature.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.model.pod import Pod

VOLUMES_SIGNER: Final = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
"""kube's key for the fragment (every volume plugin returns the same one)."""


def volumes_fragment(pod: Pod) -> Hashable:
    """kube's VolumesSigner: the pod's volume sources but ConfigMaps and Secrets, sorted; with
    the namespace when a claim is among them."""
    sources = tuple(sorted(v.source_fragment for v in pod.volumes if v.source_fragment))
    if any(v.claim_name for v in pod.volumes):
        return (VOLUMES_SIGNER, pod.namespace, sources)
    return (VOLUMES_SIGNER, sources)


def not_found(resource: str, name: str) -> str:
    """The API's NotFound message, which kube's plugins pass on (``persistentvolumeclaim "x"
    not found``)."""
    return f'{resource} "{name}" not found'


def not_owner(pod: Pod, namespace: str, claim: str) -> str:
    """kube's ephemeral.VolumeIsForPod error: the claim was not made for this pod."""
    return (
        f"PVC {namespace}/{claim} was not created for pod {pod.namespace}/{pod.name} "
        "(pod is not owner)"
    )
