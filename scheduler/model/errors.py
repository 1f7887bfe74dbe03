"""ModelError: bad input names the object and the field path (DESIGN.md section 4)."""

from __future__ import annotations


class ModelError(ValueError):
    """A Kubernetes object could not be read: which object, which field, what is wrong.

    ``obj`` is ``"Pod ns/name"`` or ``"Node name"``; ``field`` is a JSON path such as
    ``spec.containers[0].resources.requests.cpu``.
    """

    def __init__(self, obj: str, field: str, message: str) -> None:
        super().__init__(f"{obj}: {field}: {message}")
        self.obj = obj
        self.field = field
        self.message = message
