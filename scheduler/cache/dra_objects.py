"""DraObjects: the Dynamic Resource Allocation objects the scheduler reads (DeviceClasses,
ResourceClaims, ResourceSlices), the claims' assume layer and the allocations in flight.

kube-scheduler keeps claims in an *assume cache* (its DRA manager's claim tracker): PreBind
stores the claim it has just written (allocation, ``reservedFor``) until the informer
delivers that version or a newer one, so that the next pod's cycle already sees the devices
taken; :meth:`DraObjects.claim` answers with that view, :meth:`api_claim` with the API's.
Between Reserve and the end of PreBind an allocation is *in flight* (kube's
``inFlightAllocations``): recorded here by claim uid, seen by every profile, never given
twice; a pod sharing such a claim waits.

Every change of a claim as seen — the watch's, PreBind's assumption, Unreserve's restore —
is handed to :attr:`DraObjects.on_claim_changed` (the event handlers' ``claim_events``
installs it), with the claim as seen before and after: kube's claim events come from its
assume cache the same way.

Observers (:class:`AllocationObserver`) hear of every change of which devices are taken —
a claim's allocation as seen, an allocation entering or leaving the in-flight set — so the
DynamicResources plugin keeps its allocator's ``AllocatedState`` current instead of gathering
every claim for every pod (kube's ``allocatedDevices`` event handlers do the same).

Pending pods of ours that use claims are indexed by the claims they name (:meth:`track_pod`),
so that a claim's arrival or change re-checks exactly them (kube's ResourceClaim queueing
hint, through the pod index its plugin adds).

Neighbours: ``model.dra_claims``/``dra_devices`` (the records), ``cache.snapshot`` (lends this
to plugins), ``plugins.dynamic_resources`` (reads it, signals in-flight allocations),
``cycle.claim_events`` (feeds claims), ``kube.claim_writer`` (assumes what PreBind wrote).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scheduler.model.dra_claims import AllocationResult, DeviceClass, ResourceClaim
    from scheduler.model.dra_devices import ResourceSlice
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

__all__ = ["AllocationObserver", "ClaimNameError", "DraObjects", "claim_name", "claim_names"]


class AllocationObserver(Protocol):
    def allocation_changed(
        self, old: AllocationResult | None, new: AllocationResult | None
    ) -> None:
        """Devices of ``old`` are no longer taken through this change, those of ``new`` are
        (either may be None)."""


@dataclass(slots=True)
class _InFlight:
    claim: ResourceClaim
    """The claim as Reserve made it: its ``allocation`` is the one in flight."""
    sharers: int


class ClaimNameError(Exception):
    """kube's ``resourceclaim.Name`` error: the generated claim is not known yet."""


def claim_name(pod: Pod, index: int) -> str | None:
    """kube's ``resourceclaim.Name`` for ``pod.resource_claims[index]``: the claim's name, or
    None when kube-controller-manager generated none (nothing to wait for); raises
    :class:`ClaimNameError` with kube's text while the pod's status lacks the entry."""
    pod_claim = pod.resource_claims[index]
    if pod_claim.resource_claim_name is not None:
        return pod_claim.resource_claim_name
    for status in pod.resource_claim_statuses:
        if status.name == pod_claim.name:
            return status.resource_claim_name
    raise ClaimNameError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')


def claim_names(pod: Pod) -> list[str]:
    """The names of the claims ``pod`` uses that are known (kube's pod index by claim)."""
    found: list[str] = []
    for index in range(len(pod.resource_claims)):
        try:
            name = claim_name(pod, index)
        except ClaimNameError:
            continue
        if name is not None and name not in found:
            found.append(name)
    return found


def _version(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


class DraObjects:
    """Classes, claims (with the assume layer), slices, in-flight allocations and the pending
    pods that use claims; see the module docstring."""

    __slots__ = (
        "_assumed",
        "_claims",
        "_classes",
        "_in_flight",
        "_pods",
        "_slices",
        "_waiting",
        "classes_generation",
        "observers",
        "on_claim_changed",
        "slices_generation",
    )

    def __init__(self) -> None:
        self._classes: dict[str, DeviceClass] = {}
        self._claims: dict[str, ResourceClaim] = {}
        self._assumed: dict[str, ResourceClaim] = {}
        self._in_flight: dict[str, _InFlight] = {}
        self._slices: dict[str, ResourceSlice] = {}
        self._pods: dict[Uid, Pod] = {}
        self._waiting: dict[str, set[Uid]] = {}
        self.slices_generation = 0
        """Bumped on every slice change: what is derived from the slices is stale."""
        self.classes_generation = 0
        self.observers: list[AllocationObserver] = []
        self.on_claim_changed: (
            Callable[[str, ResourceClaim | None, ResourceClaim | None], None] | None
        ) = None
        """Called with (key, before, after) after every change of a claim as seen."""

    # -- device classes ---------------------------------------------------------------------

    def set_class(self, device_class: DeviceClass) -> None:
        self._classes[device_class.name] = device_class
        self.classes_generation += 1

    def remove_class(self, name: str) -> None:
        if self._classes.pop(name, None) is not None:
            self.classes_generation += 1

    def device_class(self, name: str) -> DeviceClass | None:
        return self._classes.get(name)

    @property
    def classes(self) -> dict[str, DeviceClass]:
        """Every DeviceClass by name (read only: the allocator's class lister)."""
        return self._classes

    # -- slices -----------------------------------------------------------------------------

    def set_slice(self, resource_slice: ResourceSlice) -> None:
        self._slices[resource_slice.name] = resource_slice
        self.slices_generation += 1

    def remove_slice(self, name: str) -> None:
        if self._slices.pop(name, None) is not None:
            self.slices_generation += 1

    def slices(self) -> list[ResourceSlice]:
        return list(self._slices.values())

    # -- claims (write side: the watch, PreBind's writer) -----------------------------------

    def set_claim(self, claim: ResourceClaim) -> tuple[ResourceClaim | None, ResourceClaim]:
        """The API's version of ``claim``; it replaces an assumed one that is not newer.
        Returns the claim as seen before and after."""
        key = claim.key
        before = self._view(key)
        self._claims[key] = claim
        assumed = self._assumed.get(key)
        if assumed is not None and _version(assumed.resource_version) <= _version(
            claim.resource_version
        ):
            del self._assumed[key]
        after = self._view(key)
        assert after is not None
        self._seen(key, before, after)
        return before, after

    def remove_claim(self, key: str) -> ResourceClaim | None:
        """The claim is gone from the API; returns it as it was seen (None: unknown)."""
        before = self._view(key)
        self._claims.pop(key, None)
        self._assumed.pop(key, None)
        self._seen(key, before, None)
        return before

    def assume(self, claim: ResourceClaim) -> tuple[ResourceClaim | None, ResourceClaim] | None:
        """kube's ``AssumeClaimAfterAPICall``: ``claim`` as the API answered a write of ours is
        seen until the watch brings that version or a newer one. None (nothing assumed) when
        the claim is unknown or the cache holds a newer version already (kube: "out of
        sync"); else the claim as seen before and after."""
        key = claim.key
        api = self._claims.get(key)
        if api is None or _version(claim.resource_version) < _version(api.resource_version):
            return None
        before = self._view(key)
        self._assumed[key] = claim
        self._seen(key, before, claim)
        return before, claim

    def restore(self, key: str) -> tuple[ResourceClaim | None, ResourceClaim | None] | None:
        """kube's ``AssumedClaimRestore``: the API's version is seen again. None when nothing
        was assumed; else the claim as seen before and after."""
        if key not in self._assumed:
            return None
        before = self._view(key)
        del self._assumed[key]
        after = self._view(key)
        self._seen(key, before, after)
        return before, after

    # -- claims (read side) -----------------------------------------------------------------

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim as plugins see it: the assumed version if any, else the API's."""
        return self._view(f"{namespace}/{name}")

    def api_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self._claims.get(f"{namespace}/{name}")

    def claims(self) -> Iterator[ResourceClaim]:
        """Every claim as seen."""
        for key, claim in self._claims.items():
            yield self._assumed.get(key, claim)

    def _view(self, key: str) -> ResourceClaim | None:
        assumed = self._assumed.get(key)
        return assumed if assumed is not None else self._claims.get(key)

    # -- allocations in flight (Reserve … PreBind) ------------------------------------------

    def pending_allocation(self, uid: str) -> AllocationResult | None:
        """kube's ``GetPendingAllocation``."""
        found = self._in_flight.get(uid)
        return None if found is None else found.claim.allocation

    def signal_pending_allocation(self, claim: ResourceClaim) -> None:
        """kube's ``SignalClaimPendingAllocation``: ``claim`` (with its allocation) is in
        flight; another pod sharing it counts as one more sharer. Nothing is recorded when
        the claim as seen is allocated already (the pod's cycle was stale: PreBind fails)."""
        found = self._in_flight.get(claim.uid)
        if found is not None:
            found.sharers += 1
            return
        seen = self._view(claim.key)
        if seen is not None and seen.uid == claim.uid and seen.allocation is not None:
            return
        self._in_flight[claim.uid] = _InFlight(claim, 1)
        self._notify(None, claim.allocation)

    def remove_pending_allocation(self, uid: str, *, force: bool) -> bool:
        """kube's ``MaybeRemoveClaimPendingAllocation``: one sharer less (all of them with
        ``force``); True when the allocation left the in-flight set."""
        found = self._in_flight.get(uid)
        if found is None:
            return False
        if not force and found.sharers > 1:
            found.sharers -= 1
            return False
        del self._in_flight[uid]
        self._notify(found.claim.allocation, None)
        return True

    def allocations(self) -> Iterator[AllocationResult]:
        """Every allocation that takes devices now: claims as seen, and those in flight."""
        for claim in self.claims():
            if claim.allocation is not None:
                yield claim.allocation
        for flight in self._in_flight.values():
            if flight.claim.allocation is not None:
                yield flight.claim.allocation

    def _seen(self, key: str, before: ResourceClaim | None, after: ResourceClaim | None) -> None:
        old = before.allocation if before is not None else None
        new = after.allocation if after is not None else None
        if old is not new and old != new:
            self._notify(old, new)
        if self.on_claim_changed is not None and before is not after:
            self.on_claim_changed(key, before, after)

    def _notify(self, old: AllocationResult | None, new: AllocationResult | None) -> None:
        for observer in self.observers:
            observer.allocation_changed(old, new)

    # -- pending pods that use claims -------------------------------------------------------

    def track_pod(self, pod: Pod) -> None:
        """``pod`` (pending, ours, with claims) waits on the claims it names."""
        self.untrack_pod(pod.uid)
        self._pods[pod.uid] = pod
        for name in claim_names(pod):
            self._waiting.setdefault(f"{pod.namespace}/{name}", set()).add(pod.uid)

    def untrack_pod(self, uid: Uid) -> None:
        pod = self._pods.pop(uid, None)
        if pod is None:
            return
        for name in claim_names(pod):
            key = f"{pod.namespace}/{name}"
            waiting = self._waiting.get(key)
            if waiting is not None:
                waiting.discard(uid)
                if not waiting:
                    del self._waiting[key]

    def pods_using(self, key: str) -> list[Pod]:
        """The tracked pods that name the claim ``namespace/name``."""
        return [self._pods[uid] for uid in self._waiting.get(key, ())]
