"""The README's and docs/simulate.md's examples run as written against examples/snapshots/,
and print what the documents show; the documented JSON has the keys the commands print.

Every ```console block line ``$ .venv/bin/batch-scheduler …`` is run from the repository's
root with this interpreter (``python -m scheduler`` is what ``.venv/bin/batch-scheduler``
runs) and its output (stderr, then stdout: the commands print their notices before the
report) must be the lines below it, once the figures that change from run to run are
masked (the decision time in ms and the speedup).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from deploy_support import ROOT

DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "simulate.md")
SNAPSHOTS = ROOT / "examples" / "snapshots"
COMMAND = ".venv/bin/batch-scheduler"
_TIMING = re.compile(r"\d+\.\d+(?= ms\b)|\d+\.\d+(?=x\b)")


def _console_examples() -> list[tuple[str, str, str]]:
    """(document, command line, expected output) for every console block's command."""
    examples: list[tuple[str, str, str]] = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for block in re.findall(r"^( *)```console\n(.*?)^\1```", text, re.S | re.M):
            lines = textwrap.dedent(block[1]).splitlines()
            starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
            for begin, end in zip(starts, [*starts[1:], len(lines)], strict=True):
                expected = "\n".join(lines[begin + 1 : end]).rstrip("\n") + "\n"
                examples.append((document.name, lines[begin][2:], expected))
    return examples


EXAMPLES = _console_examples()


def _run(command: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    assert argv[0] == COMMAND, f"examples call {COMMAND}, as a fresh clone has it: {command}"
    return subprocess.run(
        [sys.executable, "-m", "scheduler", *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_examples_are_found() -> None:
    """Both documents have examples, and together they use every example snapshot."""
    assert {document for document, _, _ in EXAMPLES} == {"README.md", "simulate.md"}
    used = " ".join(command for _, command, _ in EXAMPLES)
    snapshots = sorted(path.name for path in SNAPSHOTS.glob("*.json"))
    assert snapshots == ["gang.json", "mixed.json", "spread.json"]
    for name in snapshots:
        assert f"examples/snapshots/{name}" in used, name


@pytest.mark.parametrize(
    ("command", "expected"),
    [pytest.param(c, e, id=f"{d}: {c.removeprefix(COMMAND)}") for d, c, e in EXAMPLES],
)
def test_a_documented_command_prints_what_the_document_shows(command: str, expected: str) -> None:
    """Run verbatim; the output is the document's, figures that vary masked."""
    result = _run(command)
    assert result.returncode == 0, result.stderr
    assert _TIMING.sub("N", result.stderr + result.stdout) == _TIMING.sub("N", expected)


def _json_blocks() -> list[dict[str, Any]]:
    text = (ROOT / "docs" / "simulate.md").read_text(encoding="utf-8")
    return [json.loads(block) for block in re.findall(r"^```json\n(.*?)^```", text, re.S | re.M)]


def _same_keys(documented: object, printed: object, where: str) -> None:
    """Every mapping has the printed keys in the printed order; every documented list item
    has the keys of the printed items (the documents keep fewer items)."""
    if isinstance(documented, dict):
        assert isinstance(printed, dict), where
        assert list(documented) == list(printed), where
        for key, value in documented.items():
            _same_keys(value, printed[key], f"{where}.{key}")
    elif isinstance(documented, list) and documented and printed:
        assert isinstance(printed, list), where
        for item in documented:
            _same_keys(item, printed[0], f"{where}[]")


@pytest.mark.parametrize(
    ("kind", "command"),
    [
        pytest.param(
            "placements",
            f"{COMMAND} simulate examples/snapshots/mixed.json --output json",
            id="simulate",
        ),
        pytest.param(
            "pod",
            f"{COMMAND} explain examples/snapshots/mixed.json shop/frontend-8c778548f-2lj6h "
            "--output json",
            id="explain",
        ),
    ],
)
def test_the_documented_json_has_the_printed_keys(kind: str, command: str) -> None:
    """docs/simulate.md's JSON examples: the keys the commands print, none more or fewer."""
    (documented,) = [block for block in _json_blocks() if kind in block]
    result = _run(command)
    assert result.returncode == 0, result.stderr
    _same_keys(documented, json.loads(result.stdout), kind)


def test_the_compare_json_is_as_documented() -> None:
    """--compare --output json: off, on, a bare speedup number and the differences."""
    result = _run(f"{COMMAND} simulate examples/snapshots/spread.json --compare --output json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report) == ["off", "on", "speedup", "differences"]
    assert isinstance(report["speedup"], float)
    assert report["differences"] == []
    assert list(report["on"]) == ["placements", "summary"]
    text = (ROOT / "docs" / "simulate.md").read_text(encoding="utf-8")
    assert '{"off": {…}, "on": {…}, "speedup": 1.98, "differences": [{"pod":' in text
