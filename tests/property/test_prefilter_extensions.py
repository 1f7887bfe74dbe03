"""PreFilter extensions equal a fresh PreFilter (preemption's dry run, nominated pods).

For random clusters (the programs of test_index_equals_scan) and a random incoming pod: take
a cached pod off its node and tell the extensions (``remove_pod``) on a clone of the state;
the result equals PreFilter run afresh on the changed cluster. Put it back (``add_pod``) on
a clone of that: equal to the first PreFilter again. The original states are never changed.
A fresh PreFilter that Skips must agree with an extension state that rejects no node.
"""

from __future__ import annotations

from typing import Any

import test_index_equals_scan as scan  # type: ignore[import-not-found]  # same directory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.cache.snapshot import Snapshot
from scheduler.framework.cycle_state import CycleState
from scheduler.model import parse
from scheduler.model.pod import Pod
from scheduler.plugins import inter_pod_affinity as ipa
from scheduler.plugins import pod_topology_spread as pts

Raw = dict[str, Any]
Plugin = ipa.InterPodAffinity | pts.PodTopologySpread
KEYS: dict[type[Any], Any] = {
    ipa.InterPodAffinity: ipa._PRE_FILTER_KEY,
    pts.PodTopologySpread: pts._PRE_FILTER_KEY,
}


def fresh(plugin: Plugin, pod: Pod, snap: Snapshot) -> CycleState:
    state = CycleState()
    plugin.pre_filter(state, pod, snap)
    return state


def assert_same(
    plugin: Plugin, got: CycleState, want: CycleState, snap: Snapshot, pod: Pod
) -> None:
    key = KEYS[type(plugin)]
    if want.read(key) is not None:
        assert got.read(key) == want.read(key)
        return
    # Fresh PreFilter skipped: the updated state must reject no node either.
    for info in snap.node_infos:
        assert plugin.filter(got, pod, info).is_success


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    scan.program_st(),
    scan.pod_st("incoming", None, terms=True),
    st.lists(scan.spread_st(), max_size=2),
    st.integers(0, 1000),
)
def test_remove_then_add_equals_fresh_pre_filter(
    steps: list[tuple[str, Any]], raw: Raw, spread: list[Raw], pick: int
) -> None:
    cs = scan.run(steps)
    snap = cs.snapshot
    raw["spec"]["topologySpreadConstraints"] = spread
    raw["metadata"].pop("deletionTimestamp", None)
    pod = parse.pod_from_raw(raw)
    placed = [(p, info) for info in snap.node_infos for p in info.pods.values()]
    if not placed:
        return
    other, info = placed[pick % len(placed)]
    handle = scan.FakeHandle(snap)
    for plugin in (ipa.InterPodAffinity({}, handle), pts.PodTopologySpread({}, handle)):
        key = KEYS[type(plugin)]
        before = fresh(plugin, pod, snap)
        if before.read(key) is None:
            continue  # Skipped: kube runs no extension for it
        kept = before.read(key)
        info.remove_pod(other.uid)
        try:
            removed = before.clone()
            assert plugin.remove_pod(removed, pod, other, info).is_success
            assert before.read(key) is kept  # the original state is untouched
            assert_same(plugin, removed, fresh(plugin, pod, snap), snap, pod)
        finally:
            info.add_pod(other)
        added = removed.clone()
        assert plugin.add_pod(added, pod, other, info).is_success
        assert added.read(key) == kept
