"""Read a KubeSchedulerConfiguration file (file I/O here, validation in framework.config)."""

from __future__ import annotations

from pathlib import Path

import yaml

from scheduler.framework.config import (
    DEFAULT_SCHEDULER_NAME,
    ConfigError,
    SchedulerConfig,
    load_config,
)


def read_config(
    path: str | Path | None, *, scheduler_name: str = DEFAULT_SCHEDULER_NAME
) -> SchedulerConfig:
    """The configuration in ``path`` (None: all defaults). Raises ConfigError naming the field."""
    if path is None:
        return load_config({}, default_scheduler_name=scheduler_name)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror}") from exc
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), f"not valid YAML: {exc}") from exc
    return load_config(doc, default_scheduler_name=scheduler_name)
