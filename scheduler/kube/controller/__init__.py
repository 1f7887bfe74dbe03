"""The watch side: kopf handlers and cache sync that keep the cache and queue current.

``operator`` (registry + kopf run), ``settings`` (kopf settings), ``pods`` and ``nodes``
(event classification), ``sync`` (initial LIST, the ``synced`` gate, periodic reconcile).
Must not import ``kube.binder``, ``kube.reporter`` or ``kube.leader`` (siblings).
"""
