"""Gangs under pressure on the real kube-apiserver, side by side with kube-scheduler v1.37.2
(both with GenericWorkload, ``gang_sides``): two gangs that cannot both fit, a gang one pod
larger than the cluster, and a scheduler SIGKILLed while it binds a gang.

``BATCH_SCHEDULER_GANG_RUNS`` (default 2) sets how many times the two-gang contest runs; each
run prints one line per side (who won, how long the loser took once the winner went).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from tests.cluster.conftest import bound_once
from tests.cluster.gang_sides import KUBE, OURS, Case, diff, stable
from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from tests.cluster.gang_sides import GangCluster, Side

RUNS = int(os.environ.get("BATCH_SCHEDULER_GANG_RUNS", "2"))
GANG = 24
"""Members of each contesting gang: 24 of the side's 40 CPUs (60 %)."""
CACHE_SIZE = "scheduler_cache_size"


def _members(group: str, size: int) -> list[str]:
    return [f"{group}-{i}" for i in range(size)]


def _states(side: Side, names: list[str]) -> dict[str, Any]:
    pods = side.pods()
    return {name: side.pod_state(pods.get(name)) for name in names}


def _contest(side: Side, run: int) -> dict[str, Any]:
    """One run: gangs a and b created member by member, interleaved; then the winner goes."""
    a, b = f"a{run}", f"b{run}"
    members = {a: _members(a, GANG), b: _members(b, GANG)}
    for group in (a, b):
        side.pod_group(group, GANG)
    for pod_a, pod_b in zip(members[a], members[b], strict=True):
        side.pod(pod_a, group=a)
        side.pod(pod_b, group=b)

    def settled() -> tuple[str, str] | None:
        counts = {group: len(side.bound(names)) for group, names in members.items()}
        for winner, loser in ((a, b), (b, a)):
            condition = side.group_condition(loser)
            rejected = condition is not None and condition[1] == "Unschedulable"
            if counts[winner] == GANG and counts[loser] == 0 and rejected:
                return winner, loser
        return None

    outcome = wait_for(settled, 60)
    if outcome is None:
        return {"settled": False, "bound": {g: sorted(side.bound(n)) for g, n in members.items()}}
    winner, loser = outcome

    def assumed() -> float:
        return side.cluster.metric(side.name, CACHE_SIZE, type="assumed_pods")

    wait_for(lambda: assumed() == 0, 10)  # the winner's binds confirmed by the watch
    record: dict[str, Any] = {
        "settled": True,
        "winner": "a" if winner == a else "b",
        "assumed_after": assumed(),
        "loser_condition": stable(lambda: side.group_condition(loser)),
        "loser_pods": stable(lambda: _states(side, members[loser])),
    }
    if side.name == OURS:  # no member of the loser was bound, or held a node (in its logs)
        logged = {str(r.get("pod")) for p in side.cluster.ours.procs for r in p.events("pod_bound")}
        record["loser_pod_bound_lines"] = sum(
            1 for name in members[loser] if f"{side.namespace}/{name}" in logged
        )
    side.delete_pods(members[winner])
    side.delete_group(winner)
    began = time.monotonic()
    whole = wait_for(lambda: len(side.bound(members[loser])) == GANG, 60)
    record["loser_whole_after_winner_gone"] = bool(whole)
    record["loser_took"] = round(time.monotonic() - began, 1)
    return record


def test_two_gangs_of_60_percent_one_whole_the_other_nothing(gang_cluster: GangCluster) -> None:
    """Every run: one gang bound whole, the other not at all (none of it assumed), with the
    same winner and texts on both sides; the loser binds whole once the winner is gone."""
    with Case.open(gang_cluster) as case:
        case.nodes(4, "10")
        for run in range(RUNS):
            kube, ours = case.run(functools.partial(_contest, run=run))
            for name, record in ((KUBE, kube), (OURS, ours)):
                took = record.get("loser_took")
                print(f"run {run} {name}: winner {record.get('winner')}, loser whole in {took}s")
            timing = ("loser_took", "loser_pod_bound_lines")
            assert {k: v for k, v in kube.items() if k not in timing} == {
                k: v for k, v in ours.items() if k not in timing
            }, diff(kube, ours)
            assert kube["settled"], diff(kube, ours)
            assert kube["assumed_after"] == 0
            assert kube["loser_whole_after_winner_gone"], diff(kube, ours)
            assert ours["loser_pod_bound_lines"] == 0
            for side in case.both:
                side.clear()
            gang_cluster.settle(len(case.kube.nodes) + len(case.ours.nodes))


def _too_big(side: Side) -> dict[str, Any]:
    """A gang of nine 1-CPU pods on two 4-CPU nodes; then a plain pod."""
    names = _members("huge", 9)
    side.pod_group("huge", 9)
    for name in names:
        side.pod(name, group="huge")

    def rejected() -> bool:
        condition = side.group_condition("huge")
        states = _states(side, names).values()
        unschedulable = all(s[:2] == ("pending", "Unschedulable") for s in states)
        return condition is not None and condition[1] == "Unschedulable" and unschedulable

    held = wait_for(rejected, 30)
    record: dict[str, Any] = {
        "rejected": bool(held),
        "condition": stable(lambda: side.group_condition("huge")),
        "members": stable(lambda: _states(side, names)),
    }
    began = time.monotonic()
    side.pod("single")
    record["single_bound"] = bool(wait_for(lambda: side.bound(["single"]), 10, 0.05))
    record["single_took"] = time.monotonic() - began
    record["gang_bound"] = len(side.bound(names))
    return record


def test_a_gang_one_pod_larger_than_the_cluster(gang_cluster: GangCluster) -> None:
    """Nothing of it bound, the condition and every member Unschedulable with kube's texts,
    and a plain pod created afterwards binds at once (the gang blocks no queue)."""
    with Case.open(gang_cluster) as case:
        case.nodes(2, "4")
        kube, ours = case.run(_too_big)
    took = {KUBE: kube.pop("single_took"), OURS: ours.pop("single_took")}
    print(f"a plain pod beside a rejected gang bound in: {took}")
    assert kube == ours, diff(kube, ours)
    assert kube["rejected"]
    assert kube["condition"][:2] == ("False", "Unschedulable")
    assert kube["single_bound"]
    assert kube["gang_bound"] == 0
    assert max(took.values()) < 3.0, took


CRASH = 64
"""Members of the gang a scheduler is killed in the middle of binding."""


def _killed_mid_gang(side: Side) -> dict[str, Any]:
    """A gang that fits; its scheduler SIGKILLed as it binds, then started again: how much
    was bound at the kill, and whether the gang ends whole. Ours runs with parallelism 1
    (4 binds in flight; at 16 all 64 go at once and may all land) and is killed on its first
    ``pod_bound`` line of the gang, the others' binds in flight or queued; kube-scheduler on
    the first member bound the watch shows (its binds are one goroutine each)."""
    names = _members("crash", CRASH)
    side.pod_group("crash", CRASH)
    cluster = side.cluster
    if side.name == OURS:
        cluster.ours.proc.assert_clean_exit(cluster.ours.proc.terminate())
        cluster.ours.start(parallelism=1)
    trigger = threading.Thread(
        target=_first_bound_in_log if side.name == OURS else _first_bound, args=(side,)
    )
    trigger.start()
    for name in names:
        side.pod(name, group="crash")
    trigger.join(70)
    if side.name == KUBE:
        cluster.kube.kill()
    else:
        cluster.ours.proc.kill()
        cluster.ours.proc.terminate()  # closes its log
    at_kill = len(stable(lambda: side.bound(names), quiet=0.3))
    if side.name == KUBE:
        cluster.kube.start()
    else:
        cluster.ours.start()
    whole = wait_for(lambda: len(side.bound(names)) == CRASH, 60)
    return {"at_kill": at_kill, "whole": bool(whole), "bound": len(side.bound(names))}


def _first_bound(side: Side) -> None:
    """Returns once a pod of the side's namespace is bound (a watch)."""

    def bound(events: list[dict[str, Any]]) -> bool:
        return any(e["object"]["spec"].get("nodeName") for e in events if "object" in e)

    pods = f"/api/v1/namespaces/{side.namespace}/pods"
    side.cluster.api.watch(pods, {}, seconds=60, until=bound)


def _first_bound_in_log(side: Side) -> None:
    """Returns once ours logged a member of ``crash`` bound (the log's new lines only)."""
    path = side.cluster.ours.proc.log_path
    needle = f'"pod": "{side.namespace}/crash-'
    deadline = time.monotonic() + 60
    with path.open() as log:
        log.seek(0, 2)
        seen = ""
        while time.monotonic() < deadline:
            seen = seen[-1000:] + log.read()
            lines = seen.splitlines()
            if any(needle in line and '"event": "pod_bound"' in line for line in lines):
                return
            time.sleep(0.002)


def test_a_scheduler_killed_mid_gang_leaves_no_gang_partly_bound(
    gang_cluster: GangCluster,
) -> None:
    """SIGKILL while a 64-pod gang is bound, then a restart: the gang ends whole (the new
    process places the rest as members of a group already partly scheduled), no pod bound
    twice by us; the same with kube-scheduler."""
    with Case.open(gang_cluster) as case:
        case.nodes(4, "20")
        kube, ours = case.run(_killed_mid_gang)
    print(f"bound at the kill: kube-scheduler {kube['at_kill']}, ours {ours['at_kill']}")
    assert 0 < ours["at_kill"] < CRASH, ours  # killed with the gang partly bound
    assert kube["whole"], kube
    assert ours["whole"], ours
    counts = bound_once(gang_cluster.ours.procs)
    assert not [pod for pod, n in counts.items() if n > 1], counts
