"""``make bench``: every benchmark, in one run (ratios are only compared within a run)."""

from __future__ import annotations

import sys

from bench import decision, sim_bench


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    print("== decision cost: full pass vs batched (no API)")
    decision.main(["--nodes", "100,500,1000" if quick else "100,500,1000,5000"])
    print("\n== emulator: binds/s and watch events/s")
    sim_bench.main()


if __name__ == "__main__":
    main()
