"""What a misbehaving plugin's call turns into: an Error Status naming the plugin and the
extension point, never an exception out of the runner.

kube fails the pod's cycle with an Error status when a plugin returns one, and the pod is
retried with backoff; Go's types rule out the rest. In Python a plugin may also raise,
return something that is not what its point returns, or be written ``async def`` (its call
returns a coroutine that nobody awaits: plugins are synchronous). Each is one Status whose
message says which plugin, at which point, did what; the traceback of a raise is logged
once per plugin and point.
"""

from __future__ import annotations

import inspect

from scheduler.framework import status as st
from scheduler.logs import get_logger

log = get_logger(__name__)
_reported: set[tuple[str, str]] = set()


def plugin_raised(plugin: str, point: str, exc: Exception) -> st.Status:
    """The Error Status for a plugin that raised (kube: the cycle fails with Error and the pod
    is retried with backoff); the traceback is logged once per plugin and point."""
    if (plugin, point) not in _reported:
        _reported.add((plugin, point))
        log.error("plugin_raised", plugin=plugin, point=point, exc_info=exc)
    return st.error(
        f"plugin {plugin!r} raised in {point}: {type(exc).__name__}: {exc}"
    ).with_plugin(plugin)


def wrong_result(plugin: str, point: str, result: object, expected: str) -> st.Status:
    """The Error Status for a plugin whose ``point`` returned ``result``, not ``expected``.
    A coroutine (an ``async def`` plugin method) is closed, so that it warns of nothing."""
    if inspect.iscoroutine(result):
        result.close()
        what = f"is a coroutine function (async def); {point} must return {expected}"
    else:
        what = f"returned {type(result).__name__}, not {expected}"
    return st.error(f"plugin {plugin!r} {point} {what}").with_plugin(plugin)


_POINTS = {
    "pre_enqueue": "PreEnqueue",
    "pre_filter": "PreFilter",
    "add_pod": "AddPod",
    "remove_pod": "RemovePod",
    "filter": "Filter",
    "precheck": "Filter precheck",
    "post_filter": "PostFilter",
    "pre_score": "PreScore",
    "score": "Score",
    "score_nodes": "Score",
    "normalize_score": "NormalizeScore",
    "reserve": "Reserve",
    "unreserve": "Unreserve",
    "permit": "Permit",
    "pre_bind_pre_flight": "PreBindPreFlight",
    "pre_bind": "PreBind",
    "post_bind": "PostBind",
    "sign_pod": "Sign",
    "events_to_register": "EventsToRegister",
}
"""Plugin methods by the extension point kube names them after."""


def async_points(plugin: object) -> list[str]:
    """The extension points ``plugin`` implements as coroutine functions (``async def``):
    the runner never awaits a plugin, so such a plugin is refused when it is loaded."""
    return [
        f"{point} ({method})"
        for method, point in _POINTS.items()
        if inspect.iscoroutinefunction(getattr(plugin, method, None))
    ]
