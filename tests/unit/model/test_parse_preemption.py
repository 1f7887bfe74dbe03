"""What preemption reads from pods and PodDisruptionBudgets, parsed and checked."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cache.disruption_budgets import DisruptionBudgets
from scheduler.model.errors import ModelError
from scheduler.model.parse import pdb_from_raw, pod_from_raw
from tests.builders import make_pod


def _budget(**over: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "7"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": 2},
        "status": {"disruptionsAllowed": 1, "disruptedPods": {"web-0": "2026-01-01T00:00:00Z"}},
    }
    raw.update(over)
    return raw


def test_pod_preemption_fields() -> None:
    """preemptionPolicy, startTime and the DisruptionTarget condition are read."""
    raw = make_pod("p")
    raw["spec"]["preemptionPolicy"] = "Never"
    raw["status"]["startTime"] = "2026-01-01T00:00:01Z"
    raw["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
    ]
    pod = pod_from_raw(raw)
    assert (pod.preemption_policy, pod.start_time, pod.preempted) == (
        "Never",
        "2026-01-01T00:00:01Z",
        True,
    )
    plain = pod_from_raw(make_pod("q"))
    assert (plain.preemption_policy, plain.start_time, plain.preempted) == (
        "PreemptLowerPriority",
        "",
        False,
    )


@pytest.mark.parametrize(
    ("condition", "preempted"),
    [
        pytest.param({"status": "False", "reason": "PreemptionByScheduler"}, False, id="false"),
        pytest.param({"status": "True", "reason": "EvictionByEvictionAPI"}, False, id="evicted"),
    ],
)
def test_other_disruption_targets_are_not_preemption(
    condition: dict[str, str], preempted: bool
) -> None:
    raw = make_pod("p")
    raw["status"]["conditions"] = [{"type": "DisruptionTarget", **condition}]
    assert pod_from_raw(raw).preempted is preempted


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        pytest.param(
            "preemptionPolicy",
            "Sometimes",
            "spec.preemptionPolicy: must be 'PreemptLowerPriority' or 'Never', got 'Sometimes'",
            id="unknown-policy",
        ),
        pytest.param(
            "startTime",
            "yesterday",
            "status.startTime: must be an RFC 3339 time",
            id="bad-start-time",
        ),
    ],
)
def test_bad_preemption_fields_are_named(field: str, value: str, message: str) -> None:
    raw = make_pod("p")
    (raw["spec"] if field == "preemptionPolicy" else raw["status"])[field] = value
    with pytest.raises(ModelError) as raised:
        pod_from_raw(raw)
    assert message in str(raised.value)
    assert "Pod default/p" in str(raised.value)


def test_pdb_is_parsed() -> None:
    budget = pdb_from_raw(_budget())
    assert budget.key == "shop/web"
    assert budget.disruptions_allowed == 1
    assert budget.disrupted_pods == frozenset({"web-0"})
    assert budget.selects("shop", {"app": "web", "x": "y"})
    assert not budget.selects("default", {"app": "web"})
    assert not budget.selects("shop", {"app": "db"})


@pytest.mark.parametrize(
    "spec",
    [pytest.param({}, id="no-selector"), pytest.param({"selector": {}}, id="empty-selector")],
)
def test_pdb_without_selector_selects_nothing(spec: dict[str, Any]) -> None:
    """kube's preemption skips budgets whose selector is missing or empty."""
    assert not pdb_from_raw(_budget(spec=spec)).selects("shop", {"app": "web"})


@pytest.mark.parametrize(
    ("over", "message"),
    [
        pytest.param(
            {"status": {"disruptionsAllowed": "one"}},
            "PodDisruptionBudget shop/web: status.disruptionsAllowed",
            id="allowed-not-an-integer",
        ),
        pytest.param(
            {"status": {"disruptionsAllowed": -1}},
            "status.disruptionsAllowed: must not be negative, got -1",
            id="allowed-negative",
        ),
        pytest.param(
            {"spec": {"selector": {"matchLabels": {"app": 3}}}},
            "PodDisruptionBudget shop/web: spec.selector",
            id="bad-selector",
        ),
        pytest.param(
            {"metadata": {"namespace": "shop"}},
            "PodDisruptionBudget shop/<unnamed>: metadata.name",
            id="no-name",
        ),
    ],
)
def test_bad_pdb_is_named(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError) as raised:
        pdb_from_raw(_budget(**over))
    assert message in str(raised.value)


def test_disruption_budgets_upsert_and_remove() -> None:
    budgets = DisruptionBudgets()
    budgets.add(pdb_from_raw(_budget()))
    budgets.add(pdb_from_raw(_budget(status={"disruptionsAllowed": 0})))
    assert len(budgets) == 1
    assert budgets.list()[0].disruptions_allowed == 0
    assert budgets.keys() == {"shop/web"}
    budgets.remove("shop", "web")
    assert budgets.list() == []
