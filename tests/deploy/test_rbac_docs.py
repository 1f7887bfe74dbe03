"""docs/operations.md against the RBAC manifests: the ``kubectl auth can-i --list`` block
and the manifests table's ClusterRole row say what the ClusterRole and Role grant."""

from __future__ import annotations

import re

from deploy_support import MANIFESTS, ROOT, documents

OPERATIONS = ROOT / "docs" / "operations.md"


def _granted() -> dict[tuple[str, str, str], set[str]]:
    """(resource[.group], non-resource URLs, resource names) → verbs, as can-i lists them."""
    rows: dict[tuple[str, str, str], set[str]] = {}
    for name in ("02-clusterrole.yaml", "04-role.yaml"):
        (role,) = documents(MANIFESTS / name)
        for rule in role["rules"]:
            names = f"[{' '.join(rule.get('resourceNames', []))}]"
            for url in rule.get("nonResourceURLs", []):
                rows.setdefault(("", f"[{url}]", "[]"), set()).update(rule["verbs"])
            for group in rule.get("apiGroups", []):
                for resource in rule.get("resources", []):
                    key = (f"{resource}.{group}" if group else resource, "[]", names)
                    rows.setdefault(key, set()).update(rule["verbs"])
    return rows


def _documented() -> dict[tuple[str, str, str], set[str]]:
    text = OPERATIONS.read_text(encoding="utf-8")
    block = re.search(r"```\n(Resources +Non-Resource URLs.*?)```", text, re.S)
    assert block, "the auth can-i block is gone from docs/operations.md"
    rows: dict[tuple[str, str, str], set[str]] = {}
    for line in block.group(1).splitlines()[1:]:
        cells = re.findall(r"\[[^\]]*\]|\S+", line)
        if cells[0].startswith("["):  # a non-resource URL row has no resource
            cells.insert(0, "")
        resource, urls, names, verbs = cells
        assert (resource, urls, names) not in rows, f"{line!r} is listed twice"
        rows[(resource, urls, names)] = set(verbs.strip("[]").split())
    return rows


def test_the_can_i_block_is_what_the_roles_grant() -> None:
    assert _documented() == _granted()


def test_the_manifests_table_names_every_clusterrole_resource_and_verb() -> None:
    text = OPERATIONS.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `02-clusterrole.yaml`"))
    (role,) = documents(MANIFESTS / "02-clusterrole.yaml")
    for rule in role["rules"]:
        for item in [*rule.get("resources", []), *rule.get("nonResourceURLs", [])]:
            assert item in row, f"{item} is not in the manifests table's ClusterRole row"
        for verb in rule["verbs"]:
            assert verb in row, f"{verb} is not in the manifests table's ClusterRole row"
