"""Parse a v1 Pod dict into a ``model.pod.Pod``, computing once what plugins read per node.

Effective requests come from ``parse_requests`` (kube's init/sidecar/overhead rule and
non-zero defaults); here: identity, host ports (containers and sidecars, 0.0.0.0/TCP
defaults), images (``:latest`` when untagged, as ImageLocality), tolerations, node and
pod (anti-)affinity with namespaces resolved and ``matchLabelKeys``/``mismatchLabelKeys``
merged as kube-apiserver does, and topology spread constraints with their defaults.

Neighbours: ``parse_common`` (readers, image names), ``parse_requests``,
``parse_selectors`` (label selectors, node affinity), ``parse_node`` (taint effects).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from fractions import Fraction

from scheduler.model.affinity import (
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from scheduler.model.keys import NodeName, Uid, pod_key
from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.parse_common import RawMap, Reader, normalize_image, resources_from_list
from scheduler.model.parse_dra_claims import pod_resource_claim_statuses, pod_resource_claims
from scheduler.model.parse_node import effect_from_raw
from scheduler.model.parse_requests import container_from_raw, pod_requests
from scheduler.model.parse_selectors import (
    canonical,
    label_selector_from_raw,
    node_selector_from_raw,
    preferred_scheduling_term_from_raw,
)
from scheduler.model.parse_volumes import pod_volumes_from_raw
from scheduler.model.parse_workloads import controller_ref_from_raw
from scheduler.model.pod import PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER, HostPort, Pod
from scheduler.model.quantity import int_value, milli_value
from scheduler.model.resources import CPU, MEMORY
from scheduler.model.taints import Toleration

__all__ = ["pod_from_raw"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
"""What the API server puts in an unset ``spec.schedulerName``."""


# -- ports, tolerations -----------------------------------------------------------------------


def _host_ports(r: Reader, containers: Iterable[tuple[str, RawMap]]) -> tuple[HostPort, ...]:
    out: list[HostPort] = []
    for field, raw in containers:
        for path, port in r.objects(raw.get("ports"), f"{field}.ports"):
            number = r.integer(port.get("hostPort"), f"{path}.hostPort")
            if number <= 0:
                continue
            out.append(
                HostPort(
                    host_ip=r.string(port.get("hostIP"), f"{path}.hostIP") or "0.0.0.0",
                    protocol=r.string(port.get("protocol"), f"{path}.protocol") or "TCP",
                    port=number,
                )
            )
    return tuple(out)


def _toleration(r: Reader, raw: RawMap, field: str) -> Toleration:
    key = r.string(raw.get("key"), f"{field}.key")
    operator = r.string(raw.get("operator"), f"{field}.operator") or "Equal"
    value = r.string(raw.get("value"), f"{field}.value")
    if operator not in ("Equal", "Exists"):
        raise r.error(f"{field}.operator", f"unknown operator {operator!r} (want Equal or Exists)")
    if operator == "Exists" and value:
        raise r.error(f"{field}.value", "must be empty when operator is Exists")
    if not key and operator != "Exists":
        raise r.error(f"{field}.operator", "must be Exists when key is empty")
    effect_raw = r.string(raw.get("effect"), f"{field}.effect")
    effect = effect_from_raw(r, effect_raw, f"{field}.effect") if effect_raw else None
    seconds = r.optional_integer(raw.get("tolerationSeconds"), f"{field}.tolerationSeconds")
    return Toleration(key, operator, value, effect, seconds)


# -- pod affinity, topology spread -------------------------------------------------------------


def _merge_label_keys(
    selector: LabelSelector,
    labels: Mapping[str, str],
    match_keys: Iterable[str],
    mismatch_keys: Iterable[str] = (),
) -> LabelSelector:
    """Add ``key In [v]`` / ``key NotIn [v]`` for the keys the pod has (as kube-apiserver)."""
    extra = [Requirement(k, Operator.IN, (labels[k],)) for k in match_keys if k in labels]
    extra += [Requirement(k, Operator.NOT_IN, (labels[k],)) for k in mismatch_keys if k in labels]
    if not extra:
        return selector
    return LabelSelector(canonical([*selector.requirements, *extra]))


def _pod_affinity_term(
    r: Reader, raw: RawMap, field: str, *, namespace: str, labels: Mapping[str, str]
) -> PodAffinityTerm:
    selector_raw = raw.get("labelSelector")
    selector = (
        None
        if selector_raw is None
        else label_selector_from_raw(selector_raw, obj=r.obj, field=f"{field}.labelSelector")
    )
    ns_selector_raw = raw.get("namespaceSelector")
    ns_selector = (
        None
        if ns_selector_raw is None
        else label_selector_from_raw(ns_selector_raw, obj=r.obj, field=f"{field}.namespaceSelector")
    )
    namespaces = frozenset(r.strings(raw.get("namespaces"), f"{field}.namespaces"))
    if not namespaces and ns_selector is None:
        namespaces = frozenset({namespace})
    match_keys = r.strings(raw.get("matchLabelKeys"), f"{field}.matchLabelKeys")
    mismatch_keys = r.strings(raw.get("mismatchLabelKeys"), f"{field}.mismatchLabelKeys")
    both = set(match_keys) & set(mismatch_keys)
    if both:
        raise r.error(
            f"{field}.mismatchLabelKeys",
            f"keys {sorted(both)} must not also be in matchLabelKeys",
        )
    # A nil selector matches nothing whatever is merged into it, so it stays nil.
    if selector is not None:
        selector = _merge_label_keys(selector, labels, match_keys, mismatch_keys)
    return PodAffinityTerm(
        label_selector=selector,
        namespaces=namespaces,
        namespace_selector=ns_selector,
        topology_key=r.required_string(raw.get("topologyKey"), f"{field}.topologyKey"),
    )


def _weight(r: Reader, raw: RawMap, field: str) -> int:
    weight = r.integer(raw.get("weight"), f"{field}.weight")
    if not 1 <= weight <= 100:
        raise r.error(f"{field}.weight", f"must be in the range 1-100, got {weight}")
    return weight


def _pod_affinity(
    r: Reader, raw: object, field: str, *, namespace: str, labels: Mapping[str, str]
) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    m = r.mapping(raw, field)
    req_field = f"{field}.requiredDuringSchedulingIgnoredDuringExecution"
    required = tuple(
        _pod_affinity_term(r, term, path, namespace=namespace, labels=labels)
        for path, term in r.objects(
            m.get("requiredDuringSchedulingIgnoredDuringExecution"), req_field
        )
    )
    pref_field = f"{field}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred: list[WeightedPodAffinityTerm] = []
    for path, item in r.objects(
        m.get("preferredDuringSchedulingIgnoredDuringExecution"), pref_field
    ):
        weight = _weight(r, item, path)
        term_path = f"{path}.podAffinityTerm"
        term = r.mapping(item.get("podAffinityTerm"), term_path)
        preferred.append(
            WeightedPodAffinityTerm(
                weight, _pod_affinity_term(r, term, term_path, namespace=namespace, labels=labels)
            )
        )
    return required, tuple(preferred)


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_POLICIES = ("Honor", "Ignore")


def _spread_constraint(
    r: Reader, raw: RawMap, field: str, *, labels: Mapping[str, str]
) -> TopologySpreadConstraint:
    max_skew = r.optional_integer(raw.get("maxSkew"), f"{field}.maxSkew")
    if max_skew is None or max_skew < 1:
        raise r.error(f"{field}.maxSkew", f"must be greater than zero, got {max_skew}")
    when = r.string(raw.get("whenUnsatisfiable"), f"{field}.whenUnsatisfiable")
    if when not in _WHEN_UNSATISFIABLE:
        raise r.error(
            f"{field}.whenUnsatisfiable",
            f"unknown value {when!r} (want DoNotSchedule or ScheduleAnyway)",
        )
    min_domains = r.optional_integer(raw.get("minDomains"), f"{field}.minDomains")
    if min_domains is not None:
        if min_domains < 1:
            raise r.error(f"{field}.minDomains", f"must be greater than zero, got {min_domains}")
        if when != "DoNotSchedule":
            raise r.error(
                f"{field}.minDomains", "can only be set when whenUnsatisfiable is DoNotSchedule"
            )
    policies: list[str] = []
    for name, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
        policy = r.string(raw.get(name), f"{field}.{name}") or default
        if policy not in _POLICIES:
            raise r.error(f"{field}.{name}", f"unknown policy {policy!r} (want Honor or Ignore)")
        policies.append(policy)
    selector_raw = raw.get("labelSelector")
    selector = (
        None
        if selector_raw is None
        else label_selector_from_raw(selector_raw, obj=r.obj, field=f"{field}.labelSelector")
    )
    match_keys = r.strings(raw.get("matchLabelKeys"), f"{field}.matchLabelKeys")
    if selector is not None:
        selector = _merge_label_keys(selector, labels, match_keys)
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=r.required_string(raw.get("topologyKey"), f"{field}.topologyKey"),
        when_unsatisfiable=when,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=policies[0],
        node_taints_policy=policies[1],
    )


# -- gates, timestamps ------------------------------------------------------------------------

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")


def _timestamp(r: Reader, value: object, field: str) -> str:
    """An RFC 3339 time as metav1.Time reads it (``2006-01-02T15:04:05Z07:00``), or empty."""
    text = r.string(value, field)
    if not text:
        return text
    if _RFC3339.fullmatch(text) is None:
        raise r.error(field, f"must be an RFC 3339 time such as 2006-01-02T15:04:05Z, got {text!r}")
    try:
        # Python's parser takes at most 6 fractional digits: the calendar check needs none.
        datetime.datetime.fromisoformat(text[:19])
    except ValueError as exc:
        raise r.error(field, f"not a valid time {text!r}: {exc}") from None
    return text


def _preemption_policy(r: Reader, value: object) -> str:
    policy = r.string(value, "spec.preemptionPolicy") or PREEMPT_LOWER_PRIORITY
    if policy not in (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER):
        raise r.error(
            "spec.preemptionPolicy",
            f"must be {PREEMPT_LOWER_PRIORITY!r} or {PREEMPT_NEVER!r}, got {policy!r}",
        )
    return policy


def _preempted(r: Reader, value: object) -> bool:
    """A ``DisruptionTarget=True`` condition with reason ``PreemptionByScheduler`` (kube's
    PodTerminatingByPreemption reads the first DisruptionTarget condition only)."""
    for path, condition in r.objects(value, "status.conditions"):
        if r.string(condition.get("type"), f"{path}.type") == "DisruptionTarget":
            return (
                r.string(condition.get("status"), f"{path}.status") == "True"
                and r.string(condition.get("reason"), f"{path}.reason") == "PreemptionByScheduler"
            )
    return False


def _scheduling_gates(r: Reader, value: object) -> tuple[str, ...]:
    """The names in ``spec.schedulingGates``, a list of ``{name}``: anything else is an
    error, since a gate given as a string or a map would otherwise hold the pod back
    silently, or be ignored."""
    names: list[str] = []
    for path, gate in r.objects(value, "spec.schedulingGates"):
        name = r.required_string(gate.get("name"), f"{path}.name")
        if name in names:
            raise r.error(f"{path}.name", f"duplicate gate {name!r}")
        names.append(name)
    return tuple(names)


# -- the pod -----------------------------------------------------------------------------------


def pod_from_raw(raw: Mapping[str, object]) -> Pod:
    """The Pod record for a v1 Pod dict; ``ModelError`` names the object and field on bad input."""
    r = Reader("Pod <unnamed>")
    if not isinstance(raw, Mapping):
        raise r.error("", f"expected an object, got {type(raw).__name__}")
    meta = r.mapping(raw.get("metadata"), "metadata")
    namespace = r.string(meta.get("namespace"), "metadata.namespace") or "default"
    r = Reader(f"Pod {namespace}/<unnamed>")
    name = r.required_string(meta.get("name"), "metadata.name")
    r = Reader(f"Pod {namespace}/{name}")
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")
    gates = _scheduling_gates(r, spec.get("schedulingGates"))
    labels = r.string_map(meta.get("labels"), "metadata.labels")

    raw_containers = r.objects(spec.get("containers"), "spec.containers")
    raw_inits = r.objects(spec.get("initContainers"), "spec.initContainers")
    containers = [container_from_raw(r, c, path, init=False) for path, c in raw_containers]
    inits = [container_from_raw(r, c, path, init=True) for path, c in raw_inits]
    requests, non_zero = pod_requests(r, spec, status, containers, inits)

    sidecars = [pc for pc, c in zip(raw_inits, inits, strict=True) if c.restartable]
    images = tuple(
        normalize_image(r.string(c.get("image"), f"{path}.image"))
        for path, c in (*raw_inits, *raw_containers)
    )

    affinity = r.mapping(spec.get("affinity"), "spec.affinity")
    node_affinity = r.mapping(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
    na_field = "spec.affinity.nodeAffinity"
    required_raw = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    required_node = (
        None
        if required_raw is None
        else node_selector_from_raw(
            required_raw,
            obj=r.obj,
            field=f"{na_field}.requiredDuringSchedulingIgnoredDuringExecution",
        )
    )
    preferred_node = tuple(
        preferred_scheduling_term_from_raw(term, obj=r.obj, field=path)
        for path, term in r.objects(
            node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"),
            f"{na_field}.preferredDuringSchedulingIgnoredDuringExecution",
        )
    )
    req_aff, pref_aff = _pod_affinity(
        r,
        affinity.get("podAffinity"),
        "spec.affinity.podAffinity",
        namespace=namespace,
        labels=labels,
    )
    req_anti, pref_anti = _pod_affinity(
        r,
        affinity.get("podAntiAffinity"),
        "spec.affinity.podAntiAffinity",
        namespace=namespace,
        labels=labels,
    )

    return Pod(
        key=pod_key(namespace, name),
        namespace=namespace,
        name=name,
        uid=Uid(r.string(meta.get("uid"), "metadata.uid")),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        labels=labels,
        annotations=r.string_map(meta.get("annotations"), "metadata.annotations"),
        scheduler_name=r.string(spec.get("schedulerName"), "spec.schedulerName")
        or DEFAULT_SCHEDULER_NAME,
        node_name=NodeName(r.string(spec.get("nodeName"), "spec.nodeName")),
        phase=r.string(status.get("phase"), "status.phase"),
        priority=r.integer(spec.get("priority"), "spec.priority"),
        deleting=meta.get("deletionTimestamp") is not None,
        scheduling_gates=gates,
        creation_timestamp=_timestamp(
            r, meta.get("creationTimestamp"), "metadata.creationTimestamp"
        ),
        requests=resources_from_list(requests, count_pods=False),
        non_zero_milli_cpu=milli_value(non_zero.get(CPU, Fraction(0))),
        non_zero_memory=int_value(non_zero.get(MEMORY, Fraction(0))),
        host_ports=_host_ports(r, (*sidecars, *raw_containers)),
        images=images,
        tolerations=tuple(
            _toleration(r, t, path)
            for path, t in r.objects(spec.get("tolerations"), "spec.tolerations")
        ),
        node_selector=r.string_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        required_node_affinity=required_node,
        preferred_node_affinity=preferred_node,
        required_pod_affinity=req_aff,
        preferred_pod_affinity=pref_aff,
        required_pod_anti_affinity=req_anti,
        preferred_pod_anti_affinity=pref_anti,
        topology_spread_constraints=tuple(
            _spread_constraint(r, c, path, labels=labels)
            for path, c in r.objects(
                spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"
            )
        ),
        nominated_node_name=r.string(status.get("nominatedNodeName"), "status.nominatedNodeName"),
        resource_claims=pod_resource_claims(r, spec),
        resource_claim_statuses=pod_resource_claim_statuses(r, status),
        controller_ref=controller_ref_from_raw(r, meta),
        preemption_policy=_preemption_policy(r, spec.get("preemptionPolicy")),
        start_time=_timestamp(r, status.get("startTime"), "status.startTime"),
        preempted=_preempted(r, status.get("conditions")),
        volumes=pod_volumes_from_raw(r, spec.get("volumes"), name),
        scheduling_group=_scheduling_group(r, spec.get("schedulingGroup")),
    )


def _scheduling_group(r: Reader, value: object) -> str:
    """``spec.schedulingGroup.podGroupName`` (kube: required when the group is given)."""
    group = r.optional_mapping(value, "spec.schedulingGroup")
    if group is None:
        return ""
    name = r.string(group.get("podGroupName"), "spec.schedulingGroup.podGroupName")
    if not name:
        raise r.error("spec.schedulingGroup.podGroupName", "must specify one of: `podGroupName`")
    return name


def pod_with_status(
    pod: Pod,
    status: Mapping[str, object],
    resource_version: str,
    *,
    labels: object = None,
    relabel: bool = False,
) -> Pod | None:
    """``pod`` at ``resource_version`` with what :func:`pod_from_raw` reads of ``status``
    apart from the container statuses and ``PodResizePending`` (those feed the requests):
    phase, startTime, nominatedNodeName and the DisruptionTarget condition, and with
    ``relabel`` the ``metadata.labels`` given, each checked as there (``ModelError`` naming
    the field). For an update that changed only these — a kubelet's Running, a
    nomination, the zone and region labels kube-apiserver's PodTopologyLabels admission
    copies from the node at the bind — without parsing the rest again. None when new
    labels would change more: a topology spread constraint or pod (anti-)affinity term
    reads them (matchLabelKeys)."""
    r = Reader(f"Pod {pod.key}")
    updated = pod.copied()
    put = object.__setattr__
    if relabel:
        if pod.topology_spread_constraints or pod.has_pod_affinity or pod.has_pod_anti_affinity:
            return None
        put(updated, "labels", r.string_map(labels, "metadata.labels"))
    put(updated, "resource_version", resource_version)
    put(updated, "phase", r.string(status.get("phase"), "status.phase"))
    put(updated, "start_time", _timestamp(r, status.get("startTime"), "status.startTime"))
    nominated = r.string(status.get("nominatedNodeName"), "status.nominatedNodeName")
    put(updated, "nominated_node_name", nominated)
    put(updated, "preempted", _preempted(r, status.get("conditions")))
    put(updated, "template_id", 0)  # no longer its template's equal
    return updated
