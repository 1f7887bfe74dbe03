"""Services: kube-apiserver's defaulting, validation and IP/port allocation, in small.

A scheduler reads only a Service's namespace and ``spec.selector`` (default topology
spreading counts the pods the Services selecting a pod select), but kubectl and the
conformance tier see the rest, so a new Service gets what kube-apiserver gives it:
``type: ClusterIP``, ``sessionAffinity: None``, TCP ports whose ``targetPort`` defaults to
the port, the traffic policies, a single-stack IPv4 ``clusterIP`` from the service range
``10.96.0.0/12`` (``10.96.0.1`` is the boot ``kubernetes`` Service's, as on a real
apiserver), and a node port from 30000-32767 for NodePort and LoadBalancer ports. An
update keeps the allocated values it omits (kube's ``patchAllocatedValues``) and may not
change a set ``clusterIP``. Not emulated: dual stack, load-balancer status, Endpoints /
EndpointSlices, ExternalName DNS checks.
"""

from __future__ import annotations

import ipaddress
import json
from typing import TYPE_CHECKING, Any

from scheduler.sim import errors
from scheduler.sim.discovery import SERVICES

if TYPE_CHECKING:
    from scheduler.sim.store import Store

SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/12")
KUBERNETES_IP = "10.96.0.1"
NODE_PORTS = range(30000, 32768)
_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_PROTOCOLS = ("SCTP", "TCP", "UDP")


def kubernetes_service() -> dict[str, Any]:
    """``default/kubernetes``, the Service kube-apiserver creates for itself (stored form)."""
    return {
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
            "clusterIP": KUBERNETES_IP,
            "clusterIPs": [KUBERNETES_IP],
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
        "status": {"loadBalancer": {}},
    }


def _invalid(obj: dict[str, Any], field_error: str) -> errors.ApiError:
    return errors.invalid("Service", obj["metadata"].get("name", ""), field_error)


def _headless(spec: dict[str, Any]) -> bool:
    return spec.get("clusterIP") == "None"


def default_and_validate(obj: dict[str, Any]) -> None:
    """SetDefaults_Service and the validation a Service's shape needs (in place)."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        raise _invalid(obj, "spec: Invalid value: must be an object")
    spec.setdefault("type", "ClusterIP")
    if spec["type"] not in _TYPES:
        supported = ", ".join(f'"{t}"' for t in _TYPES)
        raise _invalid(
            obj, f'spec.type: Unsupported value: "{spec["type"]}": supported values: {supported}'
        )
    spec.setdefault("sessionAffinity", "None")
    selector = spec.get("selector")
    if selector is not None and (
        not isinstance(selector, dict) or not all(isinstance(v, str) for v in selector.values())
    ):
        raise _invalid(obj, "spec.selector: Invalid value: must be a map of strings")
    ports = spec.get("ports") or []
    if not isinstance(ports, list):
        raise _invalid(obj, "spec.ports: Invalid value: must be a list")
    if not ports and not _headless(spec) and spec["type"] != "ExternalName":
        raise _invalid(obj, "spec.ports: Required value")
    for i, port in enumerate(ports):
        _port(obj, i, port, named=len(ports) > 1)
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    obj.setdefault("status", {"loadBalancer": {}})


def _port(obj: dict[str, Any], i: int, port: Any, *, named: bool) -> None:
    where = f"spec.ports[{i}]"
    if not isinstance(port, dict):
        raise _invalid(obj, f"{where}: Invalid value: must be an object")
    number = port.get("port")
    if not isinstance(number, int) or isinstance(number, bool) or not 0 < number < 65536:
        raise _invalid(
            obj,
            f"{where}.port: Invalid value: {json.dumps(number)}: "
            "must be between 1 and 65535, inclusive",
        )
    if named and not port.get("name"):
        raise _invalid(obj, f"{where}.name: Required value")
    port.setdefault("protocol", "TCP")
    if port["protocol"] not in _PROTOCOLS:
        raise _invalid(
            obj,
            f'{where}.protocol: Unsupported value: "{port["protocol"]}": '
            'supported values: "SCTP", "TCP", "UDP"',
        )
    if port.get("targetPort") in (None, 0, ""):
        port["targetPort"] = number


def allocate(store: Store, obj: dict[str, Any]) -> None:
    """Give a new (defaulted) Service its cluster IP and node ports, or 422 as kube words it."""
    spec = obj["spec"]
    if spec["type"] == "ExternalName":
        return
    used = {
        ip
        for rec in store.table(SERVICES).values()
        for ip in (rec.obj.get("spec") or {}).get("clusterIPs") or []
    }
    wanted = spec.get("clusterIP") or ((spec.get("clusterIPs") or [None])[0])
    if wanted == "None":  # headless: no IP
        spec["clusterIP"], spec["clusterIPs"] = "None", ["None"]
    elif wanted:
        try:
            inside = ipaddress.ip_address(wanted) in SERVICE_RANGE
        except ValueError:
            inside = False
        if not inside or wanted in used:
            why = (
                "provided IP is already allocated"
                if inside
                else f"the provided IP ({wanted}) is not in the valid range. The range of "
                f"valid IPs is {SERVICE_RANGE}"
            )
            raise _invalid(
                obj,
                f'spec.clusterIPs: Invalid value: ["{wanted}"]: failed to allocate IP '
                f"{wanted}: {why}",
            )
        spec["clusterIP"], spec["clusterIPs"] = wanted, [wanted]
    else:
        free = next(str(ip) for ip in SERVICE_RANGE.hosts() if str(ip) not in used)
        spec["clusterIP"], spec["clusterIPs"] = free, [free]
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        taken = {
            p.get("nodePort")
            for rec in store.table(SERVICES).values()
            for p in (rec.obj.get("spec") or {}).get("ports") or []
        }
        free_ports = (p for p in NODE_PORTS if p not in taken)
        for port in spec.get("ports") or []:
            if not port.get("nodePort"):
                port["nodePort"] = next(free_ports)


def keep_allocated(old: dict[str, Any], new: dict[str, Any]) -> None:
    """On update: defaults again, keep what was allocated and omitted, refuse a changed IP."""
    default_and_validate(new)
    old_spec, spec = old.get("spec") or {}, new["spec"]
    for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        if key in old_spec and not spec.get(key):
            spec[key] = old_spec[key]
    if old_spec.get("clusterIP") and spec.get("clusterIP") != old_spec["clusterIP"]:
        raise _invalid(
            new,
            f'spec.clusterIPs[0]: Invalid value: "{spec.get("clusterIP")}": '
            "may not change once set",
        )
    old_ports = {(p.get("port"), p.get("protocol")): p for p in old_spec.get("ports") or []}
    for port in spec.get("ports") or []:
        before = old_ports.get((port.get("port"), port.get("protocol")))
        if before is not None and before.get("nodePort") and not port.get("nodePort"):
            port["nodePort"] = before["nodePort"]
