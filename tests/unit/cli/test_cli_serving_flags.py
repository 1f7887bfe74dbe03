"""``run``'s serving flags: named as kube-scheduler's, landing in SchedulerSettings."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.app.settings import SchedulerSettings, SettingsError
from scheduler.cli.main import build_parser


def test_serving_flags_parse_as_kube_scheduler_names_them() -> None:
    args = build_parser().parse_args(
        [
            "run",
            "--secure-port=10300",
            "--bind-address=127.0.0.1",
            "--tls-cert-file=/c.pem",
            "--tls-private-key-file=/k.pem",
            "--authentication-kubeconfig=/a.kubeconfig",
            "--authorization-kubeconfig=/z.kubeconfig",
            "--metrics-addr=127.0.0.1:0",
        ]
    )
    assert args.secure_port == 10300
    assert args.bind_address == "127.0.0.1"
    assert args.tls_cert_file == Path("/c.pem")
    assert args.tls_private_key_file == Path("/k.pem")
    assert args.authentication_kubeconfig == Path("/a.kubeconfig")
    assert args.authorization_kubeconfig == Path("/z.kubeconfig")
    assert args.metrics_addr == "127.0.0.1:0"


def test_defaults_are_kube_schedulers_and_plain_http_is_off() -> None:
    settings = SchedulerSettings()
    assert (settings.secure_port, settings.bind_address) == (10259, "0.0.0.0")
    assert settings.metrics_addr == ""
    settings.validate()


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        (SchedulerSettings(secure_port=70000), "secure_port"),
        (SchedulerSettings(secure_port=-1), "secure_port"),
        (SchedulerSettings(bind_address="localhost"), "bind_address"),
        (SchedulerSettings(tls_cert_file=Path("/c.pem")), "tls_cert_file"),
        (SchedulerSettings(tls_private_key_file=Path("/k.pem")), "tls_cert_file"),
    ],
)
def test_bad_serving_settings_name_the_field(settings: SchedulerSettings, field: str) -> None:
    with pytest.raises(SettingsError) as caught:
        settings.validate()
    assert caught.value.field == field


def test_ipv6_bind_address_is_accepted() -> None:
    SchedulerSettings(bind_address="::").validate()
