"""The watch side: kopf handlers and cache sync that keep the cache and queue current.

Pods and nodes come through ``kube.intake``'s informers, which feed the appliers here.

``kinds`` (the table of cached kinds), ``operator`` (registry + kopf run), ``settings`` (kopf
settings), ``pods``, ``nodes`` and ``objects`` (event appliers: namespaces, services, pod
controllers), ``sync`` (initial LIST, the ``synced`` gate, Replace and safety net),
``relist`` (when kopf re-listed). Must not import ``kube.binder``, ``kube.reporter`` or
``kube.leader`` (siblings).
"""
