"""How many of the project's modules one decision crosses, from ``Scheduler.schedule_one``
to the bind's dispatch: a reader follows that path, and it must not grow as modules split.

The path is recorded, not read: every function entered while one pod is scheduled (its
full pass; then a second pod of its signature on the hint path), by module. The plugins,
the model records and the leaves (logs, metrics, clock) are left out of the count: they are
the same whatever the cycle's shape.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import scheduler_for

PACKAGE = Path(__file__).resolve().parents[3] / "scheduler"
NOT_COUNTED = ("plugins", "model", "logs", "metrics", "clock.py")
MAX_MODULES = {"full": 21, "hint": 21}
"""What each path crossed before the framework and cycle packages were split along their
seams (issue 39): 21 modules each; 20 each after."""


def _modules_entered(run: Callable[[], object]) -> list[str]:
    entered: set[str] = set()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            entered.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    names = []
    for filename in entered:
        path = Path(filename)
        if not path.is_relative_to(PACKAGE):
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith(NOT_COUNTED):
            names.append(relative)
    return sorted(names)


def test_one_decision_crosses_no_more_modules_than_before() -> None:
    """A full pass and a hinted pod, each from schedule_one to the binder, cross at most as
    many modules as they did before the cycle was split."""
    nodes = [make_node(f"node-{i}", cpu="4") for i in range(4)]
    scheduler, _, _ = scheduler_for(nodes, auto_bind=False)
    for profile in scheduler.profiles.values():
        profile.timing.plugin_sample = 0.0  # the path of the 90 % of cycles not sampled
    first, second = (pod_from_raw(make_pod(f"web-{i}", cpu="100m")) for i in range(2))
    scheduler.enqueue(first)
    scheduler.enqueue(second)
    run = scheduler.queue.try_pop()
    assert run is not None
    infos = iter(run)
    head = next(infos)
    full = _modules_entered(lambda: scheduler.schedule_one(head))
    follower = next(infos)
    hint = _modules_entered(lambda: scheduler.schedule_one(follower))
    counts = scheduler.counts()
    assert (counts.batched, counts.exact) == (1, 0), "the second pod must take the hint path"
    assert len(full) <= MAX_MODULES["full"], full
    assert len(hint) <= MAX_MODULES["hint"], hint
