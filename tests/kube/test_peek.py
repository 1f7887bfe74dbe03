"""The peek's structs name every field the pod parser reads (a field it misses would let a
change of it be skipped as "nothing we read changed")."""

from __future__ import annotations

from typing import Any

import msgspec

from scheduler.kube.intake import peek, pod_parts
from scheduler.model.parse import pod_from_raw
from tests.builders import make_pod


class _Recording(dict[str, Any]):
    """A dict that remembers which keys were read."""

    def __init__(self, data: dict[str, Any], read: set[str]) -> None:
        super().__init__(data)
        self.read = read

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def _fields(struct: type[msgspec.Struct]) -> set[str]:
    return set(struct.__struct_fields__)


def test_the_peek_covers_every_pod_spec_and_metadata_member_the_parser_reads() -> None:
    """Every member of ``spec``, ``metadata`` and ``status`` that ``pod_from_raw`` reads is
    one the peek decodes (and so fingerprints)."""
    raw = make_pod("p", cpu="1")
    spec_read: set[str] = set()
    meta_read: set[str] = set()
    status_read: set[str] = set()
    raw["spec"] = _Recording(raw["spec"], spec_read)
    raw["metadata"] = _Recording(raw["metadata"], meta_read)
    raw["status"] = _Recording(raw.get("status") or {}, status_read)
    pod_from_raw(raw)
    assert spec_read, "the recorder saw nothing: the parser no longer calls get()"
    assert spec_read <= _fields(peek._PodSpec), spec_read - _fields(peek._PodSpec)
    assert meta_read <= _fields(peek._PodMeta), meta_read - _fields(peek._PodMeta)
    status_fields = _fields(peek._PodStatus)
    assert status_read <= status_fields, status_read - status_fields


def test_a_change_of_any_read_spec_member_changes_the_fingerprint() -> None:
    """Each PodSpec member the peek names takes part in the fingerprint."""
    base = make_pod("p", cpu="1")
    before = peek.peek_pod(msgspec.json.encode(base)).fingerprint
    for member in _fields(peek._PodSpec) - {"nodeName"}:
        changed = {**base, "spec": {**base["spec"], member: ["changed"]}}
        after = peek.peek_pod(msgspec.json.encode(changed)).fingerprint
        assert after != before, member


def test_a_watch_line_is_peeked_in_one_pass_and_a_status_falls_back_to_raw() -> None:
    """A pod event decodes to the typed event; an ERROR's Status does not fit and is raw."""
    line = msgspec.json.encode({"type": "ADDED", "object": make_pod("p", cpu="1")})
    event = peek.decode_pod_event(line)
    assert isinstance(event, peek.PodEvent)
    assert event.object.metadata.name == "p"
    status = {"kind": "Status", "status": "Failure", "code": 410, "reason": "Expired"}
    error = peek.decode_pod_event(msgspec.json.encode({"type": "ERROR", "object": status}))
    assert isinstance(error, peek.WatchEvent)
    assert error.type == "ERROR"


def test_the_template_reads_every_container_member_the_parser_reads() -> None:
    """The template keeps of each container only ``_Container``'s members: every one the
    parser reads must be among them."""
    raw = make_pod("p", cpu="1", host_ports=[80])
    read: set[str] = set()
    raw["spec"]["containers"] = [_Recording(c, read) for c in raw["spec"]["containers"]]
    raw["spec"]["initContainers"] = [_Recording({"name": "init", "image": "busybox"}, read)]
    pod_from_raw(raw)
    assert read, "the recorder saw nothing"
    assert read <= _fields(pod_parts._Container), read - _fields(pod_parts._Container)


def _with_token_volume(name: str, suffix: str, **changes: Any) -> bytes:
    """A pod as the ServiceAccount admission leaves it: a ``kube-api-access-<suffix>``
    volume and its mount in every container."""
    raw = make_pod(name, cpu="1", **changes)
    volume = f"kube-api-access-{suffix}"
    raw["spec"]["volumes"] = [
        {"name": volume, "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}
    ]
    for container in raw["spec"]["containers"]:
        container["volumeMounts"] = [{"name": volume, "mountPath": "/var/run/secrets"}]
    return msgspec.json.encode(raw)


def test_pods_differing_only_in_their_token_volume_share_a_template() -> None:
    """The name admission gives each pod's token volume is not part of the template; what
    the model reads is."""
    first = peek.peek_pod(_with_token_volume("a", "x7k2p"))
    second = peek.peek_pod(_with_token_volume("b", "q9z4m"))
    assert first.template() == second.template()
    more_cpu = peek.peek_pod(_with_token_volume("c", "q9z4m", memory="1Gi"))
    assert more_cpu.template() != first.template()
    assert pod_from_raw(msgspec.json.decode(_with_token_volume("a", "x7k2p"))).volumes == (
        pod_from_raw(msgspec.json.decode(_with_token_volume("b", "q9z4m"))).volumes
    )
