"""What the commands share: the plugin registry their flags name, the feature gates, the
one-line error a bad input ends in, and the flags given on the command line.

Neighbours: cli/main.py (the parser and the offline commands), cli/run_command.py (run).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scheduler.framework.feature_gates import FeatureGates, parse_feature_gates

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


def bad_input(error: object) -> int:
    """Exit code 2 with one line on stderr (a message can never break the line)."""
    text = " ".join(str(error).split())
    print(f"batch-scheduler: {text}", file=sys.stderr)
    return 2


def given(**values: Any) -> dict[str, Any]:
    """The flags given on the command line (the others keep their settings default)."""
    return {name: value for name, value in values.items() if value is not None}
