"""The value checks every part of the configuration shares: each raises ConfigError naming
the field's path (``profiles[0].pluginConfig[1].args``, ``leaderElection.leaseDuration``, or
the flag that set it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MAX_DURATION_SECONDS = (2**63 - 1) // 10**9
"""The longest Go ``time.Duration`` in whole seconds (about 292 years): kube-scheduler
cannot even parse a longer duration, nor turn a longer backoff into one."""


class ConfigError(ValueError):
    """A configuration value we cannot run with; ``path`` names the field, ``file`` the file."""

    def __init__(self, path: str, message: str, *, file: str | None = None) -> None:
        where = ": ".join(part for part in (file, path) if part)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.message = message
        self.file = file

    def in_file(self, file: str) -> ConfigError:
        """The same error, naming the file it came from (kept if already named)."""
        return self if self.file else ConfigError(self.path, self.message, file=file)


_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def as_duration(raw: object, path: str) -> float:
    """A Go duration such as ``15s``, ``1m30s`` or ``500ms``."""
    if not isinstance(raw, str) or not raw:
        raise ConfigError(path, f"must be a duration such as '15s', got {raw!r}")
    total, number, i = 0.0, "", 0
    while i < len(raw):
        ch = raw[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if raw.startswith("ms", i) else ch
        if unit not in _UNITS or not number:
            raise ConfigError(path, f"must be a duration such as '15s', got {raw!r}")
        try:
            total += float(number) * _UNITS[unit]
        except ValueError:
            raise ConfigError(path, f"must be a duration such as '15s', got {raw!r}") from None
        number = ""
        i += len(unit)
    if number or total <= 0:
        raise ConfigError(path, f"must be a positive duration such as '15s', got {raw!r}")
    if total > MAX_DURATION_SECONDS:
        raise ConfigError(path, f"must be at most {MAX_DURATION_SECONDS}s, got {raw!r}")
    return total


def as_mapping(raw: object, path: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping):
        raise ConfigError(path or "<document>", f"must be a mapping, got {type(raw).__name__}")
    return raw


def as_list(raw: object, path: str) -> Sequence[object]:
    if not isinstance(raw, list):
        raise ConfigError(path, f"must be a list, got {type(raw).__name__}")
    return raw


def as_str(raw: object, path: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise ConfigError(path, "must be a non-empty string")
    return raw


def as_str_or_empty(raw: object, path: str) -> str:
    if not isinstance(raw, str):
        raise ConfigError(path, f"must be a string, got {raw!r}")
    return raw


def as_bool(raw: object, path: str) -> bool:
    if not isinstance(raw, bool):
        raise ConfigError(path, f"must be true or false, got {raw!r}")
    return raw


def as_int(raw: object, path: str, low: int, high: int | None) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ConfigError(path, f"must be an integer, got {raw!r}")
    if raw < low or (high is not None and raw > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ConfigError(path, f"must be {bound}, got {raw}")
    return raw


def check_known(doc: Mapping[str, object], path: str, allowed: set[str]) -> None:
    for key in doc:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            raise ConfigError(where, "unknown or unsupported field")


WITHOUT_EFFECT: Mapping[str, str] = {
    "NodeDeclaredFeatures": "nodes' declared features are not checked (kube's "
    "NodeDeclaredFeatures feature)",
}
"""kube plugins we do not implement that kube-scheduler's own written configuration
enables: accepted (and their pluginConfig) so that a copied configuration loads, with a
warning that says what is missing (``config_run.notes``)."""
