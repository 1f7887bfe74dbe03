"""DynamicResources' pure core: kube's structured allocator and DRA CEL selectors.

The plugin itself (PreEnqueue … PreBind), the informers and the cache store that feed
it are built on top of this package; here is what does not depend on them:
``allocation.PodAllocator`` (per pod, then per node), ``allocated_state`` (devices taken
and in flight), ``pools.SliceIndex`` (slices per node), ``cel_env`` (selectors) and
``result_api`` (the allocation as written back). docs/dra.md has the map.
"""
