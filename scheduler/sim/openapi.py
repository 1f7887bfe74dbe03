"""The OpenAPI endpoints, just enough for ``kubectl apply`` with default validation.

kubectl (1.32) first asks ``/openapi/v3`` whether the server validates fields itself;
an index without paths makes it fall back to client-side validation with the v2
document, which it fetches as protobuf (``proto.Unmarshal`` of a gnostic Document).
An empty body is a valid empty Document, and kubectl skips validation of kinds the
document does not define. So no schema is served, and ``--validate=false`` is not needed.
"""

from __future__ import annotations

from typing import Any

V2_PROTOBUF = "application/octet-stream"  # Go's mime parser rejects the "@" of the real one


def v2_protobuf() -> bytes:
    """The v2 document as protobuf: empty, i.e. a Document with no definitions."""
    return b""


def v3_index() -> dict[str, Any]:
    """The v3 discovery index: no group versions, so clients validate client-side."""
    return {"paths": {}}
