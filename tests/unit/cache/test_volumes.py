"""cache.volumes: the assume layer and the index by storage class."""

from __future__ import annotations

import pytest

from scheduler.cache.volumes import Volumes
from scheduler.model.parse_volumes import pv_from_raw, pvc_from_raw
from tests.volume_builders import make_pv, make_pvc


def test_assumed_pv_moves_between_classes_and_restores() -> None:
    volumes = Volumes()
    pv = pv_from_raw(make_pv("pv-1", "a"))
    volumes.set_pv(pv)
    claim = pvc_from_raw(make_pvc("c", "a"))
    volumes.assume_pv(pv.with_claim(claim))
    assumed = volumes.pv("pv-1")
    assert assumed is not None
    assert assumed.claim_ref is not None
    assert volumes.pvs_of_class("a") == [assumed]
    assert volumes.api_pv("pv-1") == pv
    volumes.restore_pv("pv-1")
    assert volumes.pv("pv-1") == pv
    assert volumes.pvs_of_class("a") == [pv]
    volumes.remove_pv("pv-1")
    assert volumes.pvs_of_class("a") == []
    assert volumes.pv("pv-1") is None


def test_watch_update_drops_assumption_and_unknown_objects_cannot_be_assumed() -> None:
    volumes = Volumes()
    claim = pvc_from_raw(make_pvc("c"))
    with pytest.raises(KeyError):
        volumes.assume_pvc(claim)
    volumes.set_pvc(claim)
    volumes.assume_pvc(claim.with_selected_node("n1"))
    assumed = volumes.pvc("default", "c")
    assert assumed is not None
    assert assumed.selected_node == "n1"
    before = volumes.generation
    volumes.set_pvc(claim)
    assert volumes.pvc("default", "c") == claim
    assert volumes.generation > before
