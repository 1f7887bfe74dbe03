"""The watch side: kopf handlers and cache sync that keep the cache and queue current.

Pods and nodes come through ``kube.intake``'s informers, which the operator here runs and
which feed the appliers here (through the protocols of ``kube.intake.ports``: the intake
imports nothing of this package).

``operator`` (registry + kopf run, the informers beside it), ``settings`` (kopf settings),
``pods``, ``nodes`` and ``objects`` (event appliers: namespaces, services, pod controllers),
``sync`` (initial LIST, the ``synced`` gate, Replace and safety net), ``relist`` (when kopf
re-listed), ``kopf_retries`` (kopf's request-retry errors as our rate-limited lines). The
kind table (``kube.kinds``) and the LIST vocabulary (``kube.listing``) are
one layer down, shared with the intake. Must not import ``kube.binder``, ``kube.reporter``,
``kube.preemption``, ``kube.leader`` or ``kube.volume_binder`` (siblings; import contracts).
"""
