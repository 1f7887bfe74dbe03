"""Hostile files, property-based: whatever the bytes of a ``simulate`` snapshot, a ``--config``
file or a kubeconfig, the answer is a result or exit 2 with one line naming the file.

Each example starts from a valid file and damages it the way files get damaged: bytes
flipped, inserted or cut, another encoding (UTF-16/32 with and without byte-order mark,
Latin-1), nesting thousands deep, control characters, odd timestamps, a document repeated.
The CLI runs in-process (``cli.main.main``) so hundreds of examples stay fast; a handful of
subprocess runs check the same contract for ``run`` (kubeconfig, metrics port, --config).
"""

from __future__ import annotations

import codecs
import contextlib
import io
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.cli.main import main
from scheduler.kube.kubeconfig import KubeconfigError, load_configuration
from scheduler.logs.setup import configure_logging
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.reliability


def _doc(obj: dict[str, object]) -> dict[str, object]:
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "resourceVersion")}  # type: ignore[attr-defined]
    return {**obj, "metadata": meta}


SNAPSHOT = yaml.safe_dump_all(
    [
        _doc(make_node("n1")),
        _doc(make_node("n2", labels={"zone": "a"})),
        _doc(make_pod("running", cpu="1", node_name="n1")),
        _doc(make_pod("web", cpu="100m", labels={"app": "web"})),
        _doc(make_pod("job", cpu="2", memory="1Gi")),
    ]
)
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 10
leaderElection:
  leaderElect: false
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
profiles:
- schedulerName: batch-scheduler
  plugins:
    score:
      enabled:
      - {name: ImageLocality, weight: 2}
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: LeastAllocated}
"""
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""

ENCODINGS = ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "utf-8-sig", "cp1252"]
CONTROL = [chr(c) for c in (*range(9), 11, 12, *range(14, 32), 127)] + ["\u2028", "\ufeff"]


@st.composite
def damaged(draw: st.DrawFn, text: str) -> tuple[bytes, bool]:
    """(file bytes, must be rejected): one or two kinds of damage to ``text``."""
    data = text.encode()
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(
            st.sampled_from(
                ["bytes", "cut", "encoding", "nesting", "control", "timestamp", "repeat"]
            )
        )
        if kind == "bytes":
            for _ in range(draw(st.integers(1, 8))):
                at = draw(st.integers(0, len(data)))
                junk = draw(st.binary(min_size=0, max_size=4))
                drop = draw(st.integers(0, 3))
                data = data[:at] + junk + data[at + drop :]
        elif kind == "cut":
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == "encoding":
            encoding = draw(st.sampled_from(ENCODINGS))
            decoded = data.decode("utf-8", errors="replace").replace("web", "w\u00e9b")
            data = decoded.encode(encoding, errors="replace")
        elif kind == "nesting":
            depth = draw(st.integers(1, 3000))
            opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}")]))
            nested = (opener * depth + closer * depth).encode()
            data = data.replace(b"cpu: 100m", b"cpu: " + nested, 1) or data
        elif kind == "control":
            at = draw(st.integers(0, len(data)))
            char = draw(st.sampled_from(CONTROL)).encode()
            data = data[:at] + char + data[at:]
        elif kind == "timestamp":
            stamp = draw(
                st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?\Z")
                | st.text(max_size=12)
            )
            data = data.replace(
                b"creationTimestamp: '2026-01-01T00:00:00Z'",
                b"creationTimestamp: " + stamp.encode("utf-8", errors="replace"),
            )
        else:
            data = data + b"\n---\n" + data
    # Whatever else happened, a wide encoding can never be read: its BOM, or NULs without
    # one (YAML refuses a NUL even in a comment). Too deep nesting is tested one by one.
    must_fail = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" in data
    return data, must_fail


@pytest.fixture(autouse=True, scope="module")
def _logs_back_to_stderr() -> Iterator[None]:
    """The in-process CLI points the process's logging at its captured stderr: undo it."""
    yield
    configure_logging(fmt="console", level="warning", stream=sys.stderr)


def _cli(*argv: str) -> tuple[int, str, str]:
    """``batch-scheduler ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as done:
            code = done.code
    assert isinstance(code, int), code
    return code, out.getvalue(), err.getvalue()


def _assert_one_line_naming(path: Path, code: int, out: str, err: str) -> None:
    assert "Traceback" not in err, err
    if code == 0:
        return
    assert code == 2, (code, err)
    assert err.startswith(f"batch-scheduler: {path}: "), err
    assert err.count("\n") == 1, err
    assert out == "", out


HOSTILE = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@HOSTILE
@given(damaged(SNAPSHOT))
def test_any_damaged_snapshot_exits_0_or_2_with_one_line(
    tmp_path: Path, case: tuple[bytes, bool]
) -> None:
    data, must_fail = case
    path = tmp_path / "cluster.yaml"
    path.write_bytes(data)
    code, out, err = _cli("simulate", str(path), "--output", "json")
    _assert_one_line_naming(path, code, out, err)
    if must_fail:
        assert code == 2, err


@HOSTILE
@given(damaged(CONFIG))
def test_any_damaged_config_exits_0_or_2_with_one_line(
    tmp_path: Path, case: tuple[bytes, bool]
) -> None:
    data, must_fail = case
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(SNAPSHOT)
    path = tmp_path / "config.yaml"
    path.write_bytes(data)
    code, out, err = _cli("simulate", str(snapshot), "--config", str(path), "--output", "json")
    _assert_one_line_naming(path, code, out, err)
    if must_fail:
        assert code == 2, err


@HOSTILE
@given(damaged(KUBECONFIG))
def test_any_damaged_kubeconfig_loads_or_is_one_line_naming_the_file(
    tmp_path: Path, case: tuple[bytes, bool]
) -> None:
    data, _ = case
    path = tmp_path / "kubeconfig"
    path.write_bytes(data)
    message = ""
    try:
        load_configuration(str(path))
    except KubeconfigError as exc:
        message = str(exc)
    if message:
        assert message.startswith(f"{path}: "), message
        assert "\n" not in message


# -- ``run`` as a user starts it: exits before it ever talks to an API server -----------------


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", "run", "--metrics-addr", "", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("kubeconfig", "config", "needle"),
    [
        pytest.param(KUBECONFIG, bytes(range(256)), "{config}: not UTF-8 text", id="binary-config"),
        pytest.param(KUBECONFIG, CONFIG.encode("utf-16"), "{config}: is UTF-16", id="utf16-config"),
        pytest.param(
            KUBECONFIG,
            CONFIG.replace(
                "ImageLocality, weight: 2}", "ImageLocality}\n      - {name: ImageLocality}"
            ).encode(),
            "{config}: profiles[0].plugins.score.enabled[1]: duplicate plugin 'ImageLocality'",
            id="score-plugin-twice",
        ),
        pytest.param(
            KUBECONFIG,
            CONFIG.replace("leaseDuration: 15s", "leaseDuration: 3000000000s").encode(),
            "{config}: leaderElection.leaseDuration: must be at most 2147483647s",
            id="lease-too-long",
        ),
        pytest.param(
            KUBECONFIG,
            CONFIG.replace(
                "podMaxBackoffSeconds: 10", "podMaxBackoffSeconds: 1" + "0" * 23
            ).encode(),
            "{config}: podMaxBackoffSeconds: must be between 1 and 9223372036",
            id="backoff-1e23",
        ),
        pytest.param(
            KUBECONFIG.replace("token: abc", 'token: "abc\\n"'),
            None,
            "{kubeconfig}: users[name=u].user.token: contains a line break",
            id="token-newline",
        ),
        pytest.param(
            KUBECONFIG.replace("https://", "https://admin:pw@"),
            None,
            "{kubeconfig}: clusters[name=c].cluster.server: must not contain credentials",
            id="credentials-in-url",
        ),
    ],
)
def test_run_exits_2_with_one_line_naming_file_and_field(
    tmp_path: Path, kubeconfig: str, config: bytes | None, needle: str
) -> None:
    kube_path = tmp_path / "kubeconfig"
    kube_path.write_text(kubeconfig)
    args = ["--kubeconfig", str(kube_path)]
    config_path = tmp_path / "config.yaml"
    if config is not None:
        config_path.write_bytes(config)
        args += ["--config", str(config_path)]
    result = _run(*args)
    expected = "batch-scheduler: " + needle.format(kubeconfig=kube_path, config=config_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(expected), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "--log-level" not in result.stderr
    assert "pw@" not in result.stderr


def test_metrics_port_in_use_exits_2_with_one_line(tmp_path: Path) -> None:
    kube_path = tmp_path / "kubeconfig"
    kube_path.write_text(KUBECONFIG)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run("--kubeconfig", str(kube_path), "--metrics-addr", f"127.0.0.1:{port}")
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"batch-scheduler: metrics_addr: cannot listen on 127.0.0.1:{port}: "
        "address already in use\n"
    )
