"""kube's own scheduler benchmark suite (test/integration/scheduler_perf), both schedulers.

The workload files are read from the pinned Kubernetes module (:mod:`.suite`), rendered
with Go's template rules (:mod:`.gotemplate`, :mod:`.gofuncs`, :mod:`.objects`), decoded
into ops (:mod:`.decode`, :mod:`.ops`) and run against a fresh kube-apiserver per
workload and scheduler (:mod:`.runner`, :mod:`.executor`, :mod:`.churn`, with the API
client of :mod:`.api`) while a pod watch (:mod:`.podwatch`)
feeds kube's throughput collector (:mod:`.collector`). :mod:`.capability` decides what
each scheduler can run, :mod:`.schedulers` starts them, :mod:`.report` writes the
records, :mod:`.cli` is ``python -m bench.scheduler_perf``. docs/performance.md has the
results and how to reproduce them.
"""
