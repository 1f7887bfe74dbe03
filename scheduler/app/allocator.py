"""glibc's mmap threshold, fixed for a scheduler that runs for weeks.

glibc serves a request of at least the mmap threshold, when its heap cannot, with a mapping
of its own that goes back to the system on free; below it, from the heap, whose free middle
stays resident and whose free top is trimmed past the trim threshold. Both thresholds move by
default: each free of a mapped block raises the mmap threshold to that block's size (up to
32 MiB) and the trim threshold to twice that. One LIST body of megabytes freed, and from
then on every block below its size comes from the heap and a free top of twice it is kept:
under churn the heap's span, and RSS, crept up through the whole soak. Setting the threshold
(mallopt) fixes both at glibc's initial values.

Measured with ``python -m bench.chaos --soak 60`` (1000 nodes, 50 pods/s): RSS grew 2.2 %
from minute 10 to 59 with the threshold fixed (and the TLS read buffer capped), 5.5 % before
both, at the same CPU per pod (docs/reliability.md, "Soak").

Neighbours: cli/run_command.py (calls it before the runtime starts).
"""

from __future__ import annotations

import ctypes
import os
import platform
from typing import Final

M_MMAP_THRESHOLD: Final = -3
"""mallopt's parameter number (malloc.h)."""
MMAP_THRESHOLD: Final = 128 * 1024
"""glibc's initial value, kept."""


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes (which stops its adjustment and
    that of the trim threshold); whether it was set. Not on other C libraries, and not when
    the environment sets it already (``MALLOC_MMAP_THRESHOLD_``, ``GLIBC_TUNABLES``): an
    operator's value wins."""
    if platform.libc_ver()[0] != "glibc":
        return False
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "mmap_threshold" in tunables:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))
