"""kube: every byte the scheduler exchanges with the Kubernetes API.

- ``client``: one async API client (kubeconfig or in-cluster credentials, aiohttp pool,
  timeouts, retries of idempotent requests) and the credentials kopf logs in with;
- ``errors``: API failures as exceptions by status family;
- ``binder``: the cycle's BindDispatcher (bounded concurrent ``pods/binding`` POSTs);
- ``reporter``: the cycle's Reporter (Events, ``PodScheduled`` conditions, de-duplicated);
- ``leader``: Lease-based leader election, a Gate the loop waits on;
- ``controller``: kopf handlers feeding the cache and the queue.

``binder``, ``reporter``, ``leader`` and ``controller`` are independent of each other;
what they share lives in ``client`` and ``errors``. This is the only package that imports
kopf, kubernetes or aiohttp clients.
"""
