"""Read a KubeSchedulerConfiguration file (file I/O here, validation in framework.config)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scheduler.app.input_file import InputFileError, read_documents
from scheduler.framework.config import (
    DEFAULT_SCHEDULER_NAME,
    ConfigError,
    SchedulerConfig,
    load_config,
)

if TYPE_CHECKING:
    from collections.abc import Collection

    from scheduler.framework.feature_gates import FeatureGates


def read_config(
    path: str | Path | None,
    *,
    scheduler_name: str = DEFAULT_SCHEDULER_NAME,
    plugin_names: Collection[str] = (),
    gates: FeatureGates | None = None,
) -> SchedulerConfig:
    """The configuration in ``path`` (None: all defaults).

    Raises ConfigError whose message is one line naming the file and, where there is one,
    the field (``config.yaml: profiles[0].plugins.score.enabled[1]: ...``).
    """
    if path is None:
        return load_config(
            {}, default_scheduler_name=scheduler_name, plugin_names=plugin_names, gates=gates
        )
    try:
        (doc,) = read_documents(Path(path), single=True)
    except InputFileError as exc:
        raise ConfigError("", exc.message, file=str(path)) from None
    try:
        return load_config(
            doc, default_scheduler_name=scheduler_name, plugin_names=plugin_names, gates=gates
        )
    except ConfigError as exc:
        raise exc.in_file(str(path)) from None
