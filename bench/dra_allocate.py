"""The structured allocator's cost per pod: one claim for one GPU, every node tried.

``python -m bench.dra_allocate [--nodes 1000] [--devices 8] [--pods 20]``: issue 40's shape
(N nodes, each with one ResourceSlice of D GPUs, pods asking for one GPU from a class with
a driver selector and a request selector on a version and a memory capacity). For each pod:
a ``PodAllocator`` (kube's PreFilter) and ``allocate`` on every node (kube's Filter), then
the chosen devices recorded as taken (Reserve). Prints the first pod's time (cold: every
selector evaluated on every device) and the median of the others (warm: verdicts kept per
device record). No API, no plugin wiring: the allocator alone.
"""

from __future__ import annotations

import argparse
import statistics
import time

from scheduler.model.parse_dra_claims import device_class_from_raw, resource_claim_from_raw
from scheduler.model.parse_dra_slices import resource_slice_from_raw
from scheduler.plugins.dynamic_resources import cel_env
from scheduler.plugins.dynamic_resources.allocated_state import AllocatedState
from scheduler.plugins.dynamic_resources.allocation import Allocated, PodAllocator
from scheduler.plugins.dynamic_resources.pools import SliceIndex

DRIVER = "gpu.example.com"


def _slice(node: int, devices: int) -> object:
    return {
        "metadata": {"name": f"node-{node}-gpus"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": f"node-{node}", "generation": 1, "resourceSliceCount": 1},
            "nodeName": f"node-{node}",
            "devices": [
                {
                    "name": f"gpu-{d}",
                    "attributes": {
                        "model": {"string": "a100"},
                        "driverVersion": {"version": "1.4.0"},
                        "index": {"int": d},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for d in range(devices)
            ],
        },
    }


CLASS = {
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
}
SELECTOR = (
    f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("1.0.0")) && '
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
)


def _claim(i: int) -> object:
    return {
        "metadata": {"name": f"pod-{i}-gpu", "namespace": "default", "uid": f"u{i}"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "selectors": [{"cel": {"expression": SELECTOR}}],
                        },
                    }
                ]
            }
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="DRA allocator cost per pod")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--pods", type=int, default=20)
    args = parser.parse_args(argv)
    slices = SliceIndex(resource_slice_from_raw(_slice(n, args.devices)) for n in range(args.nodes))
    classes = {"gpu": device_class_from_raw(CLASS)}
    taken = AllocatedState()
    selectors, devices = cel_env.SelectorCache(), cel_env.DeviceVariables()
    nodes = [(f"node-{n}", {"kubernetes.io/hostname": f"node-{n}"}) for n in range(args.nodes)]
    times: list[float] = []
    for i in range(args.pods):
        start = time.perf_counter()
        allocator = PodAllocator(
            [resource_claim_from_raw(_claim(i))],
            classes=classes,
            slices=slices,
            allocated=taken,
            selectors=selectors,
            devices=devices,
        )
        feasible = [
            outcome
            for name, labels in nodes
            if isinstance(outcome := allocator.allocate(name, labels), Allocated)
        ]
        times.append(time.perf_counter() - start)
        taken.add(feasible[0].results[0])
    print(
        f"{args.nodes} nodes x {args.devices} devices, one GPU per pod: "
        f"first pod {times[0] * 1e3:.1f} ms (selectors evaluated), "
        f"then median {statistics.median(times[1:]) * 1e3:.1f} ms per pod "
        f"({statistics.median(times[1:]) / args.nodes * 1e6:.1f} us per node)"
    )


if __name__ == "__main__":
    main()
