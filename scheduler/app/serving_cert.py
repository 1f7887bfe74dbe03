"""The TLS context of the secure port: the given certificate, or a self-signed one.

As kube-scheduler (``MaybeDefaultWithSelfSignedCerts("localhost", nil, [127.0.0.1])``):
without ``--tls-cert-file``/``--tls-private-key-file`` a certificate for ``localhost`` and
``127.0.0.1`` is made at start and kept in memory only (kube's ``CertDirectory`` is empty
for the scheduler). TLS 1.2 at least, as kube's default minimum.

Neighbours: ``runtime`` calls :func:`server_context`; ``endpoints`` serves with it.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
import time
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from scheduler.app.settings import SettingsError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["self_signed", "server_context"]

SELF_SIGNED_DAYS = 365


def self_signed(host: str = "localhost") -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) for ``host`` and 127.0.0.1, valid a year from now."""
    key = ec.generate_private_key(ec.SECP256R1())
    # kube names it host@unix-seconds, so that a restart's certificate differs by name.
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(time.time())}")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(host), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_encipherment=True,
                content_commitment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def server_context(cert_file: Path | None, key_file: Path | None) -> ssl.SSLContext:
    """A server context with the given pair, or a self-signed one when neither is given.

    Raises SettingsError naming ``tls_cert_file`` when the pair cannot be loaded."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file is not None and key_file is not None:
        try:
            ctx.load_cert_chain(cert_file, key_file)
        except (OSError, ssl.SSLError) as exc:
            reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
            raise SettingsError(
                "tls_cert_file", f"cannot load {cert_file} with {key_file}: {reason}"
            ) from None
        return ctx
    cert_pem, key_pem = self_signed()
    # ssl loads a chain from files only: a private directory, removed at once.
    with tempfile.TemporaryDirectory(prefix="batch-scheduler-tls-") as directory:
        cert_path = os.path.join(directory, "tls.crt")
        key_path = os.path.join(directory, "tls.key")
        with open(cert_path, "wb") as f:
            f.write(cert_pem)
        with open(os.open(key_path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
            f.write(key_pem)
        ctx.load_cert_chain(cert_path, key_path)
    return ctx
