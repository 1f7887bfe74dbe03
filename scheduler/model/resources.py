"""Resources: exact integer amounts (cpu in millicores, bytes, counts) and their arithmetic.

Mutable on purpose: NodeInfo accumulates requested amounts in place (O(1) per pod event).
Records that hand out a Resources (Pod.requests, Node.allocatable) never mutate it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_MILLI_CPU_REQUEST = 100
"""kube-scheduler's non-zero default for a container without a cpu request (100m)."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""kube-scheduler's non-zero default for a container without a memory request (200Mi)."""


@dataclass(slots=True)
class Resources:
    """Amounts per resource. ``scalar`` holds extended resources and hugepages by name."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    def add(self, other: Resources) -> None:
        """Add ``other`` in place (pods count is not touched: NodeInfo counts pods itself)."""
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        if other.scalar:
            for name, amount in other.scalar.items():
                self.scalar[name] = self.scalar.get(name, 0) + amount

    def sub(self, other: Resources) -> None:
        """Subtract ``other`` in place."""
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        if other.scalar:
            for name, amount in other.scalar.items():
                left = self.scalar.get(name, 0) - amount
                if left:
                    self.scalar[name] = left
                else:
                    self.scalar.pop(name, None)

    def copy(self) -> Resources:
        return Resources(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar),
        )

    def get(self, name: str) -> int:
        """The amount of resource ``name`` (``cpu`` in millicores)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)
