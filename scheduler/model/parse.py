"""Raw Kubernetes dicts → model records: the one entry point the rest of the scheduler uses.

A facade over ``parse_pod``, ``parse_node``, ``parse_workloads``, ``parse_disruption`` and
``parse_selectors`` (one concept each); every function raises ``model.errors.ModelError``
naming the object and the field path when the input is malformed, and never returns a
half-valid record.
"""

from __future__ import annotations

from scheduler.model.parse_common import is_scalar_resource_name, normalize_image
from scheduler.model.parse_disruption import pdb_from_raw
from scheduler.model.parse_node import node_from_raw, taint_from_raw
from scheduler.model.parse_pod import pod_from_raw, pod_with_status
from scheduler.model.parse_selectors import (
    label_selector_from_raw,
    node_selector_from_raw,
    node_selector_term_from_raw,
    preferred_scheduling_term_from_raw,
)
from scheduler.model.parse_workloads import (
    controller_from_raw,
    namespace_from_raw,
    service_from_raw,
)

__all__ = [
    "controller_from_raw",
    "is_scalar_resource_name",
    "label_selector_from_raw",
    "namespace_from_raw",
    "node_from_raw",
    "node_selector_from_raw",
    "node_selector_term_from_raw",
    "normalize_image",
    "pdb_from_raw",
    "pod_from_raw",
    "pod_with_status",
    "preferred_scheduling_term_from_raw",
    "service_from_raw",
    "taint_from_raw",
]
