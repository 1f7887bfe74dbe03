"""Readers for plugin args: the YAML mapping under ``pluginConfig[i].args``, checked field by
field.

Errors are ValueErrors whose message starts with the field path
(``NodeResourcesFitArgs.scoringStrategy.type: ...``); ``framework.profile.Profile`` wraps them
into a ``ConfigError`` naming ``pluginConfig[<plugin>].args``. Unknown fields are errors: a
typo must not silently fall back to a default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def check_fields(args: Mapping[str, object], where: str, allowed: Iterable[str]) -> None:
    """Reject fields we do not know: a typo must not silently fall back to a default."""
    known = set(allowed)
    for key in args:
        if key not in known:
            raise ValueError(f'{where}: unknown field "{key}"')


def as_mapping(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{where}: must be a mapping, got {type(value).__name__}")
    return value


def as_list(value: object, where: str) -> list[object]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{where}: must be a list, got {type(value).__name__}")
    return list(value)


def as_int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: must be an integer, got {value!r}")
    return value


def as_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: must be a string, got {value!r}")
    return value
