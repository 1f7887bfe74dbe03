"""Writing a kubeconfig that points kubectl, kopf and the official client at the emulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def kubeconfig(
    server: str, *, token: str | None = None, name: str = "sim", namespace: str = "default"
) -> dict[str, Any]:
    """A kubeconfig dict with one cluster, user and context, the context current."""
    user: dict[str, Any] = {"token": token} if token else {}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server}}],
        "users": [{"name": name, "user": user}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}
        ],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(
    path: str | Path, server: str, *, token: str | None = None, name: str = "sim"
) -> Path:
    """Write the kubeconfig to ``path`` (mode 0600, as it may hold a token) and return it."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(yaml.safe_dump(kubeconfig(server, token=token, name=name), sort_keys=False))
    p.chmod(0o600)
    return p
