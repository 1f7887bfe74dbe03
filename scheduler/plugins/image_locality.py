"""ImageLocality: favour nodes that already hold the pod's container images.

Port of kube-scheduler's plugins/imagelocality (v1.35). Every container image (init
containers included) found on the node adds its size scaled by the share of nodes that
have it (``size * nodes_with_image / all_nodes``), which damps the "node heating" of
piling pods onto the few nodes with a popular image. The sum is clamped to
[23 MiB, 1000 MiB * containers] and mapped linearly onto 0..100. There is no
NormalizeScore. Image counts per name come from the snapshot (``Snapshot.image_num_nodes``,
``num_nodes``) through the Handle. Neighbours: cache.snapshot, model.pod (normalized
image names), signature_fragments (signer key).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.plugins import names, plugin_args, score_math, signature_fragments

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
"""Below this an image is assumed quick to pull: no credit."""
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB
"""Per container: beyond this more local bytes earn nothing more."""


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """kube's calculatePriority: clamp the scaled bytes and map them onto 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return score_math.go_div(
        MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD
    )


def scaled_image_score(size: int, num_nodes_with_image: int, total_nodes: int) -> int:
    """``int64(float64(size) * (float64(n) / float64(total)))`` exactly as Go computes it."""
    spread = float(num_nodes_with_image) / float(total_nodes)
    return int(float(size) * spread)


class ImageLocality:
    """Score, Sign. Takes no args."""

    name: str = names.IMAGE_LOCALITY

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "ImageLocalityArgs", ())
        self._handle = handle

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        # No node has any of the pod's images: every score would be 0, so skip the per-node
        # work (kube scores anyway; the totals are the same).
        snapshot = self._handle.snapshot
        if not any(snapshot.image_num_nodes(image) for image in pod.images):
            return st.SKIP
        return st.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        images = pod.images
        total = 0
        if node is not None and node.images:
            snapshot = self._handle.snapshot
            total_nodes = snapshot.num_nodes
            on_node = node.images
            for image in images:  # one entry per container: a shared image counts twice
                size = on_node.get(image)
                if size is not None:
                    total += scaled_image_score(size, snapshot.image_num_nodes(image), total_nodes)
        return calculate_priority(total, len(images))

    def sign_pod(self, pod: Pod) -> Hashable | None:
        # Sorted with repeats: the sum ignores order, but counts each container.
        return (signature_fragments.IMAGE_NAMES_SIGNER, tuple(sorted(pod.images)))
