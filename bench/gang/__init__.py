"""Gang scheduling benchmarks (issue 38, item 7): kube-scheduler v1.37.2 and ours with
``GenericWorkload``, on the real API server, each started on a backlog of PodGroups and
pods.

:mod:`.shapes` defines the shapes from kube's own gang workload files, :mod:`.backlog` runs
one shape for one scheduler and measures it from readiness to the last bind, :mod:`.work`
counts in-process what rejecting the infeasible gang costs, :mod:`.report` writes the
records and the targets, :mod:`.cli` is ``python -m bench.gang`` (``make bench-gang``).
docs/performance.md ("Gang scheduling") has the results.
"""
