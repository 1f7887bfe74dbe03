"""RBAC grants exactly what the code calls: nothing missing, nothing extra, no wildcards.

How the calls are known, honestly: ``CALLS`` below is a hand-written table of every request
the scheduler makes (module, HTTP method, path template). Two static scans of
``scheduler/kube/**/*.py`` keep the table true: every API path literal in the code (f-strings
rendered with ``{}`` for their fields) must be in the table for that module and vice versa,
and so must every HTTP method literal passed to a call. kopf's watches are read from the
registry the controller really builds (one ``on.event`` per ``kinds.Kind``; list + watch
each). The table is then turned into (API group, resource, verb) triples and compared with the
ClusterRole and Role.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from deploy_support import ROOT, one
from kubernetes import client as k8s_client

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.kube.client import ApiClient
from scheduler.kube.controller.operator import Controller
from scheduler.kube.controller.settings import ControllerOptions, operator_settings
from scheduler.kube.kinds import Kind
from tests.harness import scheduler_for

KUBE = ROOT / "scheduler" / "kube"
HTTP_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}
LEASE = "/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}"
CLAIM = "/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}"

# (module under scheduler/kube, method, path template, the template is a literal in the code)
CALLS: list[tuple[str, str, str, bool]] = [
    # initial LIST, Replace and periodic reconcile: every cached kind (kinds.Kind)
    ("kinds.py", "GET", "/api/v1/nodes", True),
    ("kinds.py", "GET", "/api/v1/namespaces", True),
    ("kinds.py", "GET", "/api/v1/services", True),
    ("kinds.py", "GET", "/api/v1/replicationcontrollers", True),
    ("kinds.py", "GET", "/apis/apps/v1/replicasets", True),
    ("kinds.py", "GET", "/apis/apps/v1/statefulsets", True),
    ("kinds.py", "GET", "/apis/storage.k8s.io/v1/storageclasses", True),
    ("kinds.py", "GET", "/api/v1/persistentvolumes", True),
    ("kinds.py", "GET", "/api/v1/persistentvolumeclaims", True),
    ("kinds.py", "GET", "/apis/storage.k8s.io/v1/csinodes", True),
    ("kinds.py", "GET", "/apis/policy/v1/poddisruptionbudgets", True),
    ("kinds.py", "GET", "/apis/resource.k8s.io/v1/deviceclasses", True),
    ("kinds.py", "GET", "/apis/resource.k8s.io/v1/resourceslices", True),
    ("kinds.py", "GET", "/apis/resource.k8s.io/v1/resourceclaims", True),
    ("kinds.py", "GET", "/api/v1/pods", True),
    # with the GenericWorkload gate: kube's PodGroups, and Coscheduling's where installed
    ("kinds.py", "GET", "/apis/scheduling.k8s.io/v1beta1/podgroups", True),
    ("kinds.py", "GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", True),
    # discovery: is Coscheduling's CRD served (a non-resource URL every authenticated user
    # may read through system:discovery; no rule needed)
    ("controller/operator.py", "GET", "/apis/{}", True),
    # the PodGroupInitiallyScheduled condition
    (
        "group_status.py",
        "PATCH",
        "/apis/scheduling.k8s.io/v1beta1/namespaces/{}/podgroups/{}/status",
        True,
    ),
    # the typed informers' paginated LIST and WATCH of pods and nodes (kind.path)
    ("intake/reflector.py", "GET", "/api/v1/pods", False),
    ("intake/reflector.py", "GET", "/api/v1/nodes", False),
    ("intake/reflector.py", "GET", "/apis/scheduling.k8s.io/v1beta1/podgroups", False),
    ("intake/reflector.py", "GET", "/apis/resource.k8s.io/v1/resourceslices", False),
    ("intake/reflector.py", "GET", "/apis/resource.k8s.io/v1/resourceclaims", False),
    # bind
    ("binder.py", "POST", "/api/v1/namespaces/{}/pods/{}/binding", True),
    # PodScheduled=False condition, Scheduled/FailedScheduling events
    ("reporter.py", "PATCH", "/api/v1/namespaces/{}/pods/{}/status", True),
    ("reporter.py", "POST", "/api/v1/namespaces/{}/events", True),
    # preemption: victims' DisruptionTarget condition and the preemptor's nominated node,
    # the victims' deletion, Preempted events
    ("preemption.py", "PATCH", "/api/v1/namespaces/{}/pods/{}/status", True),
    ("preemption.py", "DELETE", "/api/v1/namespaces/{}/pods/{}", True),
    ("preemption.py", "POST", "/api/v1/namespaces/{}/events", True),
    # the secure port's delegated authentication and authorization (kube-scheduler's too)
    ("delegated_auth.py", "POST", "/apis/authentication.k8s.io/v1/tokenreviews", True),
    ("delegated_auth.py", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", True),
    # VolumeBinding's PreBind: a PV's claimRef, a claim's selected-node annotation
    ("volume_binder.py", "PATCH", "/api/v1/persistentvolumes/{}", True),
    ("volume_binder.py", "PATCH", "/api/v1/namespaces/{}/persistentvolumeclaims/{}", True),
    # DynamicResources' PreBind: the claim's finalizer, its allocation and reservedFor (the
    # claim read again after a conflict); Unreserve's and PostFilter's status patches
    ("claim_writer.py", "GET", CLAIM, True),
    ("claim_writer.py", "PATCH", CLAIM, True),
    ("claim_writer.py", "PATCH", CLAIM + "/status", True),
    # leader election: read, write (optimistic PUT, also the release), create when absent
    ("leader.py", "GET", LEASE, True),
    ("leader.py", "PUT", LEASE, True),
    ("leader.py", "POST", LEASE.rsplit("/", 1)[0], False),  # path.rsplit("/", 1)[0]
]
INFORMER_WATCHES = {
    ("", "nodes"),
    ("", "pods"),
    ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "resourceclaims"),
}
"""(group, plural) of the typed informers (``kube/intake``): list + watch each."""
KOPF_WATCHES = {
    ("", "namespaces"),
    ("", "services"),
    ("", "replicationcontrollers"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("storage.k8s.io", "storageclasses"),
    ("", "persistentvolumes"),
    ("", "persistentvolumeclaims"),
    ("storage.k8s.io", "csinodes"),
    ("policy", "poddisruptionbudgets"),
    ("resource.k8s.io", "deviceclasses"),
}
"""(group, plural) of the controller's kopf.on.event handlers: list + watch each."""
SYNTHETIC = {("resource.k8s.io", "resourceclaims/binding", "patch")}
"""Permissions kube-apiserver checks beside the request's own: writing a claim's
``status.allocation`` or ``reservedFor`` needs the request's verb on the synthetic
``resourceclaims/binding`` (DRAResourceClaimGranularStatusAuthorization, beta, on in
v1.37; kube-scheduler's role grants it)."""
GATED_INFORMER_WATCHES = {("scheduling.k8s.io", "podgroups")}
"""(group, plural) a typed informer keeps with GenericWorkload on."""
GATED_WATCHES = {("scheduling.x-k8s.io", "podgroups")}
"""(group, plural) kopf watches too with GenericWorkload on (when Coscheduling's CRD is
served)."""
DISCOVERY = "/apis/{}"
"""Non-resource: not a permission of the roles."""
LISTS = "controller/sync.py"
"""Where the kinds' paths are requested (``list_pages(client, kind.path)``): the GETs of
``kinds.py`` are issued there, so the method scan finds ``"GET"`` in sync.py."""

VERB = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def _render(node: ast.AST) -> str | None:
    """A str constant, or an f-string with ``{}`` for each field; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):  # implicit concatenation is already one node
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                parts.append("{}")
        return "".join(parts)
    return None


def _modules(root: Path) -> dict[str, ast.Module]:
    return {
        str(path.relative_to(root)): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(root.rglob("*.py"))
    }


def _not_literals(tree: ast.Module) -> set[int]:
    """ids of string nodes that are not a path of their own: docstrings (prose) and the
    pieces of an f-string (the f-string as a whole is rendered)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            out.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            out.update(id(child) for child in ast.walk(node) if child is not node)
    return out


def api_paths(tree: ast.Module) -> set[str]:
    """Every API path template written in the module."""
    skip = _not_literals(tree)
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        text = _render(node)
        if text is not None and text.startswith(("/api/", "/apis/")):
            found.add(text)
    return found


def http_methods(tree: ast.Module) -> set[str]:
    """HTTP methods passed as the first argument of any call (``request("POST", ...)``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and first.value in HTTP_METHODS:
                found.add(str(first.value))
    return found


def kopf_handlers(tree: ast.Module) -> list[tuple[str, list[Any]]]:
    """(``on.<kind>``, constant positional args) of every ``kopf.on.<kind>(...)`` call."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        if (
            isinstance(owner, ast.Attribute)
            and owner.attr == "on"
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "kopf"
        ):
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            found.append((node.func.attr, args))
    return found


def permission(method: str, path: str) -> tuple[str, str, str]:
    """(API group, resource[/subresource], verb) that ``method path`` needs."""
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = parts[1], parts[3:]
    if rest[0] == "namespaces" and len(rest) > 2:
        rest = rest[2:]
    resource, named = rest[0], len(rest) > 1
    if len(rest) > 2:
        resource += "/" + rest[2]
    verb = "list" if method == "GET" and not named else VERB[method]
    return group, resource, verb


def required() -> set[tuple[str, str, str]]:
    needed = {permission(method, path) for _, method, path, _ in CALLS if path != DISCOVERY}
    needed |= SYNTHETIC
    for group, plural in KOPF_WATCHES | GATED_WATCHES | INFORMER_WATCHES | GATED_INFORMER_WATCHES:
        needed |= {(group, plural, "list"), (group, plural, "watch")}
    return needed


def granted(role: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def test_every_api_path_in_the_code_is_in_the_table() -> None:
    """The path literals of scheduler/kube match CALLS module by module (both ways)."""
    modules = _modules(KUBE)
    found = {(name, path) for name, tree in modules.items() for path in api_paths(tree)}
    table = {(name, path) for name, _, path, literal in CALLS if literal}
    assert found == table
    for name, _, _, _ in CALLS:
        assert name in modules, f"scheduler/kube/{name} is gone: update CALLS"


def test_every_http_method_in_the_code_is_in_the_table() -> None:
    """The HTTP methods each kube module passes to a call match CALLS (both ways)."""
    modules = _modules(KUBE)
    found = {(name, m) for name, tree in modules.items() for m in http_methods(tree)}
    # client.py names the idempotent methods in a set, not in calls; it issues none itself.
    # kinds.py only names the paths; sync.py requests them.
    table = {(LISTS if name == "kinds.py" else name, m) for name, m, _, _ in CALLS}
    assert found == table


def test_no_api_paths_outside_kube_and_sim() -> None:
    """Only scheduler/kube talks to the API (sim serves it; the demo goes through kube)."""
    package = ROOT / "scheduler"
    for name, tree in _modules(package).items():
        if name.startswith(("kube/", "sim/")):
            continue
        assert not api_paths(tree), f"scheduler/{name} builds API paths"


def test_kinds_paths_are_literals_in_kinds_py() -> None:
    """Every kind's LIST path is written out in kinds.py (the table above can be checked)."""
    found = api_paths(_modules(KUBE)["kinds.py"])
    assert found == {path for name, _, path, _ in CALLS if name == "kinds.py"}
    assert {kind.path for kind in Kind} == found


@pytest.mark.parametrize("gated", [False, True], ids=["default", "GenericWorkload"])
def test_kopf_watches_every_kind_and_writes_nothing(gated: bool) -> None:
    """kopf: login + on.event for each cached kind (PodGroups with the gate); no posting, no
    resource scanning."""
    handlers = kopf_handlers(_modules(KUBE)["controller/operator.py"])
    assert sorted(kind for kind, _ in handlers) == ["event", "login"]
    scheduler, _, _ = scheduler_for([])
    configuration = k8s_client.Configuration()
    configuration.host = "http://127.0.0.1:1"
    controller = Controller(
        EventHandlers(scheduler),
        client=ApiClient(configuration),  # no I/O here
        metrics=scheduler.metrics,
        reporter=scheduler.reporter,
        kinds=set(Kind) if gated else None,
    )
    registry = controller.registry._watching.get_all_handlers()  # kopf's own view
    selectors = [h.selector for h in registry if h.selector is not None]
    watched = {(s.group or "", s.any_name) for s in selectors}
    informed = {
        (kind.api_version.rpartition("/")[0], kind.plural) for kind in controller.reflectors
    }
    assert informed == INFORMER_WATCHES | (GATED_INFORMER_WATCHES if gated else set())
    expected = KOPF_WATCHES | (GATED_WATCHES if gated else set())
    assert len(registry) == len(expected)
    assert watched == expected
    settings = operator_settings(ControllerOptions())
    assert settings.posting.enabled is False  # else kopf would write Events of its own
    assert settings.scanning.disabled is True  # else it would list/watch CRDs and namespaces
    assert settings.peering.standalone is True  # else it would need KopfPeering objects


def test_permission_mapping() -> None:
    """The path → permission rules on the cases that matter (a check of the checker)."""
    assert permission("GET", "/api/v1/pods") == ("", "pods", "list")
    assert permission("POST", "/api/v1/namespaces/{}/pods/{}/binding") == (
        "",
        "pods/binding",
        "create",
    )
    assert permission("GET", LEASE) == ("coordination.k8s.io", "leases", "get")
    collection = LEASE.rsplit("/", 1)[0]
    assert permission("POST", collection) == ("coordination.k8s.io", "leases", "create")


def test_roles_grant_exactly_what_the_code_needs() -> None:
    """ClusterRole + Role = the calls' permissions; leases only in the namespaced Role."""
    cluster_role, role = one("ClusterRole"), one("Role")
    assert granted(cluster_role) | granted(role) == required()
    assert granted(role) == {p for p in required() if p[1] == "leases"}
    assert not granted(cluster_role) & granted(role)


def test_lease_access_is_limited_by_name_where_rbac_allows() -> None:
    """get/update name the one Lease; only create (name in the body) is unrestricted."""
    for rule in one("Role")["rules"]:
        if set(rule["verbs"]) == {"create"}:
            assert "resourceNames" not in rule
        else:
            assert rule["resourceNames"] == ["batch-scheduler"]
            assert set(rule["verbs"]) <= {"get", "update"}


@pytest.mark.parametrize("kind", ["ClusterRole", "Role"])
def test_no_wildcards_secrets_or_non_resource_urls(kind: str) -> None:
    """No '*', no secrets or configmaps, no nonResourceURLs, no escalation verbs; delete only
    of pods (preemption's victims)."""
    for rule in one(kind)["rules"]:
        for key in ("apiGroups", "resources", "verbs", "resourceNames"):
            assert "*" not in rule.get(key, []), (kind, rule)
        assert "nonResourceURLs" not in rule
        assert not {"secrets", "configmaps"} & set(rule["resources"])
        assert not {"escalate", "bind", "impersonate", "deletecollection"} & set(rule["verbs"])
        if "delete" in rule["verbs"]:
            assert rule["resources"] == ["pods"], (kind, rule)
