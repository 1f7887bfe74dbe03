"""The real Kubernetes control plane for tests, benchmarks and ``make cluster``.

``go.mod`` pins k8s.io/kubernetes and etcd; ``build.sh`` (``make controlplane``) builds their
commands into ``bin/`` (gitignored); :mod:`controlplane.launcher` starts them on loopback.
Nothing of Kubernetes' source is kept here: the Go module proxy serves it.
"""
