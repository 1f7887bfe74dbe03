"""The exact batch's scenarios (issue 28) in bench.scenarios: what their objects say, and one
tiny end-to-end run each against the emulator, batching on (no timing asserted)."""

from __future__ import annotations

import pytest

from bench import e2e
from bench.scenarios import SCENARIOS, ZONES
from scheduler.cache.workloads import Workloads
from scheduler.model.parse import pod_from_raw
from scheduler.model.parse_workloads import controller_from_raw, service_from_raw
from scheduler.model.workloads import ControllerKind

EXACT_SCENARIOS = ("deployment", "zone-spread", "one-per-node")


def test_deployment_pods_get_a_default_selector_from_their_service_and_replica_set() -> None:
    scenario = SCENARIOS["deployment"]
    service, replica_set = scenario.objects(3)
    workloads = Workloads()
    for obj in (service, replica_set):
        obj["metadata"]["namespace"] = "default"
    workloads.set_service(service_from_raw(service))
    workloads.set_controller(controller_from_raw(replica_set, ControllerKind.REPLICA_SET))
    pods = [pod_from_raw(raw) for raw in scenario.build(3)]
    assert len(pods) == 2 * 3
    keys = {r.key for r in workloads.default_selector(pods[0]).requirements}
    assert keys == {"app", "pod-template-hash"}  # the Service's and the ReplicaSet's


def test_zone_spread_is_zoned_and_one_per_node_avoids_its_own_pods() -> None:
    assert SCENARIOS["zone-spread"].zoned
    assert len(ZONES) > 1
    spread = pod_from_raw(SCENARIOS["zone-spread"].build(2)[0])
    assert [c.when_unsatisfiable for c in spread.topology_spread_constraints] == [
        "DoNotSchedule",
        "ScheduleAnyway",
    ]
    replica = pod_from_raw(SCENARIOS["one-per-node"].build(2)[0])
    (term,) = replica.required_pod_anti_affinity
    assert term.topology_key == "kubernetes.io/hostname"


@pytest.mark.e2e
@pytest.mark.parametrize("name", EXACT_SCENARIOS)
async def test_a_tiny_run_places_every_pod_and_counts_the_exact_path(name: str) -> None:
    record = await e2e.run_one(SCENARIOS[name], 8, "all", run_timeout=60)
    assert record["complete"]
    assert record["bound"] == record["pods"] == record["scheduled"]
    assert record["unschedulable_attempts"] == 0
    assert 0 < record["exact_used"] <= record["scheduled"]
    assert record["batched_share"] == pytest.approx(
        (record["hint_used"] + record["exact_used"]) / record["scheduled"], abs=1e-4
    )
