"""DRA on the real API server: kube-scheduler v1.37.2 and ours on one ResourceClaimTemplate's
pods (issue 40, Targets). ``python -m bench.dra``: :mod:`bench.dra.cli`."""
