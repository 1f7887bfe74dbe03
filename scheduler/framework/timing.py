"""Timing: the recorders a profile's owner sets to time its extension points and plugin calls.

kube-scheduler times every extension point of every cycle
(``scheduler_framework_extension_point_duration_seconds``) and the plugin calls of a sample
of cycles (``scheduler_plugin_execution_duration_seconds``, ``pluginMetricsSamplePercent``).
The Scheduler sets the two recorders here; the full pass (framework/profile.py, scoring.py)
and the binding points (framework/binding_points.py) read them, so neither needs the other.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from scheduler.framework import status as st

ObservePoint = Callable[[str, str, float], None]
"""(extension point, status label, seconds): how a full pass reports its timings."""
ObservePlugin = Callable[[str, str, str, float], None]
"""(plugin, extension point, status label, seconds): one plugin call, in sampled cycles."""
PLUGIN_METRICS_SAMPLE = 0.10
"""kube's pluginMetricsSamplePercent: the fraction of cycles whose plugin calls are timed."""


class Timing:
    """One profile's recorders, and whether the current cycle's plugin calls are timed."""

    __slots__ = ("cycle", "observe", "observe_plugin", "plugin_sample", "sampling")

    def __init__(self) -> None:
        self.observe: ObservePoint | None = None
        """Times each extension point (metrics); None: off."""
        self.observe_plugin: ObservePlugin | None = None
        """Times plugin calls in a sample of cycles; None: off. Timed: PreFilter, PreScore,
        NormalizeScore, PostFilter, Reserve, Permit and the binding cycle's points, each
        call as kube; Filter and Score (per node in kube) are not."""
        self.plugin_sample = PLUGIN_METRICS_SAMPLE
        self.cycle: ObservePlugin | None = None
        """``observe_plugin`` while the current cycle is sampled (drawn at its PreFilter)."""
        self.sampling = random.Random()
        """The draw of sampled cycles: never the tie-breaking source, so decisions stay put."""


def timed(timing: ObservePlugin, plugin: str, point: str, code: st.Code, started: float) -> None:
    """Report one plugin call, in a sampled cycle, as lasting since ``started``."""
    timing(plugin, point, st.CODE_LABELS[code], time.perf_counter() - started)
