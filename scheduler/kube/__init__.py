"""kube: every byte the scheduler exchanges with the Kubernetes API.

In tiers, each importing only the tiers below it (an import-linter contract names every
module):

- independent parts: ``binder`` (the cycle's BindDispatcher: bounded concurrent
  ``pods/binding`` POSTs), ``reporter`` (Events, ``PodScheduled`` conditions), ``preemption``
  (victims, nominations), ``leader`` (Lease-based election, a Gate the loop waits on),
  ``volume_binder`` (PreBind's volume writes), ``delegated_auth`` (the secure port's reviews)
  and ``controller`` (the watch side: kopf for the low-rate kinds, and the informers);
- ``intake`` (the informers of pods and nodes, run by the controller; they import nothing of
  it) and ``workers`` (the worker kit of the binder, preemptor and reporter);
- ``client``: one async API client (aiohttp pool, timeouts, retries of idempotent requests)
  and the credentials kopf logs in with;
- what everyone shares: ``errors`` (API failures by status family), ``kubeconfig`` (the
  loader's credentials, kubeconfig or in-cluster), ``rate_limit``, ``retry_log`` (retries as
  a few lines while the API server is away), ``timestamps``, ``kinds`` (the cached kinds)
  and ``listing`` (LIST pages, Replace causes).

This is the only package that imports kopf, kubernetes or aiohttp clients.
"""
