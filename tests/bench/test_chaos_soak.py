"""The soak's reading of the reporter's backlog from the scheduler's ``/metrics``."""

from __future__ import annotations

import os
import socket
from typing import cast

from bench.chaos import report, soak
from bench.scheduler_perf.schedulers import SchedulerProcess
from scheduler.metrics.registry import Metrics


class _Scraped:
    """A SchedulerProcess that only answers ``scrape`` with a registry's exposition."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    async def scrape(self) -> str:
        return self.metrics.render().decode()


async def test_reports_reads_the_queue_and_the_mean_event_delay() -> None:
    metrics = Metrics()
    metrics.report_queue.set(7)
    metrics.report_delay.labels(kind="event", reason="Scheduled").observe(1.0)
    metrics.report_delay.labels(kind="event", reason="FailedScheduling").observe(2.0)
    metrics.report_delay.labels(kind="condition", reason="FailedScheduling").observe(50.0)
    process = cast("SchedulerProcess", _Scraped(metrics))
    assert await soak._reports(process) == {"reports_queued": 7, "event_delay_s": 1.5}
    assert await soak._reports(cast("SchedulerProcess", _Scraped(Metrics()))) == {
        "reports_queued": 0,
        "event_delay_s": None,
    }


def test_the_soak_table_shows_the_backlog() -> None:
    sample = {
        "minute": 1.0,
        "rss_mb": 130.0,
        "rss_peak_mb": 134.5,
        "sockets": 31,
        "cpu_s": 6.0,
        "bound": 3000,
        "cpu_ms_per_pod": 2.0,
        "pending": 0,
        "oldest_pending_s": 0.0,
        "loadavg": [1.0, 1.0, 1.0],
        "reports_queued": 42,
        "event_delay_s": 0.25,
    }
    record = {"minutes": 1, "nodes": 10, "rate": 5, "live": 50, "samples": [sample]}
    table = report.soak_markdown(record, {"commit": "abc"})
    assert "| 1.0 | 130.0 | 134.5 | 31 | 6.0 | 3000 | 2.0 | 0 | 0.0 | 42 | 0.25 | 1.0 |" in table
    del sample["rss_peak_mb"], sample["sockets"]  # a record from before these were read
    table = report.soak_markdown(record, {"commit": "abc"})
    assert "| 1.0 | 130.0 | – | – | 6.0 |" in table


def test_sockets_counts_the_socket_descriptors_of_a_process() -> None:
    before = soak.sockets(os.getpid())
    with socket.socket() as a, socket.socket() as b:
        assert a.fileno() != b.fileno()
        assert soak.sockets(os.getpid()) == before + 2
    assert soak.sockets(os.getpid()) == before
    assert soak.sockets(2**22 + 1) == 0  # no such process
