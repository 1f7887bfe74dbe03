"""The API objects a workload creates, rendered from kube's template files as kube does.

* nodes (``createNodes``): the node template rendered with ``Index``/``Count`` and the op's
  ``templateParams``, or kube's base node (``makeBaseNode``: 4 CPU, 32Gi, 110 pods, Ready)
  named ``node-<op index>-`` plus five random characters; either way the
  ``kubernetes.io/hostname`` label is the node's name (``IntegrationTestNodePreparer``);
* pods (``createPods``): the pod template rendered the same way, with the label
  ``signature: signature-label-<index / signatureBatchSize>`` (``podTemplateWithParams``), or
  kube's base pod (``makeBasePod``, no signature label) when the test case names no
  template;
* PersistentVolumes and claims (``CreatePodWithPersistentVolume``), pre-bound to each other.

Every pod gets ``spec.schedulerName`` of the scheduler under measurement: the templates set
none, and each run measures one scheduler (:func:`own_pods`).

Neighbours: :mod:`bench.scheduler_perf.gotemplate` renders, :mod:`bench.scheduler_perf.executor`
sends these objects.
"""

from __future__ import annotations

import copy
import functools
from typing import TYPE_CHECKING, Any

import orjson
import yaml

from bench.scheduler_perf.gofuncs import TemplateError
from bench.scheduler_perf.gotemplate import Template

if TYPE_CHECKING:
    import random
    from collections.abc import Mapping
    from pathlib import Path

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
PAUSE = "registry.k8s.io/pause:3.10.2"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it: ten times the pure-Python one."""
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
"""apimachinery's ``rand.String`` alphabet (no vowels, no confusable digits)."""


class ObjectError(ValueError):
    """A template that does not render into an object; the message names the file."""


@functools.cache
def _template(path: Path) -> Template:
    try:
        return Template.parse(path.read_text(), name=str(path))
    except OSError as exc:
        raise ObjectError(f"{path}: {exc}") from exc


def render(path: Path, env: Mapping[str, object]) -> Obj:
    """The object ``path`` renders to with ``env`` (kube's ``getSpecFromTextTemplateFile``).

    A fresh object each call; a text rendered before is not parsed again (most pod
    templates render the same text for every index, and parsing YAML is the runner's
    largest cost per pod)."""
    try:
        text = _template(path).render(env)
    except TemplateError as exc:
        raise ObjectError(f"{path}: {exc}") from exc
    parsed = _parsed(path, text)
    return dict(orjson.loads(parsed))


@functools.lru_cache(maxsize=64)
def _parsed(path: Path, text: str) -> bytes:
    try:
        obj = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise ObjectError(f"{path}: {exc}") from exc
    if not isinstance(obj, dict):
        raise ObjectError(f"{path}: renders to {type(obj).__name__}, not an object")
    return orjson.dumps(obj)


@functools.cache
def read_static(path: Path) -> Obj:
    """An object file read without templating (kube's ``getSpecFromFile`` and churn's
    ``getUnstructuredFromFile``)."""
    try:
        obj = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ObjectError(f"{path}: {exc}") from exc
    if not isinstance(obj, dict):
        raise ObjectError(f"{path}: not an object")
    return obj


def base_node(prefix: str) -> Obj:
    """kube's ``makeBaseNode``."""
    resources = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": prefix},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def base_pod() -> Obj:
    """kube's ``makeBasePod`` (``MakePodSpec``): pause, port 80, 100m and 500Mi."""
    resources = {"cpu": "100m", "memory": "500Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "pod-"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": PAUSE,
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": dict(resources), "requests": dict(resources)},
                }
            ]
        },
    }


def node(
    template: Path | None,
    params: Mapping[str, object],
    *,
    index: int,
    count: int,
    prefix: str,
    rng: random.Random,
) -> Obj:
    """The ``index``-th of ``count`` nodes, named, with its hostname label."""
    if template is None:
        obj = base_node(prefix)
    else:
        obj = render(template, {**params, "Index": index, "Count": count})
        obj.setdefault("apiVersion", "v1")
        obj.setdefault("kind", "Node")
    meta = obj.setdefault("metadata", {})
    if not meta.get("name"):
        meta["name"] = str(meta.get("generateName", "")) + "".join(
            rng.choice(_NAME_CHARS) for _ in range(5)
        )
        meta.pop("generateName", None)
    (meta.get("labels") or meta.setdefault("labels", {}))[HOSTNAME] = meta["name"]
    return obj


def pod(
    template: Path | None,
    params: Mapping[str, object],
    *,
    index: int,
    count: int,
    batch_size: int,
    scheduler_name: str,
) -> Obj:
    """The ``index``-th of ``count`` pods of a createPods op, for ``scheduler_name``."""
    if template is None:
        obj = base_pod()
    else:
        obj = render(template, {**params, "Index": index, "Count": count})
        meta = obj.setdefault("metadata", {})
        labels = meta.get("labels") or meta.setdefault("labels", {})
        labels["signature"] = f"signature-label-{index // batch_size}"
    obj.setdefault("apiVersion", "v1")
    obj.setdefault("kind", "Pod")
    return own_pods(obj, scheduler_name)


def own_pods(obj: Obj, scheduler_name: str) -> Obj:
    """``obj`` with ``spec.schedulerName`` set when it is a Pod (any other kind unchanged)."""
    if obj.get("kind") == "Pod" and obj.get("apiVersion", "v1") == "v1":
        (obj.get("spec") or obj.setdefault("spec", {}))["schedulerName"] = scheduler_name
    return obj


def claim_and_volume(
    pvc_template: Path, pv_template: Path | None, *, index: int, namespace: str
) -> tuple[Obj, Obj]:
    """kube's ``CreatePodWithPersistentVolume`` with ``bindVolume``: claim ``pvc-<i>`` and
    volume ``<namespace>-vol-<i>``, bound to each other (spec and status)."""
    claim = copy.deepcopy(read_static(pvc_template))
    claim.setdefault("apiVersion", "v1")
    claim.setdefault("kind", "PersistentVolumeClaim")
    claim_name = f"pvc-{index}"
    claim.setdefault("metadata", {})["name"] = claim_name
    if pv_template is None:
        raise ObjectError(f"{pvc_template}: a claim template needs persistentVolumeTemplatePath")
    volume = copy.deepcopy(read_static(pv_template))
    volume.setdefault("apiVersion", "v1")
    volume.setdefault("kind", "PersistentVolume")
    volume_name = f"{namespace}-vol-{index}"
    volume.setdefault("metadata", {})["name"] = volume_name
    spec = volume.setdefault("spec", {})
    if "csi" in spec:
        spec["csi"]["volumeHandle"] = volume_name
    elif "awsElasticBlockStore" in spec:
        spec["awsElasticBlockStore"]["volumeID"] = f"vol-{index}"
    spec["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "namespace": namespace,
        "name": claim_name,
        "apiVersion": "v1",
    }
    volume["status"] = {"phase": "Bound"}
    claim.setdefault("spec", {})["volumeName"] = volume_name
    claim["status"] = {"phase": "Bound"}
    return claim, volume


def with_claim(obj: Obj, index: int) -> Obj:
    """The pod with its one volume, claim ``pvc-<index>`` (replacing the template's)."""
    obj.setdefault("spec", {})["volumes"] = [
        {"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{index}"}}
    ]
    return obj
