"""The runner's pod watch, noting each pod's bind: when it was seen and at which
resourceVersion, so that a bind can be ordered against a node's deletion.

:class:`bench.scheduler_perf.podwatch.PodWatch` lists, watches and re-lists after a 410 or a
lost connection; this adds the binds. A bind first seen by a re-list gets the version the
watch had reached before it (a lower bound of the bind's own).

Neighbours: :mod:`bench.chaos.run`, :mod:`bench.chaos.figures`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.scheduler_perf.podwatch import PodInfo, PodWatch, became_scheduled

if TYPE_CHECKING:
    from bench.scheduler_perf.api import Api


@dataclass(frozen=True, slots=True)
class Bind:
    node: str
    seen: float
    """``time.monotonic()`` when the watch saw it."""
    version: int


class BindWatch(PodWatch):
    """A :class:`PodWatch` that keeps every pod's bind (:class:`Bind`) by name."""

    def __init__(self, api: Api) -> None:
        super().__init__(api)
        self.binds: dict[str, Bind] = {}

    def _apply(self, new: PodInfo) -> None:
        old = self.pods.get((new.namespace, new.name))
        if became_scheduled(old, new) and new.name not in self.binds:
            version = int(self._version) if self._version.isdigit() else 0
            self.binds[new.name] = Bind(new.node_name, time.monotonic(), version)
        super()._apply(new)

    def last_bind(self) -> float | None:
        return max((b.seen for b in self.binds.values()), default=None)
