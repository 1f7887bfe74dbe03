"""Plugin protocols, one per extension point we run, and the Handle plugins get.

Plugins are synchronous and do no I/O (a test walks their AST). Method argument order is
the fixed contract, as in kube-scheduler's framework/interface.go.

Contracts:
- ``pre_filter`` may return a set of node names (the only nodes worth filtering, e.g.
  NodeAffinity for ``metadata.name`` fields) or None for all; Skip means its Filter is
  not run this cycle; Unschedulable* fails the pod on every node.
- ``filter`` returns SUCCESS or a rejecting Status whose reasons are kube-scheduler's
  strings (they are counted verbatim into the FailedScheduling message). It must not
  mutate ``node_info`` or the CycleState values written in PreFilter.
- ``add_pod``/``remove_pod`` (PreFilterExtensions, kube's AddPod/RemovePod) update this
  cycle's PreFilter state for one pod placed on / taken off ``node_info``, so that a dry
  run (preemption, nominated pods) never re-runs PreFilter. They replace the state value
  with a new one (copy-on-write) and never mutate it: a cloned CycleState shares values
  with its original. Only plugins whose PreFilter state depends on other pods need them;
  they are not called for a plugin whose PreFilter returned Skip.
- ``precheck`` (FilterPrecheck, not kube's) returns, after PreFilter, a predicate that is
  true only for nodes the plugin's Filter rejects, or None. The full pass counts such a node
  as processed without running the Filters and computes its Status only if no node fits
  (``framework.feasible``); it must never be true for a node the Filter passes.
- ``pre_score`` may return Skip (no Score for this plugin this cycle).
- ``score`` returns a raw integer score for one node; errors belong in ``pre_score``.
- ``score_nodes`` (ScoreNodesPlugin, not kube's) returns exactly ``[score(state, pod, n) for
  n in nodes]``; the full pass calls it once instead of ``score`` per node.
- ``normalize_score`` rewrites ``scores`` (aligned with ``nodes``) in place into
  0..MAX_NODE_SCORE.
- ``sign_pod`` returns the canonical fragment of exactly the pod fields the plugin reads
  (hashable: tuples, strings, ints), or None when the pod cannot be signed (KEP-5598).
- ``post_filter`` runs only after a pod fit no node; it may return a node to nominate and
  the victims to evict there. It does no I/O: the cycle hands the victims to its
  ``Preemptor`` port, which deletes them. Success means "nominated"; Unschedulable means
  PostFilter could not help; the pod is requeued as unschedulable either way.
- ``sign_pod`` may wrap its fragment in ``ExactOnly``: the pod batches only on the exact
  path (``ExactDomainPlugin``, batching/exact.py), never on kube's hint and rescore.
- ``pre_enqueue``, ``reserve``/``unreserve``, ``permit``, ``pre_bind_pre_flight``/``pre_bind``
  and ``post_bind`` are kube's points around the bind; framework/binding_points.py runs them
  (order, Status handling) and cycle/binding_cycle.py holds the binding cycle. A Permit plugin
  may answer Wait; the pod is then a ``WaitingPod`` that any plugin can allow or reject
  through the Handle (``get_waiting_pod``, ``iterate_over_waiting_pods``).
- ``events_to_register`` (EnqueueExtensions, kube's EventsToRegister) names the cluster events
  that may make a pod this plugin rejected schedulable; the queue moves such a pod only on
  one of them. A plugin that can reject (PreFilter, Filter) should declare them: without it,
  every event wakes its pods. An empty answer means no event can help (only a change of the
  pod itself, or the periodic flush).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, runtime_checkable

from scheduler.framework.status import Status, unresolvable

if TYPE_CHECKING:
    import random

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.diagnosis import FitError
    from scheduler.framework.events import ClusterEvent
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

T = TypeVar("T")

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

PluginArgs = Mapping[str, object]
"""A plugin's ``pluginConfig`` args as read from the configuration file (validated by the
plugin's factory, which raises ``framework.config.ConfigError`` naming the field)."""


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes worth filtering (None: all) and the PreFilter plugins that narrowed them
    (kube's PreFilterResult, merged over the plugins)."""

    node_names: frozenset[str] | None
    plugins: tuple[str, ...]

    def absent_nodes_status(self) -> Status:
        """The verdict on a node outside ``node_names`` (kube's absent nodes status)."""
        return unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(self.plugins))}]")


class NominatedPods(Protocol):
    """Pods nominated to nodes and not bound yet (kube's PodNominator, read side)."""

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        """The pods nominated to ``node_name`` (pending copies: ``node_name`` empty)."""
        ...

    def nominated_node_names(self) -> Collection[str]:
        """Names of the nodes that have nominated pods."""
        ...


class Handle(Protocol):
    """What the runner lends plugins: the snapshot of the current cycle, and the pieces of a
    pass that PostFilter re-runs on one node (preemption's dry run)."""

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def scheduler_name(self) -> str: ...

    @property
    def nominator(self) -> NominatedPods | None: ...

    @property
    def rng(self) -> random.Random:
        """The profile's tie-break source; plugins derive their own from it, never draw."""
        ...

    def run_pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult, Status]:
        """Every PreFilter plugin into ``state`` (once per cycle or dry run)."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilterExtensions.add_pod (plugins not skipped): ``to_add`` is now on
        ``node_info`` (kube's RunPreFilterExtensionAddPod)."""
        ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilterExtensions.remove_pod (plugins not skipped): ``to_remove`` is no
        longer on ``node_info`` (kube's RunPreFilterExtensionRemovePod)."""
        ...

    def run_filters_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        """Every Filter on ``node_info``, with the nominated pods' two passes."""
        ...

    def get_waiting_pod(self, uid: Uid) -> WaitingPod | None:
        """The pod of ``uid`` if it waits at Permit in this profile."""
        ...

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        """``callback`` on each pod waiting at Permit in this profile."""
        ...

    def reject_waiting_pod(self, uid: Uid) -> bool:
        """Reject the waiting pod of ``uid`` ("removed"); False when none waits."""
        ...

    def service(self, key: ServiceKey[T]) -> T | None:
        """The port provided under ``key`` (None: none here, e.g. offline)."""
        ...


@runtime_checkable
class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, Status]: ...


@runtime_checkable
class PreFilterExtensions(Plugin, Protocol):
    """kube's PreFilterExtensions: keep PreFilter state current as pods come and go."""

    def add_pod(self, state: CycleState, pod: Pod, to_add: Pod, node_info: NodeInfo) -> Status:
        """``to_add`` was placed on ``node_info``: update ``pod``'s PreFilter state."""
        ...

    def remove_pod(
        self, state: CycleState, pod: Pod, to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """``to_remove`` was taken off ``node_info``: update ``pod``'s PreFilter state."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...


@runtime_checkable
class FilterPrecheck(Plugin, Protocol):
    def precheck(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], bool] | None:
        """A cheap test, true only for nodes this plugin's Filter rejects; None: none."""
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int: ...


@runtime_checkable
class ScoreNodesPlugin(ScorePlugin, Protocol):
    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """``score`` for each of ``nodes``, in order, in one call."""
        ...


@runtime_checkable
class NormalizeScorePlugin(Plugin, Protocol):
    def normalize_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> Status: ...


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What PostFilter decided (kube's PostFilterResult plus the victims to evict)."""

    status: Status
    nominated_node: str | None = None
    """The node to nominate; "" clears a nomination; None leaves it as it is."""
    victims: tuple[Pod, ...] = ()
    """Pods to evict on ``nominated_node``, most important first."""
    pdb_violations: int = 0


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: Pod, fit: FitError) -> PostFilterResult: ...


@runtime_checkable
class PlacementFeasiblePlugin(Plugin, Protocol):
    """kube's PlacementFeasible (GangScheduling): asked by the group cycle before the first
    member and after each whether the group's minimum can still be reached."""

    def placement_feasible(self, min_count: int, scheduled: int, remaining: int) -> Status:
        """Unschedulable: it cannot (the cycle stops); Wait: not yet reached; Success."""
        ...


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    def sign_pod(self, pod: Pod) -> Hashable | None: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Collection[ClusterEvent]:
        """The events that may make a pod this plugin rejected schedulable."""
        ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status:
        """Before the pod enters the queue: anything but SUCCESS keeps it out (gated) until
        it changes. Cheap and pure: it runs in the watch's event handling."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The pod is assumed on ``node_name``: take what the plugin tracks for it. A
        failure stops the pod's cycle; then ``unreserve`` runs for every Reserve plugin."""
        ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Give back what ``reserve`` took; idempotent, and called even when this plugin's
        ``reserve`` was not (a plugin before it failed)."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """SUCCESS, a rejection, or ``Status(Code.WAIT)`` with the longest wait in seconds
        (the float; ignored otherwise): the pod is held, its resources assumed, until a
        plugin allows or rejects it through the Handle's waiting pods."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """SUCCESS when ``pre_bind`` has work for this pod, SKIP when not; cheap, no I/O."""
        ...

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | Awaitable[Status]:
        """Before the Binding: SUCCESS or a failure (the pod is unreserved and retried). It
        may return an awaitable made by a port the Handle lends (``service``), never its own
        coroutine: plugins stay synchronous."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """The pod is bound (informational, e.g. to clean up)."""
        ...


class WaitingPod(Protocol):
    """A pod held at Permit (kube's WaitingPod)."""

    @property
    def pod(self) -> Pod: ...

    def pending_plugins(self) -> list[str]:
        """The Permit plugins that have not allowed it yet."""
        ...

    def allow(self, plugin: str) -> None:
        """``plugin`` allows it; once every waiting plugin has, the pod goes on to PreBind."""
        ...

    def reject(self, plugin: str, message: str) -> bool:
        """Reject it (Unschedulable, ``message``); False when it was decided already."""
        ...


class ServiceKey(Generic[T]):
    """A typed key for a port the composition root lends plugins (``Handle.service``), e.g.
    VolumeBinding's volume binder: the plugin stays free of I/O, the port does it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ServiceKey({self.name!r})"


@dataclass(frozen=True, slots=True)
class ExactOnly:
    """A ``sign_pod`` fragment for a pod that only the exact batch may serve
    (batching/exact.py): the plugin's verdicts and scores for it change on other nodes than
    the one a pod is bound to, so kube's hint and rescore of one node would be wrong."""

    fragment: Hashable


@dataclass(frozen=True, slots=True)
class NarrowedForExact:
    """A ``sign_pod`` fragment with two forms: ``fragment`` for kube's batch, ``exact``
    (narrower) when another fragment makes the pod exact-only. The exact batch places each
    pod where a full pass would, so grouping pods that kube's signature keeps apart but no
    Filter or Score can tell apart changes no decision; kube's hint and rescore would."""

    fragment: Hashable
    exact: Hashable


@runtime_checkable
class ExactDomainPlugin(Plugin, Protocol):
    """A plugin that reads other pods by topology domain (PodTopologySpread,
    InterPodAffinity) and keeps what it counts current for the exact batch.

    After PreFilter and ``exact_begin``, the CycleState stays live for every pod of one
    signature: ``exact_update`` applies one pod added to or removed from a node (as a fresh
    PreFilter and PreScore would count it); ``exact_node_key`` is everything Filter and
    Score read of a node besides what is global (two nodes with equal keys get equal
    verdicts and raw scores from this plugin); ``exact_pre_score`` is PreScore for a scored
    set given as one node per key and how many scored nodes share it.
    """

    def exact_begin(self, state: CycleState, pod: Pod) -> bool:
        """Count what PreScore needs over all nodes; False: this pod cannot be served."""
        ...

    def exact_update(
        self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, delta: int
    ) -> bool:
        """Count ``other`` on (1) or off (-1) ``node_info``; False: the node keys of nodes
        other than this one may have changed, the state must be rebuilt."""
        ...

    def exact_node_key(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Hashable: ...

    def exact_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], sizes: Sequence[int]
    ) -> Status: ...


class ExactNodeChanges(Protocol):
    """What an ``ExactPodStatePlugin`` tells the exact batch between two of its cycles."""

    def catch_up(self) -> Iterable[str] | None:
        """The names of the nodes whose verdicts may have changed since the last call
        (the shared state is brought up to date for them first); None: any node's may
        have, the state must be rebuilt."""
        ...


@runtime_checkable
class ExactPodStatePlugin(Plugin, Protocol):
    """A node-local Filter plugin whose PreFilter state is each pod's own and whose
    verdicts also move with objects other than the pods on the node (DynamicResources:
    the pod's claims; the devices that allocations take).

    ``exact_watch`` begins serving a signature from the state PreFilter wrote for one of its
    pods: None when it cannot (its verdicts are not node-local for this pod), else the feed
    of nodes whose verdicts changed since. ``exact_pod_state`` writes ``pod``'s own PreFilter
    state into ``state`` (a clone of ``shared``) and says whether the pod gets the shared
    pod's verdict on every node; False: the pod takes a full pass.
    """

    def exact_watch(self, state: CycleState, pod: Pod) -> ExactNodeChanges | None: ...

    def exact_pod_state(self, shared: CycleState, state: CycleState, pod: Pod) -> bool: ...


@runtime_checkable
class FilterDetailsPlugin(Plugin, Protocol):
    """A Filter plugin that can say, for ``explain``, why it rejected a node in more words
    than its Status (whose text is kube's and goes into FailedScheduling as it is).

    Called only offline, after the plugin's Filter rejected ``node_info`` with ``state``;
    one line per finding."""

    def filter_details(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[str, ...]: ...


@runtime_checkable
class NodeLocalPlugin(Plugin, Protocol):
    """An out-of-tree plugin that keeps the exact batch (batching/exact_contracts.py) for its
    profile: its Filter and Score read only the pod and the node they are asked about —
    not other nodes, not pods on other nodes — and its Score is not normalized over the
    nodes. A plugin that cannot say so keeps spread and self-affinity pods on full passes."""

    def exact_node_local(self) -> bool:
        """True when the contract above holds (the plugin may decide from its args)."""
        ...
