"""The kinds Kubernetes serves itself, by API group and version: what a snapshot may hold.

A snapshot object's ``apiVersion`` and ``kind`` are checked against this table, so that a
typo (``kind: Pdo``) or a version the API server no longer serves (``extensions/v1beta1``
Deployments) is an error naming the document rather than an object silently counted as
ignored. A group that is not one of Kubernetes' own (a CustomResourceDefinition's,
``serving.knative.dev``) is a custom resource: it is not checked, and cannot affect a
decision.

The table is kube-apiserver v1.37.2's built-in API (``kubectl api-resources`` on a cluster
without CRDs or aggregated APIs), with the alpha and beta versions it can serve behind
feature gates, and ``extensions``, a group that no longer serves anything. Subresources
(``Scale``, ``Eviction`` of ``policy/v1``, ``TokenRequest``) are not objects a snapshot
holds and are not listed.
"""

from __future__ import annotations

import difflib

__all__ = ["BUILT_IN_GROUPS", "KINDS", "kind_problem"]

_SERVED: dict[str, str] = {
    "v1": (
        "Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node "
        "PersistentVolume PersistentVolumeClaim Pod PodTemplate ReplicationController "
        "ResourceQuota Secret Service ServiceAccount"
    ),
    "admissionregistration.k8s.io/v1": (
        "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding "
        "MutatingWebhookConfiguration ValidatingAdmissionPolicy "
        "ValidatingAdmissionPolicyBinding ValidatingWebhookConfiguration"
    ),
    "admissionregistration.k8s.io/v1beta1": (
        "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding ValidatingAdmissionPolicy "
        "ValidatingAdmissionPolicyBinding"
    ),
    "admissionregistration.k8s.io/v1alpha1": (
        "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding"
    ),
    "apiextensions.k8s.io/v1": "CustomResourceDefinition",
    "apiregistration.k8s.io/v1": "APIService",
    "apps/v1": "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet",
    "authentication.k8s.io/v1": "SelfSubjectReview TokenReview",
    "authentication.k8s.io/v1beta1": "SelfSubjectReview",
    "authorization.k8s.io/v1": (
        "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview "
        "SubjectAccessReview"
    ),
    "autoscaling/v1": "HorizontalPodAutoscaler",
    "autoscaling/v2": "HorizontalPodAutoscaler",
    "batch/v1": "CronJob Job",
    "certificates.k8s.io/v1": "CertificateSigningRequest ClusterTrustBundle PodCertificateRequest",
    "certificates.k8s.io/v1beta1": "ClusterTrustBundle PodCertificateRequest",
    "certificates.k8s.io/v1alpha1": "ClusterTrustBundle",
    "coordination.k8s.io/v1": "Lease",
    "coordination.k8s.io/v1beta1": "LeaseCandidate",
    "coordination.k8s.io/v1alpha2": "LeaseCandidate",
    "discovery.k8s.io/v1": "EndpointSlice",
    "events.k8s.io/v1": "Event",
    "flowcontrol.apiserver.k8s.io/v1": "FlowSchema PriorityLevelConfiguration",
    "internal.apiserver.k8s.io/v1alpha1": "StorageVersion",
    "lifecycle.k8s.io/v1alpha1": "Eviction EvictionRequest",
    "networking.k8s.io/v1": "IPAddress Ingress IngressClass NetworkPolicy ServiceCIDR",
    "networking.k8s.io/v1beta1": "IPAddress ServiceCIDR",
    "node.k8s.io/v1": "RuntimeClass",
    "policy/v1": "PodDisruptionBudget",
    "rbac.authorization.k8s.io/v1": "ClusterRole ClusterRoleBinding Role RoleBinding",
    "resource.k8s.io/v1": (
        "DeviceClass DeviceTaintRule ResourceClaim ResourceClaimTemplate ResourceSlice"
    ),
    "resource.k8s.io/v1beta2": (
        "DeviceClass DeviceTaintRule ResourceClaim ResourceClaimTemplate ResourceSlice"
    ),
    "resource.k8s.io/v1beta1": "DeviceClass ResourceClaim ResourceClaimTemplate ResourceSlice",
    "resource.k8s.io/v1alpha3": "DeviceTaintRule ResourcePoolStatusRequest",
    "scheduling.k8s.io/v1": "PriorityClass",
    "scheduling.k8s.io/v1beta1": "PodGroup Workload",
    "scheduling.k8s.io/v1alpha3": "CompositePodGroup PodGroup Workload",
    "storage.k8s.io/v1": (
        "CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment VolumeAttributesClass"
    ),
    "storage.k8s.io/v1beta1": "VolumeAttributesClass",
    "storagemigration.k8s.io/v1": "StorageVersionMigration",
    "storagemigration.k8s.io/v1beta1": "StorageVersionMigration",
}
"""apiVersion → the kinds kube-apiserver v1.37.2 serves there (its pkg/registry/*/rest
storage providers; the apiextensions and aggregator servers), space-separated."""


KINDS: dict[str, tuple[str, ...]] = {}
"""Kind → the apiVersions that serve it."""
for _version, _kinds in _SERVED.items():
    for _kind in _kinds.split():
        KINDS[_kind] = (*KINDS.get(_kind, ()), _version)

BUILT_IN_GROUPS = frozenset(v.rpartition("/")[0] for v in _SERVED) | {"extensions"}
"""Kubernetes' own API groups ("" is the core group); any other is a custom resource's."""


def kind_problem(api_version: str | None, kind: str) -> str | None:
    """Why (``apiVersion``, ``kind``) is not an object Kubernetes serves, or None when it is
    one (or a custom resource's, or has no apiVersion and a kind Kubernetes knows)."""
    versions = KINDS.get(kind)
    if api_version is None:
        return None if versions else _unknown(kind)
    group = api_version.rpartition("/")[0]
    if group not in BUILT_IN_GROUPS:
        return None
    if versions is None:
        return _unknown(kind)
    if api_version in versions:
        return None
    return f"Kubernetes does not serve {kind} as {api_version}; it serves {', '.join(versions)}"


def _unknown(kind: str) -> str:
    close = difflib.get_close_matches(kind, KINDS, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"{kind} is not a kind Kubernetes serves{hint}"
