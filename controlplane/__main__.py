"""``make cluster``: start the control plane for a person and wait for Ctrl-C.

Prints the two kubeconfigs (admin; our ServiceAccount) and how to run the scheduler against
it. ``--kube-scheduler`` also starts kube-scheduler v1.37 (for side-by-side experiments).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from controlplane.launcher import ControlPlane, ControlPlaneError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m controlplane", description=__doc__)
    parser.add_argument("--dir", type=Path, help="work folder (default: a new temporary one)")
    parser.add_argument("--no-controller-manager", action="store_true")
    parser.add_argument("--kube-scheduler", action="store_true")
    parser.add_argument(
        "--feature-gates",
        default="",
        help="kube feature gates for every component, e.g. GenericWorkload=true (PodGroups)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        cp = ControlPlane.start(
            args.dir,
            controller_manager=not args.no_controller_manager,
            kube_scheduler=args.kube_scheduler,
            feature_gates=args.feature_gates,
        )
    except ControlPlaneError as exc:
        print(f"make cluster: {exc}", file=sys.stderr)
        return 2
    with cp:
        names = ", ".join(p.name for p in cp.processes)
        print(
            f"control plane ready in {time.monotonic() - started:.1f} s ({names})\n"
            f"  API server:           {cp.api_url}\n"
            f"  admin kubeconfig:     {cp.admin_kubeconfig}\n"
            f"  scheduler kubeconfig: {cp.scheduler_kubeconfig}  (ServiceAccount "
            "batch-scheduler/batch-scheduler)\n"
            f"  logs:                 {cp.workdir / 'logs'}\n\n"
            "Run the scheduler against it, as its ServiceAccount:\n"
            f"  .venv/bin/batch-scheduler run --kubeconfig {cp.scheduler_kubeconfig}\n"
            f"kubectl as the admin:\n  kubectl --kubeconfig {cp.admin_kubeconfig} get nodes\n"
            "Ctrl-C stops every process and removes the work folder.",
            flush=True,
        )
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            while all(p.alive() for p in cp.processes):
                time.sleep(0.5)
            dead = [p for p in cp.processes if not p.alive()]
            print(f"{dead[0].name} exited:\n{dead[0].tail()}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
