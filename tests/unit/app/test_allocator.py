"""glibc's mmap threshold fixed: a large block that the heap cannot hold is mapped even
after a larger mapped block was freed (which, unfixed, raises the threshold past it)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's setting")

# Free a 4 MiB mapped block (unfixed, the threshold becomes 4 MiB), then allocate 64 blocks of
# 256 KiB that the heap cannot hold: count the mappings they added (mallinfo2's hblks).
PROBE = """
import ctypes, json, sys
from scheduler.app.allocator import fix_mmap_threshold
class Info(ctypes.Structure):
    names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    _fields_ = [(n, ctypes.c_size_t) for n in names.split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
fixed = fix_mmap_threshold() if sys.argv[1] == "fix" else None
big = bytearray(4 << 20)
del big
before = libc.mallinfo2().hblks
blocks = [bytearray(256 << 10) for _ in range(64)]
print(json.dumps({"fixed": fixed, "mapped": libc.mallinfo2().hblks - before}))
"""


def _probe(mode: str, **env: str) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode],
        env={**environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_the_fixed_threshold_keeps_large_blocks_out_of_the_heap() -> None:
    assert _probe("fix") == {"fixed": True, "mapped": 64}
    unfixed = _probe("none")
    assert isinstance(unfixed["mapped"], int)
    assert unfixed["mapped"] <= 1, unfixed  # the raised threshold put them in the heap


def test_an_operators_setting_wins() -> None:
    assert _probe("fix", MALLOC_MMAP_THRESHOLD_="1048576")["fixed"] is False
    assert _probe("fix", GLIBC_TUNABLES="glibc.malloc.mmap_threshold=1048576")["fixed"] is False
