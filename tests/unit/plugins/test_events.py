"""Each plugin declares the cluster events that may undo its rejection (kube's
EventsToRegister), and the wake table of the default profile is kube v1.37's, mapped onto our
coarser events."""

from __future__ import annotations

import random

import pytest

from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import wakes
from scheduler.framework.config import default_config
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin
from scheduler.framework.profile import Profile, build_profile
from scheduler.plugins import in_tree_registry, names

REGISTRY = in_tree_registry()

NODE_ADD = ClusterEvent.NODE_ADD
NODE_UPDATE = ClusterEvent.NODE_UPDATE
NODE_DELETE = ClusterEvent.NODE_DELETE
POD_ADD = ClusterEvent.ASSIGNED_POD_ADD
POD_LABEL = ClusterEvent.ASSIGNED_POD_LABEL_UPDATE
POD_SCALE_DOWN = ClusterEvent.ASSIGNED_POD_SCALE_DOWN
POD_DELETE = ClusterEvent.ASSIGNED_POD_DELETE
STORAGE = ClusterEvent.STORAGE_CHANGE
CLAIM_DEALLOCATED = ClusterEvent.RESOURCE_CLAIM_DEALLOCATED
SLICE = ClusterEvent.RESOURCE_SLICE_CHANGE
DEVICE_CLASS = ClusterEvent.DEVICE_CLASS_CHANGE

KUBE_EVENTS: dict[str, frozenset[ClusterEvent]] = {
    # Node/Add|UpdateNodeTaint
    names.NODE_UNSCHEDULABLE: frozenset({NODE_ADD, NODE_UPDATE}),
    # Node/Add
    names.NODE_NAME: frozenset({NODE_ADD}),
    # Node/Add|UpdateNodeTaint
    names.TAINT_TOLERATION: frozenset({NODE_ADD, NODE_UPDATE}),
    # Node/Add|UpdateNodeLabel
    names.NODE_AFFINITY: frozenset({NODE_ADD, NODE_UPDATE}),
    # AssignedPod/Delete, Node/Add
    names.NODE_PORTS: frozenset({NODE_ADD, POD_DELETE}),
    # AssignedPod/Delete, Node/Add|UpdateNodeAllocatable, AssignedPod/UpdatePodScaleDown
    # (InPlacePodVerticalScaling, GA), TargetPod/UpdatePodScaleDown (the pod itself: requeued)
    names.NODE_RESOURCES_FIT: frozenset({NODE_ADD, NODE_UPDATE, POD_SCALE_DOWN, POD_DELETE}),
    # AssignedPod/Delete, Node/Add, PersistentVolumeClaim/Add
    names.VOLUME_RESTRICTIONS: frozenset({NODE_ADD, POD_DELETE, STORAGE}),
    # CSINode/Add|Update, AssignedPod/Delete, PersistentVolumeClaim/Add, VolumeAttachment/Delete
    names.NODE_VOLUME_LIMITS: frozenset({POD_DELETE, STORAGE}),
    # StorageClass, PVC, PV, CSINode, CSIDriver, CSIStorageCapacity; Node/Add|UpdateNodeLabel
    names.VOLUME_BINDING: frozenset({NODE_ADD, NODE_UPDATE, STORAGE}),
    # StorageClass/Add, PVC, PV; Node/Add|UpdateNodeLabel
    names.VOLUME_ZONE: frozenset({NODE_ADD, NODE_UPDATE, STORAGE}),
    # AssignedPod/Add|UpdatePodLabel|Delete, Node/Add|Delete|UpdateNodeLabel|UpdateNodeTaint
    names.POD_TOPOLOGY_SPREAD: frozenset(
        {NODE_ADD, NODE_UPDATE, NODE_DELETE, POD_ADD, POD_LABEL, POD_DELETE}
    ),
    # AssignedPod/Add|UpdatePodLabel|Delete, Node/Add|UpdateNodeLabel
    names.INTER_POD_AFFINITY: frozenset({NODE_ADD, NODE_UPDATE, POD_ADD, POD_LABEL, POD_DELETE}),
    # AssignedPod/Delete (SchedulerAsyncPreemption, on by default since v1.33)
    names.DEFAULT_PREEMPTION: frozenset({POD_DELETE}),
    # Node/Add|UpdateNodeLabel|UpdateNodeAllocatable, ResourceClaim/Add|Update|Delete (its
    # hint: a deallocation for every pod, the rest for the pods using the claim, which
    # cycle/claim_events.py re-checks itself), TargetPod/UpdatePodGeneratedResourceClaim (the
    # pod's own update: requeued), DeviceClass/Add|Update, ResourceSlice/Add|Update
    names.DYNAMIC_RESOURCES: frozenset(
        {NODE_ADD, NODE_UPDATE, CLAIM_DEALLOCATED, SLICE, DEVICE_CLASS}
    ),
}
"""kube v1.37.2's EventsToRegister per plugin (in the comments), as our events."""


def _profile() -> Profile:
    """The default profile (every in-tree plugin kube enables by default)."""
    config = default_config()
    return build_profile(
        config.profiles[0],
        registry=REGISTRY,
        snapshot=ClusterState().snapshot,
        default_percentage=config.percentage_of_nodes_to_score,
        rng=random.Random(0),
    )


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_plugins_that_can_reject_declare_their_events(name: str) -> None:
    """A plugin with PreFilter or Filter declares its events (else any event wakes its pods),
    and they are kube's."""
    plugin = REGISTRY[name]({}, _profile())
    if isinstance(plugin, PreFilterPlugin | FilterPlugin):
        assert isinstance(plugin, EnqueueExtensions)
    if isinstance(plugin, EnqueueExtensions):
        assert frozenset(plugin.events_to_register()) == KUBE_EVENTS[name]
    else:
        assert name not in KUBE_EVENTS  # score-only: kube declares nothing either


def test_default_profile_table_is_kubes() -> None:
    """The table built from the default profile maps each event to the plugins kube
    registers for it."""
    table = wakes.wake_table(_profile().plugins)
    expected = {
        event: frozenset(name for name, declared in KUBE_EVENTS.items() if event in declared)
        for event in ClusterEvent
    }
    assert dict(table.registered) == expected
    assert table.declared == frozenset(KUBE_EVENTS)


@pytest.mark.parametrize(
    ("event", "rejected_by", "woken"),
    [
        pytest.param(NODE_UPDATE, {names.TAINT_TOLERATION}, True, id="taint-on-node-update"),
        pytest.param(POD_DELETE, {names.TAINT_TOLERATION}, False, id="taint-not-on-pod-delete"),
        pytest.param(POD_DELETE, {names.NODE_RESOURCES_FIT}, True, id="fit-on-pod-delete"),
        pytest.param(POD_ADD, {names.NODE_RESOURCES_FIT}, False, id="fit-not-on-pod-add"),
        pytest.param(NODE_UPDATE, {names.NODE_PORTS}, False, id="ports-not-on-node-update"),
        pytest.param(NODE_DELETE, {names.POD_TOPOLOGY_SPREAD}, True, id="spread-on-node-delete"),
        pytest.param(NODE_DELETE, {names.NODE_RESOURCES_FIT}, False, id="fit-not-on-node-delete"),
        pytest.param(POD_LABEL, {names.INTER_POD_AFFINITY}, True, id="affinity-on-pod-label"),
        pytest.param(POD_LABEL, {names.NODE_RESOURCES_FIT}, False, id="fit-not-on-pod-label"),
        pytest.param(POD_SCALE_DOWN, {names.NODE_RESOURCES_FIT}, True, id="fit-on-scale-down"),
        pytest.param(
            POD_SCALE_DOWN, {names.POD_TOPOLOGY_SPREAD}, False, id="spread-not-on-scale-down"
        ),
        pytest.param(NODE_ADD, {names.NODE_VOLUME_LIMITS}, False, id="limits-wait-for-csinode"),
        pytest.param(STORAGE, {names.NODE_VOLUME_LIMITS}, True, id="limits-on-csinode"),
        pytest.param(SLICE, {names.DYNAMIC_RESOURCES}, True, id="dra-on-new-devices"),
        pytest.param(CLAIM_DEALLOCATED, {names.DYNAMIC_RESOURCES}, True, id="dra-on-freed-devices"),
        pytest.param(SLICE, {names.NODE_RESOURCES_FIT}, False, id="fit-not-on-new-devices"),
        pytest.param(
            POD_ADD, {names.NODE_RESOURCES_FIT, names.INTER_POD_AFFINITY}, True, id="any-rejector"
        ),
        pytest.param(STORAGE, set(), True, id="no-plugin-named-wakes-on-anything"),
        pytest.param(STORAGE, {"OutOfTree"}, True, id="undeclared-plugin-wakes-on-anything"),
        pytest.param(
            STORAGE, {"OutOfTree", names.NODE_NAME}, True, id="one-undeclared-rejector-suffices"
        ),
    ],
)
def test_default_profile_wakes(event: ClusterEvent, rejected_by: set[str], woken: bool) -> None:
    """kube's rule: a rejected pod moves on an event one of its rejectors registered; a pod
    no declaring plugin rejected moves on every event."""
    table = wakes.wake_table(_profile().plugins)
    assert table.worth_requeuing(event, frozenset(rejected_by)) is woken


class _Silent:
    """Declares that no cluster event can help (kube: EventsToRegister returns nothing)."""

    name = "Silent"

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return ()


class _Undeclared:
    name = "Undeclared"


def test_an_empty_declaration_is_not_an_undeclared_plugin() -> None:
    """A plugin that declares no event is woken by none; one that declares nothing at all
    (no EnqueueExtensions) by every event."""
    table = wakes.wake_table([_Silent(), _Undeclared()])
    assert table.declared == frozenset({"Silent"})
    for event in ClusterEvent:
        assert not table.worth_requeuing(event, frozenset({"Silent"}))
        assert table.worth_requeuing(event, frozenset({"Undeclared"}))
