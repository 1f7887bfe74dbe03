"""Semantic versions as Kubernetes' CEL library reads them (github.com/blang/semver/v4).

Device attributes of type ``version`` and the CEL functions ``semver()``/``isSemver()``
parse with blang's rules and its error texts, so a selector fails with the message kube
prints. ``normalize`` is the library's ``semver(s, true)``: a leading ``v``, leading
zeroes and missing minor/patch are forgiven.

Neighbours: ``cel_library`` (the CEL functions built on this), ``allocator`` (versions in
``matchAttribute`` compare as strings, as in kube).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


class SemverError(ValueError):
    """The text is not a semantic version; the message is blang's."""


@dataclass(frozen=True, slots=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    """Pre-release identifiers: numeric ones as int (they compare numerically)."""

    def compare(self, other: Semver) -> int:
        """blang's ``Version.Compare``: -1, 0 or 1; build metadata is ignored."""
        mine = (self.major, self.minor, self.patch)
        theirs = (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        if not self.pre or not other.pre:
            # A release is greater than any of its pre-releases.
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if isinstance(a, int) != isinstance(b, int):
                return -1 if isinstance(a, int) else 1  # numeric < alphanumeric
            return -1 if a < b else 1  # type: ignore[operator]  # same kinds here
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


def _has_leading_zero(s: str) -> bool:
    return len(s) > 1 and s[0] == "0"


def _number(part: str, what: str) -> int:
    if not part or not set(part) <= _NUMBERS:
        raise SemverError(f"Invalid character(s) found in {what} number {_quote(part)}")
    if _has_leading_zero(part):
        raise SemverError(
            f"{what.capitalize()} number must not contain leading zeroes {_quote(part)}"
        )
    value = int(part)
    if value >= 2**64:
        raise SemverError(f"strconv.ParseUint: parsing {_quote(part)}: value out of range")
    return value


def _quote(s: str) -> str:
    """Go's %q for the ASCII texts these messages quote."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _pre_release(part: str) -> int | str:
    if not part:
        raise SemverError("Prerelease is empty")
    if set(part) <= _NUMBERS:
        if _has_leading_zero(part):
            raise SemverError(
                f"Numeric PreRelease version must not contain leading zeroes {_quote(part)}"
            )
        return int(part)
    if set(part) <= _ALPHANUM:
        return part
    raise SemverError(f"Invalid character(s) found in prerelease {_quote(part)}")


@functools.lru_cache(maxsize=4096)
def parse_semver(text: str, *, normalize: bool = False) -> Semver:
    """blang's ``semver.Parse`` (or the library's normalizeAndParse with ``normalize``).

    Memoized: selectors parse the same constant (``semver("1.0.0")``) on every device, and
    devices repeat their versions; errors are not cached.
    """
    if normalize:
        text = _normalized(text)
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    patch_text, _, build = parts[2].partition("+")
    patch_text, dash, pre_text = patch_text.partition("-")
    patch = _number(patch_text, "patch")
    pre = tuple(_pre_release(p) for p in pre_text.split(".")) if dash else ()
    if "+" in parts[2]:
        for item in build.split("."):
            if not item:
                raise SemverError("Build meta data is empty")
            if not set(item) <= _ALPHANUM:
                raise SemverError(f"Invalid character(s) found in build meta data {_quote(item)}")
    return Semver(major, minor, patch, pre)


def _normalized(text: str) -> str:
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)
