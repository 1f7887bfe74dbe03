"""``python -m bench.chaos``: faults on the real control plane during a burst, ours and
kube-scheduler v1.37.2 side by side (issue 37). See :mod:`bench.chaos.cli`."""
