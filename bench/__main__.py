"""``make bench``: every benchmark, in one run (ratios are only compared within a run).

``python -m bench [--quick] [--repeats N] [--nodes 500,1000,5000] [--scenarios a,b]``:
the end-to-end matrix (``bench.e2e``: batching off vs on vs the bind ceiling, scheduler and
emulator in separate processes; results in ``bench/results/``), then the decision cost
without the API (``bench.decision``) and the emulator's own throughput (``bench.sim_bench``).
``--quick``: 100 and 500 nodes, one repeat. See docs/performance.md.

Run on their own (each takes its own fresh control planes; ``make controlplane`` first):
``python -m bench.scheduler_perf`` (``make bench-perf``: kube's scheduler_perf workloads,
kube-scheduler and ours side by side) and ``python -m bench.bind_ceiling``
(``make bench-ceiling``: the API server's bind limit, ``bench/bindceiling`` in Go).
"""

from __future__ import annotations

import sys

from bench import decision, e2e, sim_bench


def main() -> None:
    argv = sys.argv[1:]
    quick = "--quick" in argv
    print("== end to end: batching off vs on vs the bind ceiling (sim in its own process)")
    e2e.main(argv)
    print("\n== decision cost: full pass vs batched (no API)")
    decision.main(["--nodes", "100,500,1000" if quick else "100,500,1000,5000"])
    print("\n== emulator: binds/s and watch events/s")
    sim_bench.main([])


if __name__ == "__main__":
    main()
