"""kube/controller."""
