"""Security: the bearer token is required and used, never logged; the endpoints serve three
paths and nothing else. (Least-privilege RBAC is checked with the manifests, tests/deploy.)"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from scheduler.sim import workload as simwork
from tests.reliability import invariants
from tests.reliability.support import ApiError, Figures, MakeSim, bound_count, create_paced
from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(90)]

TOKEN = "s3cr3t-Bearer-t0ken-4f9a1c"
WRONG = "wr0ng-t0ken-77d2e0"


def _leaks(text: str, *secrets: str) -> list[str]:
    return [s for s in secrets if s in text or s[:12] in text]


def test_token_is_required_used_and_never_logged(
    make_sim: MakeSim, tmp_path: Path, figures: Figures
) -> None:
    _, api, kubeconfig = make_sim(token=TOKEN)
    anonymous = type(api)(api.url)
    with pytest.raises(ApiError) as denied:
        anonymous.request("GET", "/api/v1/pods")
    assert denied.value.status == 401
    create_paced(api, simwork.make_nodes(2))

    # The right token (from the kubeconfig): the scheduler works, at debug level too.
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log", level="debug")
    try:
        proc.wait_ready()
        pods = simwork.make_pods(5, prefix="sec-", scheduler_name=SCHEDULER)
        create_paced(api, pods)
        keys = {invariants.pod_key(p) for p in pods}
        assert wait_for(lambda: bound_count(api, keys) == len(keys), 20)
        checked = {}
        for path in ("/metrics", "/healthz", "/readyz"):
            status, body = proc.get(path)
            assert status == 200, path
            assert not _leaks(body, TOKEN), path
            checked[path] = status
        for path in ("/", "/debug/pprof", "/config", "/metrics/../kubeconfig", "/env"):
            assert proc.get(path)[0] == 404, path
        for path in ("/metrics", "/healthz", "/readyz"):
            assert proc.get(path, method="POST")[0] == 405, path
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
    good_log = proc.stderr()
    assert len(good_log.splitlines()) > 20  # debug logging really ran
    assert not _leaks(good_log, TOKEN)

    # A wrong token: refused by the API, said clearly, still not logged.
    wrong_config = tmp_path / "wrong-kubeconfig"
    wrong_config.write_text(kubeconfig.read_text().replace(TOKEN, WRONG))
    bad = SchedulerProc(wrong_config, tmp_path / "wrong.log", level="debug")
    try:
        assert wait_for(lambda: not bad.alive() or "401" in bad.stderr(), 20)
        assert bad.get("/readyz")[0] != 200
    finally:
        bad.terminate()
    wrong_log = bad.stderr()
    assert re.search(r"401|Unauthorized", wrong_log), wrong_log[-2000:]
    assert not _leaks(wrong_log, TOKEN, WRONG), "a token reached the log"
    figures.record(
        unauthenticated_401=1,
        endpoints_checked=len(checked),
        other_paths_404=5,
        debug_log_lines=len(good_log.splitlines()),
        token_leaks=0,
        wrong_token_rejected=1,
    )
