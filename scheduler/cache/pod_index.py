"""PodIndex: cached pods by namespace and label, so that a selector finds its pods without a
scan of every pod (issue 19).

InterPodAffinity and PodTopologySpread ask, for every pod that cannot batch, "which pods of
this namespace does this selector match, and on which node?". kube answers by walking every
node's pods in parallel; a scan of 20000 pods per cycle in Python costs tens of
milliseconds. Here each namespace keeps its pods by label (key → value → pods), and a query
starts from the smallest set one of the selector's ``In``/``Exists`` requirements allows
(the whole namespace when it has none), then checks the other requirements on that set
only (the narrowing one holds by construction). For each label it also keeps how many pods
(terminating ones left out) each NodeInfo holds, PodTopologySpread's counts for a one-label
selector (``counts_on_nodes``).

Kept by ``NodeInfo.add_pod``/``remove_pod``, the one place every change of a node's pods
goes through: the watch's add/update/remove, assume and forget. (Preemption and
nominated-pod filtering work on detached NodeInfo copies, outside any index.) When a second
NodeInfo adds a uid another one holds, the older entry is kept aside and comes back when
the newer one is removed, so no pod drops out of the index. O(labels) per
pod. Pods of ghost NodeInfos (node deleted, pods not yet) stay indexed; an entry carries its
NodeInfo, whose ``node`` is None then, and readers skip it as a node scan would.

It also keeps the indexed pods' affinity terms by term (``terms``, cache.term_index), with
every add and remove, before the uid bookkeeping above: per NodeInfo and pod; and tells
``identity_labels`` (cache.identity_labels) which identity labels those terms read.

Neighbours: cache.node_info (the writer), cache.snapshot (owns one index, hands it to
plugins), cache.term_index (terms), model.labels (selectors).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, TypeAlias

from scheduler.cache.changes import ChangeFeed
from scheduler.cache.identity_labels import IdentityLabels
from scheduler.cache.term_index import TermIndex
from scheduler.model.labels import Operator

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping

    from scheduler.cache.node_info import NodeInfo
    from scheduler.model.keys import Uid
    from scheduler.model.labels import LabelSelector
    from scheduler.model.pod import Pod

Entry: TypeAlias = "tuple[Pod, NodeInfo]"
"""A cached pod and the NodeInfo that accounts it."""

_NO_COUNTS: Mapping[NodeInfo, int] = MappingProxyType({})

_KEYED = (Operator.EXISTS, Operator.GT, Operator.LT)
"""Requirements that only a pod carrying the key can satisfy (besides ``In``)."""


class _Namespace:
    __slots__ = ("by_label", "on_nodes", "pods", "shadowed")

    def __init__(self) -> None:
        self.pods: dict[Uid, Entry] = {}
        self.shadowed: dict[Uid, list[Entry]] = {}
        """Entries taken over by another NodeInfo's add of the same uid (oldest first):
        when the newer holder removes the pod, the older entry is indexed again."""
        self.by_label: dict[str, dict[str, dict[Uid, Entry]]] = {}
        """Label key → label value → the pods carrying that label."""
        self.on_nodes: dict[str, dict[str, dict[NodeInfo, int]]] = {}
        """Label key → label value → how many pods carrying that label, not terminating,
        each NodeInfo holds: PodTopologySpread's counts without a walk over the pods."""


class PodIndex:
    """Every pod the NodeInfos of one snapshot account, by namespace and label."""

    __slots__ = ("_namespaces", "feed", "identity_labels", "terms")

    def __init__(
        self, feed: ChangeFeed | None = None, *, identity_labels: IdentityLabels | None = None
    ) -> None:
        self._namespaces: dict[str, _Namespace] = {}
        self.terms = TermIndex()
        """The indexed pods' affinity terms, by term (kept with every add and remove)."""
        self.identity_labels = identity_labels if identity_labels is not None else IdentityLabels()
        """Told of every indexed pod's terms (which identity labels they read)."""
        self.feed = feed if feed is not None else ChangeFeed()
        """Told of every add and remove, after the index has it (cache/changes.py)."""

    def __len__(self) -> int:
        return sum(len(ns.pods) for ns in self._namespaces.values())

    # -- write side (NodeInfo only) -----------------------------------------------------------

    def add(self, pod: Pod, info: NodeInfo) -> None:
        """Index ``pod`` as accounted by ``info`` (replacing an entry with the same uid; an
        entry of another NodeInfo is kept aside until this one is removed)."""
        self.terms.add(pod, info)
        self.identity_labels.observe(pod)
        ns = self._namespaces.get(pod.namespace)
        if ns is None:
            ns = self._namespaces[pod.namespace] = _Namespace()
        else:
            held = ns.pods.get(pod.uid)
            if held is not None:
                self._unlabel(ns, held)
                if held[1] is not info:
                    ns.shadowed.setdefault(pod.uid, []).append(held)
        self._index(ns, pod, info)
        if self.feed.observers:
            self.feed.pod_changed(pod, info, 1)

    def _index(self, ns: _Namespace, pod: Pod, info: NodeInfo) -> None:
        entry = (pod, info)
        ns.pods[pod.uid] = entry
        by_label = ns.by_label
        on_nodes = None if pod.deleting else ns.on_nodes
        for key, value in pod.labels.items():
            by_value = by_label.get(key)
            if by_value is None:
                by_value = by_label[key] = {}
            holders = by_value.get(value)
            if holders is None:
                by_value[value] = {pod.uid: entry}
            else:
                holders[pod.uid] = entry
            if on_nodes is not None:
                per_info = on_nodes.setdefault(key, {}).setdefault(value, {})
                per_info[info] = per_info.get(info, 0) + 1

    def remove(self, pod: Pod, info: NodeInfo) -> None:
        """Drop ``info``'s entry for ``pod``: the indexed one (an entry it took over comes
        back), or one kept aside because another NodeInfo took the uid over since."""
        self._remove(pod, info)
        if self.feed.observers:
            self.feed.pod_changed(pod, info, -1)

    def _remove(self, pod: Pod, info: NodeInfo) -> None:
        self.terms.remove(pod, info)
        ns = self._namespaces.get(pod.namespace)
        if ns is None:
            return
        uid = pod.uid
        entry = ns.pods.get(uid)
        if entry is None:
            return
        if entry[1] is not info:
            aside = ns.shadowed.get(uid)
            if aside:
                aside[:] = [held for held in aside if held[1] is not info]
                if not aside:
                    del ns.shadowed[uid]
            return
        del ns.pods[uid]
        self._unlabel(ns, entry)
        aside = ns.shadowed.get(uid)
        if aside:
            previous = aside.pop()
            if not aside:
                del ns.shadowed[uid]
            self._index(ns, *previous)
        elif not ns.pods:
            del self._namespaces[pod.namespace]

    @staticmethod
    def _unlabel(ns: _Namespace, entry: Entry) -> None:
        pod, info = entry
        for key, value in pod.labels.items():
            by_value = ns.by_label[key]
            holders = by_value[value]
            del holders[pod.uid]
            if not holders:
                del by_value[value]
                if not by_value:
                    del ns.by_label[key]
            if not pod.deleting:
                on_values = ns.on_nodes[key]
                per_info = on_values[value]
                left = per_info[info] - 1
                if left:
                    per_info[info] = left
                    continue
                del per_info[info]
                if not per_info:
                    del on_values[value]
                    if not on_values:
                        del ns.on_nodes[key]

    # -- read side (plugins) ------------------------------------------------------------------

    def namespaces(self) -> Collection[str]:
        """Namespaces that hold at least one indexed pod."""
        return self._namespaces.keys()

    def pods_in(self, namespace: str) -> Collection[Entry]:
        ns = self._namespaces.get(namespace)
        return ns.pods.values() if ns is not None else ()

    def counts_on_nodes(
        self, namespace: str, selector: LabelSelector
    ) -> Mapping[NodeInfo, int] | None:
        """For a selector of one ``key In (value)`` requirement (a one-label matchLabels, a
        one-label Service): how many pods of ``namespace`` it matches, terminating ones
        left out, each NodeInfo holds, as kept with every add and remove (read it before
        the index changes again; never write it). None for any other selector: walk
        :meth:`matching` instead."""
        requirements = selector.requirements
        if len(requirements) != 1:
            return None
        req = requirements[0]
        if req.operator is not Operator.IN or len(req.values) != 1:
            return None
        ns = self._namespaces.get(namespace)
        on_values = ns.on_nodes.get(req.key) if ns is not None else None
        if on_values is None:
            return _NO_COUNTS
        return on_values.get(req.values[0], _NO_COUNTS)

    def matching(self, namespace: str, selector: LabelSelector | None) -> Iterator[Entry]:
        """The pods of ``namespace`` whose labels ``selector`` matches (None matches none),
        each with its NodeInfo; in no particular order."""
        ns = self._namespaces.get(namespace)
        if ns is None or selector is None:
            return
        if selector.empty:
            yield from ns.pods.values()
            return
        groups: Collection[dict[Uid, Entry]] = (ns.pods,)
        smallest = len(ns.pods)
        rest = selector.requirements
        for req in selector.requirements:
            op = req.operator
            if op is not Operator.IN and op not in _KEYED:
                continue
            by_value = ns.by_label.get(req.key)
            if by_value is None:
                return  # no pod of the namespace carries the key: none can match
            if op is Operator.IN:
                found = [by_value[v] for v in dict.fromkeys(req.values) if v in by_value]
            else:
                found = list(by_value.values())
            size = sum(len(group) for group in found)
            if size <= smallest:  # on a tie too: the requirement need not be checked again
                groups, smallest = found, size
                if not size:
                    return
                # The groups of an In or Exists requirement hold only pods that meet it.
                rest = selector.requirements
                if op is Operator.IN or op is Operator.EXISTS:
                    rest = tuple(r for r in rest if r is not req)
        if not rest:
            for group in groups:
                yield from group.values()
            return
        matches = rest[0].matches if len(rest) == 1 else selector.matches
        for group in groups:
            for entry in group.values():
                if matches(entry[0].labels):
                    yield entry
