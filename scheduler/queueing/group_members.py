"""Members of pod groups that are in no queued entity (kube's incompletePodGroupPods and
pendingPodGroupPods): *incomplete* while the queue knows no PodGroup of that name (the pods
may come before their group), *pending* while their group is in flight (they arrived
during its cycle, or failed in it); the group's next entity is made of them.

Neighbours: queueing/scheduling_queue.py (the only user), queueing/queued_group.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scheduler.model.keys import Uid
    from scheduler.model.pod_groups import GroupKey
    from scheduler.queueing.queued_pod import QueuedPodInfo


class GroupMembers:
    """Incomplete and pending members, by group; see the module docstring."""

    __slots__ = ("incomplete", "pending")

    def __init__(self) -> None:
        self.incomplete: dict[GroupKey, dict[Uid, QueuedPodInfo]] = {}
        self.pending: dict[GroupKey, dict[Uid, QueuedPodInfo]] = {}

    def add(
        self, where: dict[GroupKey, dict[Uid, QueuedPodInfo]], key: GroupKey, info: QueuedPodInfo
    ) -> None:
        where.setdefault(key, {})[info.pod.uid] = info

    def take(
        self, where: dict[GroupKey, dict[Uid, QueuedPodInfo]], key: GroupKey
    ) -> dict[Uid, QueuedPodInfo]:
        return where.pop(key, {})

    def get(self, key: GroupKey, uid: Uid) -> QueuedPodInfo | None:
        for where in (self.incomplete, self.pending):
            members = where.get(key)
            if members is not None and uid in members:
                return members[uid]
        return None

    def remove(self, key: GroupKey, uid: Uid) -> bool:
        for where in (self.incomplete, self.pending):
            members = where.get(key)
            if members is not None and members.pop(uid, None) is not None:
                if not members:
                    del where[key]
                return True
        return False

    def count(self, where: dict[GroupKey, dict[Uid, QueuedPodInfo]]) -> int:
        return sum(len(members) for members in where.values())

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        for where in (self.incomplete, self.pending):
            for members in where.values():
                yield from members.values()
