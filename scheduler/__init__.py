"""batch-scheduler: a second Kubernetes scheduler with opportunistic batching (KEP-5598)."""

__version__ = "0.1.0"
