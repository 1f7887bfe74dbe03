"""The typed intake of the hot kinds (pods, nodes) and of PodGroups: client-go-style
informers instead of kopf.

``peek`` (a cheap ``msgspec`` look at an event: identity and a fingerprint of what we read),
``appliers`` (skip what changes nothing we read; deliver the rest to the controller's
appliers, hence to ``cycle.eventhandlers``), ``objects`` (PodGroups: every event parsed),
``reflector`` (list-then-watch per kind, 410
re-list with Replace, backoff), ``ports`` (what it is handed: the controller's appliers,
Replace and timeouts, as protocols). kopf keeps the low-rate kinds (``kube.controller``),
whose operator runs these reflectors beside it. Imports nothing of ``kube.controller``
(an import contract): what both use is one layer down (``kube.kinds``, ``kube.listing``).
"""
