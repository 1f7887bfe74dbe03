"""Identifier types and key helpers shared by every layer."""

from __future__ import annotations

from typing import NewType

PodKey = NewType("PodKey", str)
"""``namespace/name`` of a pod."""

Uid = NewType("Uid", str)
NodeName = NewType("NodeName", str)
ProfileName = NewType("ProfileName", str)


def pod_key(namespace: str, name: str) -> PodKey:
    """The ``namespace/name`` key kube-scheduler prints for a pod."""
    return PodKey(f"{namespace}/{name}")
