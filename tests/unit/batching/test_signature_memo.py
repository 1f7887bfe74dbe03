"""Pods of one template (``Pod.template_id``) are signed once, until Services or
controllers change (default topology spreading reads them)."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler.batching.signature import BatchingMode, Signer, SignResult, is_exact
from scheduler.cache.snapshot import Snapshot
from scheduler.framework.config import PluginSpec
from scheduler.framework.profile import Profile
from scheduler.model import parse
from scheduler.model.parse_workloads import service_from_raw
from scheduler.model.pod import Pod
from scheduler.plugins import in_tree_registry
from tests.builders import make_pod


def _signer() -> Signer:
    profile = Profile(
        scheduler_name="batch-scheduler",
        plugins=[PluginSpec(n) for n in ("NodeResourcesFit", "PodTopologySpread")],
        registry=in_tree_registry(),
        plugin_args={},
        snapshot=Snapshot(),
    )
    return Signer(profile, BatchingMode.ALL)


def _pod(name: str, template: int) -> Pod:
    raw = make_pod(name, cpu="1", labels={"app": "web"})
    return dataclasses.replace(parse.pod_from_raw(raw), template_id=template)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pods actually signed (not served from the memo)."""
    signed: list[str] = []
    real = Signer._sign

    def sign(self: Signer, pod: Pod) -> SignResult:
        signed.append(pod.name)
        return real(self, pod)

    monkeypatch.setattr(Signer, "_sign", sign)
    return signed


def test_pods_of_one_template_are_signed_once(counted: list[str]) -> None:
    signer = _signer()
    first = signer.sign(_pod("a", 7))
    second = signer.sign(_pod("b", 7))
    assert counted == ["a"]
    assert second == first
    assert first.signature is not None


def test_a_service_change_signs_the_template_again(counted: list[str]) -> None:
    """Default spreading starts to apply once a Service selects the pods: the memo must not
    hide it."""
    signer = _signer()
    plain = signer.sign(_pod("a", 7))
    assert plain.signature is not None
    assert not is_exact(plain.signature)
    service = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}},
    }
    signer.profile.snapshot.workloads.set_service(service_from_raw(service))
    spread = signer.sign(_pod("b", 7))
    assert counted == ["a", "b"]
    assert spread.signature is not None
    assert is_exact(spread.signature)


def test_pods_without_a_template_or_with_a_nomination_are_signed_each(
    counted: list[str],
) -> None:
    signer = _signer()
    signer.sign(_pod("a", 0))
    signer.sign(_pod("b", 0))
    nominated = dataclasses.replace(_pod("c", 7), nominated_node_name="n1")
    assert signer.sign(nominated).refused_by == "NominatedNode"
    assert signer.sign(_pod("d", 7)).signature is not None
    assert counted == ["a", "b", "c", "d"]
