"""The typed intake of the hot kinds (pods, nodes): client-go-style informers instead of kopf.

``peek`` (a cheap ``msgspec`` look at an event: identity and a fingerprint of what we read),
``appliers`` (skip what changes nothing we read; deliver the rest to the controller's
appliers, hence to ``cycle.eventhandlers``), ``reflector`` (list-then-watch per kind, 410
re-list with Replace, backoff). kopf keeps the low-rate kinds (``kube.controller``), whose
operator runs these reflectors beside it. Must not import ``kube.controller.operator``.
"""
