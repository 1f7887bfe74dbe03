"""Free memory handed back to the kernel: glibc's ``malloc_trim`` once a minute.

glibc returns freed memory to the kernel only from the top of its heap; whole pages freed
below the top (watch buffers, JSON bodies, the signature memo's kilobyte keys: anything
over pymalloc's 512 bytes) stay resident until malloc reuses them. Under steady pod churn
that slack creeps up with each new high point: in a one-hour soak RSS grew 5 % from minute
10 to minute 52 and then held (docs/reliability.md, "Soak"). ``malloc_trim(0)`` gives every
whole free page back (``madvise``), the live objects untouched; it takes the allocator's
locks for the walk, so it is safe from the event loop's thread. Where libc has no
``malloc_trim`` (musl, macOS) this does nothing.

Neighbour: ``runtime`` (starts :func:`trim_periodically`, next to the ``gc.freeze`` after
sync).
"""

from __future__ import annotations

import asyncio
import ctypes
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["TRIM_EVERY", "malloc_trim", "trim_periodically"]

TRIM_EVERY = 60.0
"""Seconds between trims: slack comes back within a minute, for about a millisecond's walk."""


def malloc_trim() -> Callable[[], bool] | None:
    """``malloc_trim(0)`` of this process's libc as a call that says whether pages were
    given back; None where libc has none."""
    try:
        function = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return lambda: bool(function(0))


async def trim_periodically(
    every: float = TRIM_EVERY, trim: Callable[[], bool] | None = None
) -> None:
    """Trim every ``every`` seconds until cancelled (``trim``: :func:`malloc_trim`'s)."""
    trim = trim or malloc_trim()
    if trim is None:
        return
    while True:
        await asyncio.sleep(every)
        trim()
