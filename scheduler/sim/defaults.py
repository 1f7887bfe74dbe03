"""Server-side defaulting and the little validation a scheduler's inputs depend on.

Only what kube-apiserver does and a scheduler reads: pod ``schedulerName``,
``priority``, ``phase`` and QoS class; node ``allocatable`` from ``capacity``;
namespace phase and finalizer; ``replicas`` and strategies of Deployments, ReplicaSets,
StatefulSets and ReplicationControllers (whose selector and labels default to the
template's labels); Job ``parallelism``/``completions``/``backoffLimit``, and a Job's
generated selector (from its uid, :func:`on_uid`); Services in :mod:`scheduler.sim.services`.
Validation rejects what the apiserver would (names, pods without containers, a workload
selector that is missing, empty or does not select its template, a replicated template
whose restartPolicy is not Always, a changed apps/v1 selector, a Job template whose
restartPolicy is not Never/OnFailure) with its 422 wording, so builder bugs surface here too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scheduler.sim import decoding, disruption, errors, services, volumes
from scheduler.sim.discovery import (
    DEPLOYMENTS,
    EVENTS,
    EVENTS_V1,
    JOBS,
    NAMESPACES,
    NODES,
    POD_DISRUPTION_BUDGETS,
    PODS,
    PRIORITY_CLASSES,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFUL_SETS,
    ResourceType,
)
from scheduler.sim.selectors import label_selector_matches

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)


def validate_name(rt: ResourceType, obj: dict[str, Any]) -> None:
    """422 unless metadata.name (or generateName) is a DNS subdomain, as kube requires."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or ""
    if not name and not meta.get("generateName"):
        raise errors.invalid(
            rt.kind, name, "metadata.name: Required value: name or generateName is required"
        )
    if name and (len(name) > 253 or not _DNS_SUBDOMAIN.match(name)):
        raise errors.invalid(rt.kind, name, f'metadata.name: Invalid value: "{name}": {_DNS_MSG}')


def _qos(spec: dict[str, Any]) -> str:
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    requests_any = limits_all = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests_any = requests_any or bool(req) or bool(lim)
        for r in ("cpu", "memory"):
            if r not in lim or req.get(r, lim[r]) != lim[r]:
                guaranteed = False
        limits_all = True
    if not requests_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed and limits_all else "Burstable"


def nonnegative_resources(rt: ResourceType, pod: dict[str, Any]) -> None:
    """422 for a negative request or limit of a new pod, as kube's ValidateNonnegativeQuantity
    (the decoder has already refused what does not parse, :mod:`scheduler.sim.decoding`)."""
    if rt is not PODS:
        return
    spec = pod.get("spec") or {}
    for key in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(key) or []):
            resources = (container.get("resources") if isinstance(container, dict) else None) or {}
            for kind in ("requests", "limits"):
                values = resources.get(kind) if isinstance(resources, dict) else None
                for resource, value in (values or {}).items() if isinstance(values, dict) else ():
                    try:
                        negative = decoding.parse_quantity(str(value).strip()) < 0
                    except decoding.QuantityError:
                        continue  # the decoder's business
                    if negative:
                        raise errors.invalid(
                            "Pod",
                            pod["metadata"].get("name", ""),
                            f"spec.{key}[{i}].resources.{kind}[{resource}]: Invalid value: "
                            f'"{value}": must be greater than or equal to 0',
                        )


def on_create(rt: ResourceType, obj: dict[str, Any]) -> None:
    """Default and validate a new object in place (the caller owns it)."""
    validate_name(rt, obj)
    if rt is PODS:
        spec = obj.setdefault("spec", {})
        if not spec.get("containers"):
            raise errors.invalid(
                "Pod", obj["metadata"].get("name", ""), "spec.containers: Required value"
            )
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("securityContext", {})
        status = obj.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status.setdefault("qosClass", _qos(spec))
    elif rt is NODES:
        status = obj.setdefault("status", {})
        if "capacity" in status and "allocatable" not in status:
            status["allocatable"] = dict(status["capacity"])
        obj.setdefault("spec", {})
    elif rt is NAMESPACES:
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj.setdefault("status", {"phase": "Active"})
        labels = obj["metadata"].setdefault("labels", {})
        labels.setdefault("kubernetes.io/metadata.name", obj["metadata"].get("name", ""))
    elif rt in (EVENTS, EVENTS_V1):
        obj.setdefault("involvedObject", {})
        obj.setdefault("reportingComponent", "")
        obj.setdefault("reportingInstance", "")
    elif rt is PRIORITY_CLASSES:
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
    elif rt in (DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS, REPLICATION_CONTROLLERS):
        _workload(rt, obj)
    elif rt is SERVICES:
        services.default_and_validate(obj)
    elif rt is JOBS:
        _job(obj)
    elif rt is POD_DISRUPTION_BUDGETS:
        disruption.validate(obj, creating=True)
    else:
        volumes.set_defaults(rt, obj)


def _template(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The workload's pod template (422 without containers); its metadata is defaulted."""
    template = obj.setdefault("spec", {}).get("template")
    if not isinstance(template, dict) or not (template.get("spec") or {}).get("containers"):
        raise errors.invalid(
            rt.kind,
            obj["metadata"].get("name", ""),
            "spec.template.spec.containers: Required value",
            group=rt.group,
        )
    template.setdefault("metadata", {})
    return template


def _selector(rt: ResourceType, obj: dict[str, Any], template: dict[str, Any]) -> None:
    """kube's selector checks for a replicated workload: required, not empty, selecting the
    template's labels, and its template's restartPolicy ``Always`` (the default)."""
    name, spec = obj["metadata"].get("name", ""), obj["spec"]
    labels = template["metadata"].get("labels") or {}
    selector = spec.get("selector")
    if rt is REPLICATION_CONTROLLERS:  # a plain label map, defaulted from the template
        if not selector and labels:
            spec["selector"] = selector = dict(labels)
        if not obj["metadata"].get("labels") and labels:
            obj["metadata"]["labels"] = dict(labels)
        if not isinstance(selector, dict) or not selector:
            raise errors.invalid(rt.kind, name, "spec.selector: Required value")
        selector = {"matchLabels": selector}
    elif selector is None:
        raise errors.invalid(rt.kind, name, "spec.selector: Required value", group=rt.group)
    elif not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        shown = json.dumps(selector, sort_keys=True, separators=(",", ":"))
        what = "statefulset" if rt is STATEFUL_SETS else "deployment"
        raise errors.invalid(
            rt.kind,
            name,
            f"spec.selector: Invalid value: {shown}: empty selector is invalid for {what}",
            group=rt.group,
        )
    if not label_selector_matches(selector, labels):
        shown = json.dumps(labels, sort_keys=True, separators=(",", ":"))
        raise errors.invalid(
            rt.kind,
            name,
            f"spec.template.metadata.labels: Invalid value: {shown}: "
            "`selector` does not match template `labels`",
            group=rt.group,
        )
    policy = (template.get("spec") or {}).get("restartPolicy") or "Always"
    if policy != "Always":
        raise errors.invalid(
            rt.kind,
            name,
            f'spec.template.spec.restartPolicy: Unsupported value: "{policy}": '
            'supported values: "Always"',
            group=rt.group,
        )
    replicas = spec.setdefault("replicas", 1)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid(
            rt.kind,
            name,
            f"spec.replicas: Invalid value: {json.dumps(replicas)}: "
            "must be greater than or equal to 0",
            group=rt.group,
        )


def _workload(rt: ResourceType, obj: dict[str, Any]) -> None:
    """Default and validate a Deployment, ReplicaSet, StatefulSet or ReplicationController."""
    template = _template(rt, obj)
    _selector(rt, obj, template)
    spec = obj["spec"]
    if rt is DEPLOYMENTS:
        spec.setdefault(
            "strategy",
            {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
            },
        )
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif rt is STATEFUL_SETS:
        spec.setdefault("podManagementPolicy", "OrderedReady")
        strategy = spec.setdefault("updateStrategy", {})
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            strategy.setdefault("rollingUpdate", {})
        if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
            strategy["rollingUpdate"].setdefault("partition", 0)
            strategy["rollingUpdate"].setdefault("maxUnavailable", 1)  # MaxUnavailableStatefulSet
        retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        retention.setdefault("whenDeleted", "Retain")
        retention.setdefault("whenScaled", "Retain")
        spec.setdefault("revisionHistoryLimit", 10)
    # the status counts Go's types do not mark omitempty are there from the start
    status = obj.setdefault("status", {})
    if rt is not DEPLOYMENTS and isinstance(status, dict):
        status.setdefault("replicas", 0)
        if rt is STATEFUL_SETS:
            status.setdefault("availableReplicas", 0)


def on_update(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> None:
    """Defaulting and validation of an update (in place): a Service keeps what was allocated
    to it; a workload is checked as on create, and an apps/v1 selector may not change."""
    if rt is SERVICES:
        services.keep_allocated(old, new)
    elif rt is POD_DISRUPTION_BUDGETS:
        disruption.validate(new, creating=False)
    elif rt in (DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS, REPLICATION_CONTROLLERS):
        _workload(rt, new)
        before = (old.get("spec") or {}).get("selector")
        if rt.group == "apps" and new["spec"].get("selector") != before:
            shown = json.dumps(new["spec"].get("selector"), sort_keys=True, separators=(",", ":"))
            raise errors.invalid(
                rt.kind,
                new["metadata"].get("name", ""),
                f"spec.selector: Invalid value: {shown}: field is immutable",
                group=rt.group,
            )


def _job(obj: dict[str, Any]) -> None:
    template = _template(JOBS, obj)
    spec = obj["spec"]
    policy = (template.get("spec") or {}).get("restartPolicy")
    if policy not in ("Never", "OnFailure"):
        raise errors.invalid(
            "Job",
            obj["metadata"].get("name", ""),
            f'spec.template.spec.restartPolicy: Unsupported value: "{policy or "Always"}": '
            'supported values: "OnFailure", "Never"',
        )
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("manualSelector", False)
    obj.setdefault("status", {})


JOB_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")


def on_uid(rt: ResourceType, obj: dict[str, Any]) -> None:
    """Defaults that need the new object's uid: a Job's selector and template labels.

    kube generates them unless ``manualSelector`` is set: the selector matches the
    ``batch.kubernetes.io/controller-uid`` label, which the template then carries
    together with the job-name labels (both the old and the ``batch.kubernetes.io/`` forms).
    """
    if rt is not JOBS or (obj.get("spec") or {}).get("manualSelector"):
        return
    meta, spec = obj["metadata"], obj["spec"]
    spec["selector"] = {"matchLabels": {JOB_UID_LABELS[0]: meta["uid"]}}
    labels = spec["template"]["metadata"].setdefault("labels", {})
    for key in JOB_UID_LABELS:
        labels[key] = meta["uid"]
    for key in JOB_NAME_LABELS:
        labels[key] = meta["name"]
