"""CycleState: per-cycle data plugins hand from PreFilter/PreScore to Filter/Score.

Keys are typed (``StateKey[T]``) so a read returns what was written without casts.
``clone()`` copies the key table and skip sets; the values are shared, which is safe because
the PreFilter extensions (``add_pod``/``remove_pod``) write a new value (copy-on-write) instead
of mutating one. So their edits through a clone never reach the original, as with kube's
Clone, and a clone costs O(keys), not O(state). The one value Filter mutates is VolumeBinding's
per-node result table, which kube's Clone shares as well (the last Filter of a node wins).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

T = TypeVar("T")


class StateKey(Generic[T]):
    """A typed key; one module-level instance per plugin datum."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


class CycleState:
    __slots__ = (
        "_data",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[StateKey[Any], object] = {}
        self.skip_filter_plugins: set[str] = set()
        """Plugins whose PreFilter returned Skip: their Filter is not run this cycle."""
        self.skip_score_plugins: set[str] = set()
        """Plugins whose PreScore returned Skip: their Score is not run this cycle."""
        self.skip_pre_bind_plugins: set[str] = set()
        """Plugins whose PreBindPreFlight returned Skip: their PreBind is not run."""
        self.record_plugin_metrics = False
        """The pod's cycle was sampled for plugin timings (kube's ShouldRecordPluginMetrics):
        its binding cycle, which runs after later cycles began, times its plugins too."""

    def write(self, key: StateKey[T], value: T) -> None:
        self._data[key] = value

    def read(self, key: StateKey[T]) -> T | None:
        # Per node on the hot path: no cast() calls, the key's type parameter is the proof.
        return self._data.get(key)  # type: ignore[return-value]

    def clone(self) -> CycleState:
        other = CycleState()
        other._data = dict(self._data)
        other.skip_filter_plugins = set(self.skip_filter_plugins)
        other.skip_score_plugins = set(self.skip_score_plugins)
        other.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        other.record_plugin_metrics = self.record_plugin_metrics
        return other
