"""Pod signatures (KEP-5598): equal signature ⇒ equal feasibility and scores on any node set.

A signature is canonical bytes built from the fragments every Filter/Score plugin of the
profile returns from ``sign_pod`` for exactly the pod fields it reads. ``None`` means the pod
cannot be batched: a plugin refused to sign (DynamicResources signs only pods whose resource
claims come from templates, docs/dra.md), the pod has a nominated node, resource claims
without DynamicResources in the profile, a PersistentVolumeClaim not bound yet
(:func:`claims_bound`), or it did not opt in
(``--batching``). The scheduler signs a pod once, when the event handlers queue it, and
again only when the pod changes, or the Services and controllers of its namespace do
(default topology spreading reads them). Pods the watch built from one pod template
(``Pod.template_id``) are signed once per template: they differ only in what no plugin
signs (their identity).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from scheduler.batching.exact_contracts import exact_blockers
from scheduler.framework.interfaces import ExactOnly, NarrowedForExact
from scheduler.framework.plugin_failures import plugin_raised
from scheduler.plugins.names import DYNAMIC_RESOURCES, VOLUME_BINDING

if TYPE_CHECKING:
    from scheduler.cache.volumes import Volumes
    from scheduler.framework.profile import Profile
    from scheduler.model.pod import Pod

Signature = bytes
EXACT_PREFIX = b"exact:"
"""Starts the signature of a pod only the exact batch serves (batching/exact.py)."""
OPTED_OUT = "OptedOut"
VOLUMES = "Volumes"
MEMO_CAPACITY = 1024
"""Templates whose signature a Signer keeps (cleared when full: a new burst refills it)."""


class BatchingMode(StrEnum):
    ANNOTATED = "annotated"
    """Only pods annotated ``batch-scheduler.io/batching: "true"`` are batched (default)."""
    ALL = "all"
    """Every pod is batched unless annotated ``"false"``."""
    OFF = "off"


def opted_in(pod: Pod, mode: BatchingMode) -> bool:
    """Whether ``pod`` takes part in batching under ``mode``."""
    if mode is BatchingMode.OFF:
        return False
    value = pod.batching_annotation
    if mode is BatchingMode.ALL:
        return value != "false"
    return value == "true"


@dataclass(frozen=True, slots=True)
class SignResult:
    signature: Signature | None
    refused_by: str = ""
    """Why there is no signature: a plugin name, or ``NominatedNode``/``ResourceClaims``/
    ``OptedOut``/``Volumes`` for the pod-level rules (empty when signed)."""


def claims_bound(volumes: Volumes, pod: Pod) -> bool:
    """Whether every claim of ``pod`` is bound (``volumeName`` and bind-completed).

    A pod with a claim still to bind is unsignable: which PV a WaitForFirstConsumer claim
    gets, and so which nodes fit, changes with every pod whose claims bind before it, and
    the binding is the pod's own (kube's VolumesSigner covers only the volume sources). A
    pod whose claims are all bound is signed by the volume plugins' fragment: its sources
    (claims included, with the namespace), every one but ConfigMaps and Secrets. Signed once
    when queued: a claim that binds later does not make a queued pod batchable."""
    for name in pod.claim_names:
        claim = volumes.pvc(pod.namespace, name)
        if claim is None or not claim.fully_bound:
            return False
    return True


def unsignable_plugins(profile: Profile) -> list[str]:
    """Filter/Score plugins of ``profile`` that cannot sign at all: they switch batching off."""
    signers = {p.name for p in profile.sign_plugins}
    used = [p.name for p in profile.filter_plugins] + [s.plugin.name for s in profile.score_plugins]
    return sorted({name for name in used if name not in signers})


class Signer:
    """Signs pods for one profile under one batching mode.

    If any Filter/Score plugin of the profile cannot sign, batching is off for the whole
    profile (``disabled_by`` names those plugins; the caller logs and counts it once). If
    one has no contract for the exact batch (batching/exact_contracts.py), pods only the
    exact batch could serve are unsignable, and ``exact_disabled_by`` names it as the reason.
    """

    __slots__ = (
        "_memo",
        "allocates_devices",
        "binds_volumes",
        "disabled_by",
        "exact_disabled_by",
        "mode",
        "profile",
    )

    def __init__(self, profile: Profile, mode: BatchingMode) -> None:
        self.profile = profile
        self.mode = mode
        self.disabled_by = unsignable_plugins(profile)
        self.exact_disabled_by = exact_blockers(profile)
        """The plugins that keep the exact batch from this profile (empty: it serves it)."""
        self.binds_volumes = any(p.name == VOLUME_BINDING for p in profile.filter_plugins)
        """Without VolumeBinding nothing checks a pod's claims: such pods are not batched."""
        self.allocates_devices = any(p.name == DYNAMIC_RESOURCES for p in profile.filter_plugins)
        """Only DynamicResources signs pods with resource claims (docs/dra.md)."""
        self._memo: dict[int, tuple[tuple[int, int], SignResult]] = {}
        """template id → (the Services' and controllers' generation and the identity
        labels' (cache/identity_labels.py), the result)."""

    @property
    def enabled(self) -> bool:
        return self.mode is not BatchingMode.OFF and not self.disabled_by

    @property
    def exact(self) -> bool:
        """Whether pods with an ``ExactOnly`` fragment are signed (the profile's exact batch
        serves them); otherwise they are unsignable, as in kube."""
        return self.enabled and not self.exact_disabled_by

    def sign(self, pod: Pod) -> SignResult:
        """The pod's signature, or why it has none.

        A pod of a template signed before gets that template's result while the Services
        and controllers are as they were then (``Workloads.generation``: default spreading
        reads them) and no term has come to read an identity label
        (``IdentityLabels.generation``); a nominated pod and a pod with claims are signed on
        their own (the nomination, the claims' binding and the resource claims are not the
        template's)."""
        template = pod.template_id
        if not template or pod.nominated_node_name or pod.claim_names or pod.resource_claims:
            return self._sign(pod)
        snapshot = self.profile.snapshot
        generation = (snapshot.workloads.generation, snapshot.identity_labels.generation)
        memo = self._memo.get(template)
        if memo is not None and memo[0] == generation:
            return memo[1]
        result = self._sign(pod)
        if len(self._memo) >= MEMO_CAPACITY:
            self._memo.clear()
        self._memo[template] = (generation, result)
        return result

    def _sign(self, pod: Pod) -> SignResult:
        if self.disabled_by:
            return SignResult(None, self.disabled_by[0])
        if not opted_in(pod, self.mode):
            return SignResult(None, OPTED_OUT)
        if pod.nominated_node_name:
            return SignResult(None, "NominatedNode")
        if pod.has_resource_claims and not self.allocates_devices:
            return SignResult(None, "ResourceClaims")
        if pod.claim_names and (
            not self.binds_volumes or not claims_bound(self.profile.snapshot.volumes, pod)
        ):
            return SignResult(None, VOLUMES)
        fragments: list[tuple[str, object]] = []
        narrowed: list[tuple[int, object]] = []
        exact_by = ""
        for plugin in self.profile.sign_plugins:
            try:
                fragment = plugin.sign_pod(pod)
                hash(fragment)  # a fragment must be hashable (SignPlugin's contract)
            except Exception as exc:  # a plugin's bug: this pod is not batched, that is all
                plugin_raised(plugin.name, "Sign", exc)
                return SignResult(None, plugin.name)
            if fragment is None:
                return SignResult(None, plugin.name)
            if isinstance(fragment, ExactOnly):
                exact_by = exact_by or plugin.name
                fragment = fragment.fragment
            elif isinstance(fragment, NarrowedForExact):
                narrowed.append((len(fragments), fragment.exact))
                fragment = fragment.fragment
            fragments.append((plugin.name, fragment))
        if exact_by and not self.exact:
            # The plugin without an exact contract is why, not the one asking for it.
            return SignResult(None, (self.exact_disabled_by or [exact_by])[0])
        if exact_by and pod.claim_names:
            # Claims are read across nodes (ReadWriteOncePod): not served exactly.
            return SignResult(None, VOLUMES)
        if exact_by:
            for at, exact in narrowed:
                fragments[at] = (fragments[at][0], exact)
        # repr of nested tuples of str/int is canonical and deterministic; the profile name
        # keeps signatures of different profiles apart.
        signed = repr((self.profile.scheduler_name, tuple(fragments))).encode()
        return SignResult(EXACT_PREFIX + signed if exact_by else signed)


def is_exact(signature: Signature) -> bool:
    """Whether only the exact batch may serve pods of ``signature``."""
    return signature.startswith(EXACT_PREFIX)
