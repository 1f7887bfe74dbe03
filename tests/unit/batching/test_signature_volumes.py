"""Signatures of pods with volumes: kube's VolumesSigner, and unbound claims unsignable."""

from __future__ import annotations

from typing import Any

from scheduler.batching.signature import VOLUMES, BatchingMode, Signer
from scheduler.cache.snapshot import Snapshot
from scheduler.framework.config import PluginSpec
from scheduler.framework.profile import Profile
from scheduler.model import parse
from scheduler.model.parse_volumes import pvc_from_raw
from scheduler.plugins import in_tree_registry
from scheduler.plugins.node_volume_limits import NodeVolumeLimits
from scheduler.plugins.volume_binding import VolumeBinding
from scheduler.plugins.volume_restrictions import VolumeRestrictions
from scheduler.plugins.volume_zone import VolumeZone
from tests.builders import make_pod
from tests.volume_builders import claim_volume, make_pvc

Raw = dict[str, Any]
VOLUME_PLUGINS = {
    "VolumeRestrictions": VolumeRestrictions,
    "NodeVolumeLimits": NodeVolumeLimits,
    "VolumeBinding": VolumeBinding,
    "VolumeZone": VolumeZone,
}


def signer(*, with_volumes: bool = True) -> Signer:
    snapshot = Snapshot()
    for raw in (
        make_pvc("bound", volume_name="pv-1", bound=True),
        make_pvc("bound", namespace="other", volume_name="pv-2", bound=True),
        make_pvc("unbound"),
    ):
        snapshot.volumes.set_pvc(pvc_from_raw(raw))
    names = ["NodeName", "TaintToleration", "NodeResourcesFit"]
    if with_volumes:
        names += list(VOLUME_PLUGINS)
    profile = Profile(
        scheduler_name="batch-scheduler",
        plugins=[PluginSpec(n) for n in names],
        registry={**in_tree_registry(), **VOLUME_PLUGINS},
        plugin_args={},
        snapshot=snapshot,
    )
    return Signer(profile, BatchingMode.ALL)


def sign(s: Signer, volumes: list[Raw], **kw: Any) -> tuple[bytes | None, str]:
    result = s.sign(parse.pod_from_raw(make_pod(kw.pop("name", "p"), volumes=volumes, **kw)))
    return result.signature, result.refused_by


def test_config_maps_and_secrets_do_not_split_signatures() -> None:
    s = signer()
    a, _ = sign(s, [{"name": "c", "configMap": {"name": "one"}}], name="a")
    b, _ = sign(s, [{"name": "s", "secret": {"secretName": "two"}}], name="b")
    plain, _ = sign(s, [], name="c")
    assert a is not None
    assert a == b == plain


def test_other_sources_enter_the_signature() -> None:
    s = signer()
    empty_dir, _ = sign(s, [{"name": "tmp", "emptyDir": {}}])
    renamed, _ = sign(s, [{"name": "scratch", "emptyDir": {}}])
    plain, _ = sign(s, [])
    assert empty_dir is not None
    assert empty_dir == renamed  # the volume's name is not its source
    assert empty_dir != plain


def test_bound_claims_sign_with_their_namespace() -> None:
    s = signer()
    a, _ = sign(s, [claim_volume("bound")], name="a")
    b, _ = sign(s, [claim_volume("bound")], name="b")
    elsewhere, _ = sign(s, [claim_volume("bound")], name="c", namespace="other")
    assert a is not None
    assert a == b
    assert elsewhere is not None
    assert elsewhere != a


def test_unbound_or_missing_claims_are_unsignable() -> None:
    s = signer()
    assert sign(s, [claim_volume("unbound")]) == (None, VOLUMES)
    assert sign(s, [claim_volume("missing")]) == (None, VOLUMES)
    ephemeral = {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    assert sign(s, [ephemeral]) == (None, VOLUMES)


def test_without_volume_binding_claims_are_not_batched() -> None:
    s = signer(with_volumes=False)
    assert sign(s, [claim_volume("bound")]) == (None, VOLUMES)
    signed, _ = sign(s, [{"name": "tmp", "emptyDir": {}}])
    assert signed is not None
