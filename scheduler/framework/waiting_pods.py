"""WaitingPod: a pod held at Permit (kube's runtime/waiting_pods_map.go).

A Permit plugin that answers Wait holds the pod: its assumption stays in the cache (its
resources stay taken) until every waiting plugin has allowed it — the plugin itself or any
other through the Handle (``get_waiting_pod``, ``iterate_over_waiting_pods``) — or until one
rejects it, or a waiting plugin's timeout passes (kube's "rejected due to timeout after
waiting <d> at plugin <name>"). The decision is delivered once, to ``on_decided``; the
binding cycle (cycle/binding_cycle.py) then goes on to PreBind or undoes the reservation.

Timers come from a ``Timers`` port (the event loop's ``call_later`` in ``run``). Without one
(``simulate``, synchronous tests) a pod waits until it is allowed or rejected.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from scheduler.framework import status as st

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.pod import Pod

MAX_TIMEOUT_SECONDS = 15 * 60
"""kube's maxTimeout: a longer wait asked by a Permit plugin is cut to this."""


class Cancellable(Protocol):
    def cancel(self) -> None: ...


Timers = Callable[[float, Callable[[], None]], Cancellable]
"""(delay in seconds, callback) → a handle whose ``cancel()`` stops it (``loop.call_later``)."""


class HeldPod:
    """One pod waiting at Permit (kube's waitingPod); a ``framework.interfaces.WaitingPod``."""

    __slots__ = ("_decided", "_on_decided", "_pending", "_pod", "_waits")

    def __init__(
        self,
        pod: Pod,
        waits: Mapping[str, float],
        on_decided: Callable[[st.Status], None],
        timers: Timers | None,
    ) -> None:
        self._pod = pod
        self._on_decided = on_decided
        self._decided = False
        self._waits = dict(waits)
        self._pending: dict[str, Cancellable | None] = {}
        for plugin, seconds in waits.items():
            timer = None
            if timers is not None:
                timer = timers(seconds, functools.partial(self._timer_fired, plugin))
            self._pending[plugin] = timer

    @property
    def pod(self) -> Pod:
        return self._pod

    def pending_plugins(self) -> list[str]:
        """The Permit plugins that have not allowed the pod yet."""
        return list(self._pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` allows the pod; the last pending plugin to allow lets it go on."""
        if plugin in self._pending:
            timer = self._pending.pop(plugin)
            if timer is not None:
                timer.cancel()
        if self._pending or self._decided:
            return
        self._decided = True
        self._on_decided(st.SUCCESS)

    def reject(self, plugin: str, message: str) -> bool:
        """Reject the pod (Unschedulable, naming ``plugin``); False if already decided."""
        for timer in self._pending.values():
            if timer is not None:
                timer.cancel()
        if self._decided:
            return False
        self._decided = True
        self._on_decided(st.Status(st.Code.UNSCHEDULABLE, (message,), plugin))
        return True

    def expire(self) -> bool:
        """Reject as the first pending plugin's timeout would (offline, where no timer
        runs); False when it was decided already."""
        for plugin in self._pending:
            return self._timed_out(plugin, self._waits[plugin])
        return False

    def _timer_fired(self, plugin: str) -> None:
        self._timed_out(plugin, self._waits[plugin])

    def _timed_out(self, plugin: str, seconds: float) -> bool:
        return self.reject(
            plugin,
            f"rejected due to timeout after waiting {go_duration(seconds)} at plugin {plugin}",
        )


def go_duration(seconds: float) -> str:
    """``seconds`` as Go prints a ``time.Duration`` (``10s``, ``1.5s``, ``500ms``, ``2m0s``)."""
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        return f"{_trim(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    text = f"{_trim(rest)}s"
    if hours:
        return f"{hours}h{minutes}m{text}"
    if minutes:
        return f"{minutes}m{text}"
    return text


def _trim(value: float) -> str:
    return f"{value:.9f}".rstrip("0").rstrip(".")
