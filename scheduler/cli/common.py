"""What the commands share: the plugin registry their flags name, the feature gates (and
those of the offline commands), the one-line error a bad input ends in, and the flags given
on the command line.

Neighbours: cli/main.py (the parser and the offline commands), cli/run_command.py (run).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scheduler.framework.feature_gates import (
    GENERIC_WORKLOAD,
    FeatureGates,
    parse_feature_gates,
)

if TYPE_CHECKING:
    import argparse

    from scheduler.app.plugin_loading import PluginRegistry


def plugin_registry(args: argparse.Namespace) -> PluginRegistry:
    """In-tree plugins, the installed ``batch_scheduler.plugins`` entry points, --plugin."""
    from scheduler.app.plugin_loading import load_registry

    return load_registry(args.plugin)


def feature_gates(args: argparse.Namespace) -> FeatureGates:
    """The parsed ``--feature-gates`` (raises FeatureGateError in kube's words)."""
    return parse_feature_gates(getattr(args, "feature_gates", None))


def offline_gates(args: argparse.Namespace, *, pod_groups: int) -> FeatureGates:
    """The gates ``simulate`` and ``explain`` run under: ``--feature-gates``, with
    GenericWorkload on where the snapshot holds PodGroups and the flag does not say (the
    cluster they came from serves PodGroups only with it); said on stderr, one line."""
    gates = feature_gates(args)
    if pod_groups and GENERIC_WORKLOAD not in gates.set:
        print(
            f"feature gate {GENERIC_WORKLOAD}=true: the snapshot holds {pod_groups} PodGroup(s) "
            f"(--feature-gates {GENERIC_WORKLOAD}=false places their pods one by one)",
            file=sys.stderr,
        )
        return FeatureGates({**gates.set, GENERIC_WORKLOAD: True})
    return gates


def bad_input(error: object) -> int:
    """Exit code 2 with one line on stderr (a message can never break the line)."""
    text = " ".join(str(error).split())
    print(f"batch-scheduler: {text}", file=sys.stderr)
    return 2


def given(**values: Any) -> dict[str, Any]:
    """The flags given on the command line (the others keep their settings default)."""
    return {name: value for name, value in values.items() if value is not None}
