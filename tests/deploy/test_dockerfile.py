"""The Dockerfile, read instruction by instruction (no Docker engine here to build it).

What a build would reveal and a parse can check: a multi-stage build on slim Python 3.11,
the wheel built in the builder stage and only the installed environment copied out, a
numeric non-root USER, no HEALTHCHECK (Kubernetes probes do that), the console script as
ENTRYPOINT with ``run`` as CMD, pip never leaving a cache, the metrics port exposed.
test_image_wheel.py runs the builder's wheel command itself.
"""

from __future__ import annotations

import re

from deploy_support import (
    DOCKERFILE,
    ROOT,
    console_scripts,
    container,
    dockerfile_instructions,
    dockerfile_stages,
    one,
)

TEXT = DOCKERFILE.read_text(encoding="utf-8")


def test_parser_reads_continuations_and_stages() -> None:
    """A check of the checker: continued lines join, comments drop, ARGs expand in FROM."""
    text = "ARG B=python:3.11-slim\n# c\nFROM ${B} AS one\nRUN a \\\n  # inner\n  && b\nFROM $B\n"
    args, stages = dockerfile_stages(text)
    assert args == {"B": "python:3.11-slim"}
    assert [(s.base, s.name) for s in stages] == [
        ("python:3.11-slim", "one"),
        ("python:3.11-slim", None),
    ]
    assert stages[0].all("RUN")[0].value == "a && b"


def test_multi_stage_on_slim_python_311() -> None:
    """At least two stages, each FROM a slim Python 3.11 image."""
    _, stages = dockerfile_stages(TEXT)
    assert len(stages) >= 2
    for stage in stages:
        assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?@sha256:[0-9a-f]{64}", stage.base), (
            stage.base
        )
    assert stages[0].name == "builder"


def test_builder_builds_the_wheel_and_runtime_copies_only_the_environment() -> None:
    """pip wheel runs in the builder; the final stage copies from it, never the source tree."""
    _, stages = dockerfile_stages(TEXT)
    builder, final = stages[0], stages[-1]
    assert any("pip wheel" in i.value and "--no-deps" in i.value for i in builder.all("RUN"))
    assert not any("pip wheel" in i.value or "pip install" in i.value for i in final.all("RUN"))
    copies = final.all("COPY") + final.all("ADD")
    assert copies, "the final stage copies the installed environment"
    for ins in copies:
        assert ins.flags().get("from") == "builder", ins.value
    sources = {src for i in builder.all("COPY") for src in i.value.split()[:-1]}
    # README: the package readme; requirements.lock: the hashed runtime dependencies
    assert sources == {"pyproject.toml", "README.md", "requirements.lock", "scheduler"}


def test_pip_never_keeps_a_cache_and_build_tools_are_removed() -> None:
    """Every pip install/wheel says --no-cache-dir; the final stage uninstalls pip itself."""
    runs = [i.value for i in dockerfile_instructions(TEXT) if i.keyword == "RUN"]
    commands = [c for run in runs for c in re.split(r"&&|;", run)]
    pip = [c for c in commands if re.search(r"pip (install|wheel)", c)]
    assert pip, "the Dockerfile installs nothing?"
    for command in pip:
        assert "--no-cache-dir" in command, command
    _, stages = dockerfile_stages(TEXT)
    final_runs = " ".join(i.value for i in stages[-1].all("RUN"))
    assert re.search(r"pip uninstall --yes pip setuptools wheel", final_runs)


def test_runs_as_numeric_non_root_user() -> None:
    """The final stage's last USER is a numeric UID (and GID) other than 0."""
    _, stages = dockerfile_stages(TEXT)
    users = stages[-1].all("USER")
    assert users, "no USER: the image would run as root"
    uid, _, gid = users[-1].value.partition(":")
    assert uid.isdigit(), users[-1].value
    assert int(uid) > 0, users[-1].value
    assert not gid or int(gid) > 0


def test_entrypoint_is_the_console_script_with_run_as_cmd() -> None:
    """ENTRYPOINT ["batch-scheduler"] (pyproject's script), CMD ["run"]; no HEALTHCHECK."""
    instructions = dockerfile_instructions(TEXT)
    keywords = [i.keyword for i in instructions]
    assert "HEALTHCHECK" not in keywords
    (entrypoint,) = [i for i in instructions if i.keyword == "ENTRYPOINT"]
    (cmd,) = [i for i in instructions if i.keyword == "CMD"]
    assert entrypoint.exec_form() == ["batch-scheduler"]
    assert "batch-scheduler" in console_scripts()
    assert cmd.exec_form() == ["run"]


def test_exposes_the_metrics_port_of_the_deployment() -> None:
    """EXPOSE names the containerPort the probes and the Service use."""
    exposed = {
        int(port.split("/")[0])
        for i in dockerfile_instructions(TEXT)
        if i.keyword == "EXPOSE"
        for port in i.value.split()
    }
    ports = {p["containerPort"] for p in container(one("Deployment"))["ports"]}
    assert exposed == ports


def test_dockerignore_keeps_local_state_out_of_the_context() -> None:
    """.dockerignore excludes the venv, git and caches (COPY takes only what it names)."""
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".git", ".venv", "**/__pycache__"} <= ignored
    assert not {"pyproject.toml", "README.md", "scheduler"} & ignored


def test_dependencies_come_from_the_lock_with_hashes_and_nothing_is_resolved_again() -> None:
    """The builder installs the lock with --require-hashes; the project's wheel with
    --no-deps, so no dependency can come from anywhere but the lock."""
    _, stages = dockerfile_stages(TEXT)
    commands = [c for i in stages[0].all("RUN") for c in re.split(r"&&|;", i.value)]
    installs = [c for c in commands if "pip install" in c]
    assert any("--require-hashes" in c and "-r requirements.lock" in c for c in installs)
    for command in installs:
        assert "--no-deps" in command, command


def _lock() -> dict[str, tuple[str, list[str]]]:
    """requirements.lock: name → (version, hashes)."""
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8").replace("\\\n", " ")
    pins: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        if match := re.match(r"([A-Za-z0-9_.-]+)==(\S+)\s+(.*)", line):
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", match.group(3))
            pins[re.sub(r"[-_.]+", "-", match.group(1).lower())] = (match.group(2), hashes)
    return pins


def test_the_lock_pins_every_runtime_dependency_with_hashes() -> None:
    """Every [project] dependency of pyproject.toml is in the lock, at a version its
    specifier allows, and every pin there carries at least one sha256."""
    import tomllib

    from packaging.requirements import Requirement

    pins = _lock()
    assert pins
    for name, (version, hashes) in pins.items():
        assert hashes, f"{name}=={version} has no hash"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for spec in project["dependencies"]:
        requirement = Requirement(spec)
        name = re.sub(r"[-_.]+", "-", requirement.name.lower())
        assert name in pins, f"{requirement.name} is not in requirements.lock (make lock)"
        assert requirement.specifier.contains(pins[name][0]), (spec, pins[name][0])
