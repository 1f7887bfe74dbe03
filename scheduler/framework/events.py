"""Cluster events that may make an unschedulable pod schedulable, and the wake table.

kube-scheduler lets each plugin name the events that may undo its own rejection
(``EnqueueExtensions.EventsToRegister``); the queue then moves an unschedulable pod only on
an event that one of the plugins that rejected it registered. Our events are coarser than
kube's (one ``NODE_UPDATE`` for every kind of node change; no events for the pending pod
itself, the TargetPod events: a queued pod that changes re-enters the active pool anyway), so
each plugin declares the ``ClusterEvent`` covering any kube event it registers. Of an
assigned pod's updates only the two that an in-tree plugin registers are raised, label
changes and request scale-downs (kube's ``PodSchedulingPropertiesChange``); kube's generic
AssignedPod/Update and UpdatePodScaleUp, which no in-tree plugin registers with kube v1.37's
default feature gates, are not. Queueing hints are not modelled: an event wakes every pod a
registering plugin rejected, where kube's hint may still skip it (more retries, never
fewer).

Plugins import this module (it sits below them); framework/wakes.py builds from their
declarations the table the queue reads.
"""

from __future__ import annotations

from enum import StrEnum


class ClusterEvent(StrEnum):
    """Cluster changes that can make an unschedulable pod schedulable."""

    NODE_ADD = "NodeAdd"
    NODE_UPDATE = "NodeUpdate"
    """Anything a plugin reads changed on a node: labels, taints, allocatable, unschedulable."""
    NODE_DELETE = "NodeDelete"
    """A node left: a topology domain may have gone with it (PodTopologySpread's minimum)."""
    ASSIGNED_POD_ADD = "AssignedPodAdd"
    ASSIGNED_POD_LABEL_UPDATE = "AssignedPodUpdatePodLabel"
    """An assigned pod's labels changed: it may match, or stop matching, affinity terms and
    spreading selectors."""
    ASSIGNED_POD_SCALE_DOWN = "AssignedPodUpdatePodScaleDown"
    """An assigned pod's requests shrank (in-place resize) or lost a resource: it freed some."""
    ASSIGNED_POD_DELETE = "AssignedPodDelete"
    """An assigned pod was deleted or finished (Succeeded/Failed): it freed resources."""
    STORAGE_CHANGE = "StorageChange"
    """A PersistentVolume, claim, StorageClass or CSINode was added, changed or deleted."""
    RESOURCE_CLAIM_DEALLOCATED = "ResourceClaimDeallocated"
    """A ResourceClaim lost its allocation, or an allocated one was deleted: its devices are
    free (kube's ResourceClaim Update/Delete, for which its hint queues every pod). A claim's
    other changes re-check only the pods that use it (``cycle/claim_events.py``)."""
    RESOURCE_SLICE_CHANGE = "ResourceSliceChange"
    """A ResourceSlice was added or changed: devices may have appeared."""
    DEVICE_CLASS_CHANGE = "DeviceClassChange"
    """A DeviceClass was added or changed: a pod may have waited for it."""
