"""What the two watch engines share about LISTs: the page size, and why a Replace ran.

kube's reflector replaces its store with every LIST; both of ours do so too — the informers
of pods and nodes (``intake``) after their own re-list, and the cache sync
(``controller.sync``) after kopf's. One layer below both, so that neither imports the other
for these.

Neighbours: ``kinds`` (what is listed), ``controller.sync`` and ``controller.settings``
(kopf's LISTs), ``intake.reflector`` (the informers' LISTs).
"""

from __future__ import annotations

from enum import StrEnum, unique

__all__ = ["LIST_CHUNK", "Cause"]

LIST_CHUNK = 500
"""Objects per LIST page (``limit``), kopf's, the informers' and our reconciling LISTs alike:
bounds one response's size on big clusters."""


@unique
class Cause(StrEnum):
    """Why a reconciling LIST ran (the ``cause`` field of ``reconcile_removed``)."""

    LISTED = "listed"
    """kopf delivered listed objects: its initial listing, or a re-list."""
    WATCH_RESTART = "watch-restart"
    """kopf's watch got 410 Gone and no listed object followed: an empty re-list."""
    RELIST = "relist"
    """An informer (``intake``) re-listed its kind: after a 410, or a failed watch."""
    PERIODIC = "periodic"
    """The safety net (``--resync-interval``): what it removes is a repair."""
