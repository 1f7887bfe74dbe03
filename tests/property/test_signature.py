"""Equal signature ⇒ equal Filter statuses and raw scores on every node (KEP-5598's promise)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.batching.signature import BatchingMode, Signer, is_exact
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.profile import Profile
from scheduler.model.parse import pod_from_raw
from scheduler.model.pod import Pod
from tests.builders import make_container, make_node, make_pod, taint, toleration
from tests.harness import cluster_of, profile_for

ZONES = ["a", "b"]
IMAGES = ["nginx:1", "redis:7", "busybox"]

pod_fields = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(["100m", "500m", "1", "3"]),
        "memory": st.sampled_from(["100Mi", "1Gi"]),
        "image": st.sampled_from(IMAGES),
        "zone": st.sampled_from([None, *ZONES]),
        "tolerate": st.booleans(),
        "port": st.sampled_from([None, 80, 8080]),
        "prefer": st.sampled_from([None, *ZONES]),
        "app": st.sampled_from(["web", "db"]),
    }
)


def _pod(name: str, f: dict[str, Any], *, noise: int = 0) -> Pod:
    """A pod from ``f``; ``noise`` varies what no plugin reads (annotations, priority, names)."""
    affinity = None
    if f["prefer"]:
        affinity = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "preference": {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": [f["prefer"]]}
                            ]
                        },
                    }
                ]
            }
        }
    container = make_container(
        f"c{noise}",
        cpu=f["cpu"],
        memory=f["memory"],
        image=f["image"],
        host_ports=[f["port"]] if f["port"] else None,
    )
    return pod_from_raw(
        make_pod(
            name,
            containers=[container],
            labels={"app": f["app"]},
            node_selector={"zone": f["zone"]} if f["zone"] else None,
            tolerations=[toleration("dedicated", operator="Exists")] if f["tolerate"] else None,
            affinity=affinity,
            priority=noise,
            annotations={"note": str(noise)},
        )
    )


node_fields = st.lists(
    st.fixed_dictionaries(
        {
            "cpu": st.sampled_from(["2", "4", "8"]),
            "zone": st.sampled_from(ZONES),
            "tainted": st.booleans(),
            "soft": st.booleans(),
            "images": st.lists(st.sampled_from(IMAGES), unique=True, max_size=2),
            "busy": st.sampled_from([None, "1", "3"]),
            "port": st.booleans(),
        }
    ),
    min_size=1,
    max_size=6,
)


def _profile(nodes: list[dict[str, Any]]) -> Profile:
    node_raws, running = [], []
    for i, n in enumerate(nodes):
        taints = [taint("dedicated", "x")] if n["tainted"] else []
        if n["soft"]:
            taints.append(taint("soft", "y", effect="PreferNoSchedule"))
        node_raws.append(
            make_node(
                f"n{i}",
                cpu=n["cpu"],
                labels={"zone": n["zone"]},
                taints=taints or None,
                images=[([f"docker.io/library/{img}"], 300 * 1024 * 1024) for img in n["images"]],
            )
        )
        if n["busy"]:
            running.append(
                make_pod(
                    f"busy{i}",
                    cpu=n["busy"],
                    node_name=f"n{i}",
                    host_ports=[80] if n["port"] else None,
                )
            )
    return profile_for(cluster_of(node_raws, running))


def _outcomes(profile: Profile, pod: Pod) -> list[tuple[object, ...]]:
    """Per node: the Filter status and every plugin's raw score."""
    state = CycleState()
    _, pre = profile.run_pre_filter(state, pod)
    nodes = profile.snapshot.node_infos
    profile.run_pre_score(state, pod, nodes)
    active = profile.active_score_plugins(state)
    rows: list[tuple[object, ...]] = [(pre.code, pre.reasons)]
    for info in nodes:
        status = profile.run_filters(state, pod, info)
        scores = tuple(w.plugin.score(state, pod, info) for w in active)
        rows.append((info.name, status.code, status.reasons, scores))
    return rows


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=node_fields,
    first=pod_fields,
    second=st.one_of(st.none(), pod_fields),
    noise=st.integers(1, 1000),
)
def test_equal_signatures_decide_equally(
    nodes: list[dict[str, Any]],
    first: dict[str, Any],
    second: dict[str, Any] | None,
    noise: int,
) -> None:
    """Two pods with the same signature get the same statuses and raw scores on every node."""
    profile = _profile(nodes)
    signer = Signer(profile, BatchingMode.ALL)
    a = _pod("a", first)
    b = _pod("b", second, noise=noise) if second is not None else _pod("b", first, noise=noise)
    sig_a, sig_b = signer.sign(a).signature, signer.sign(b).signature
    assert sig_a is not None
    assert sig_b is not None
    if second is None:
        assert sig_a == sig_b  # only unread fields differ
    if sig_a == sig_b:
        assert _outcomes(profile, a) == _outcomes(profile, b)
    # The same fields always sign the same, whatever the pod is called.
    assert signer.sign(_pod("c", first)).signature == sig_a


@given(fields=pod_fields, key=st.sampled_from(sorted(pod_fields.wrapped_strategy.mapping)))  # type: ignore[attr-defined]
@settings(max_examples=120, deadline=None)
def test_changing_a_read_field_changes_the_signature(fields: dict[str, Any], key: str) -> None:
    """Mutation test: every field some plugin reads is part of the signature."""
    profile = _profile(
        [
            {
                "cpu": "4",
                "zone": "a",
                "tainted": False,
                "soft": False,
                "images": [],
                "busy": None,
                "port": False,
            }
        ]
    )
    signer = Signer(profile, BatchingMode.ALL)
    choices = {
        "cpu": ["100m", "500m", "1", "3"],
        "memory": ["100Mi", "1Gi"],
        "image": IMAGES,
        "zone": [None, *ZONES],
        "tolerate": [True, False],
        "port": [None, 80, 8080],
        "prefer": [None, *ZONES],
        "app": ["web", "db"],
    }
    other = next(v for v in choices[key] if v != fields[key])
    mutated = {**fields, key: other}
    assert signer.sign(_pod("a", fields)).signature != signer.sign(_pod("a", mutated)).signature


def test_pod_affinity_pods_are_exact_only_and_nominated_pods_unsignable() -> None:
    """A pod with pod affinity is signed for the exact batch only (kube's hint would be
    wrong for it); a nominated pod is unsignable."""
    profile = _profile(
        [
            {
                "cpu": "4",
                "zone": "a",
                "tainted": False,
                "soft": False,
                "images": [],
                "busy": None,
                "port": False,
            }
        ]
    )
    signer = Signer(profile, BatchingMode.ALL)
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
            ]
        }
    }
    signed = signer.sign(pod_from_raw(make_pod("p", affinity=anti)))
    assert signed.signature is not None
    assert is_exact(signed.signature)
    raw = make_pod("q")
    raw["status"]["nominatedNodeName"] = "n0"
    assert signer.sign(pod_from_raw(raw)).refused_by == "NominatedNode"


def test_opt_in_modes() -> None:
    """annotated batches only "true"; all batches unless "false"; off batches nothing."""
    profile = _profile(
        [
            {
                "cpu": "4",
                "zone": "a",
                "tainted": False,
                "soft": False,
                "images": [],
                "busy": None,
                "port": False,
            }
        ]
    )
    plain = pod_from_raw(make_pod("plain"))
    yes = pod_from_raw(make_pod("yes", batching=True))
    no = pod_from_raw(make_pod("no", batching=False))
    signed = {
        mode: [Signer(profile, mode).sign(p).signature is not None for p in (plain, yes, no)]
        for mode in BatchingMode
    }
    assert signed == {
        BatchingMode.ANNOTATED: [False, True, False],
        BatchingMode.ALL: [True, True, False],
        BatchingMode.OFF: [False, False, False],
    }
