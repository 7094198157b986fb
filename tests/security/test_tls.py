"""Certificates: loading, validation at startup, reload on change, and the identities read from a peer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.certs import CertificateAuthority, SecretVolume
from tests.support import make_config
from verdict.errors import ConfigError
from verdict.security.tls import Certificates, material_follower, peer_identities, ssl_peer_identities


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"tls_cert_file": "/x.crt"}, "tls_key_file"),
        ({"tls_key_file": "/x.key"}, "tls_cert_file"),
        ({"tls_client_auth": "require"}, "tls_client_ca_file"),
        ({"tls_client_ca_file": "/ca.crt"}, "tls_client_auth"),
        ({"tls_client_ca_file": "/ca.crt", "tls_client_auth": "require"}, "tls_cert_file"),
        ({"auth_tokens_dir": "/tokens"}, "auth_policy_file"),
        ({"tls_client_auth": "request"}, "tls_client_auth"),
    ],
)
def test_half_configured_security_stops_startup(overrides: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(**overrides)
    assert caught.value.key == key


def test_unreadable_or_mismatched_files_name_the_key(tmp_path: Path) -> None:
    ca = CertificateAuthority(tmp_path / "ca")
    one, two = ca.server("one"), ca.server("two")
    with pytest.raises(ConfigError) as missing:
        Certificates.from_config(make_config(tls_cert_file=str(one.cert_file), tls_key_file=str(tmp_path / "no.key")))
    assert missing.value.key == "tls_key_file"
    with pytest.raises(ConfigError, match="not a usable certificate"):
        Certificates.from_config(make_config(tls_cert_file=str(one.cert_file), tls_key_file=str(two.key_file)))


def test_refresh_loads_a_swapped_secret_once(tmp_path: Path) -> None:
    ca = CertificateAuthority(tmp_path / "ca")
    one, two = ca.server("one"), ca.server("two")
    volume = SecretVolume(tmp_path / "tls", {"tls.crt": one.cert, "tls.key": one.key})
    certificates = Certificates(volume.path("tls.crt"), volume.path("tls.key"), require_client_cert=False)
    assert certificates.refresh() is None
    volume.update({"tls.crt": two.cert, "tls.key": two.key})
    material = certificates.refresh()
    assert material is not None
    assert material.certificate_chain == two.cert
    assert certificates.refresh() is None
    assert certificates.reloads == 1


def test_every_set_of_credentials_sharing_the_files_follows_a_rotation(tmp_path: Path) -> None:
    """A process binds the gRPC port with several accept loops, each with its own credentials over one Certificates:
    the first handshake after a swap must not be the only one to see the new certificate."""
    ca = CertificateAuthority(tmp_path / "ca")
    one, two = ca.server("one"), ca.server("two")
    volume = SecretVolume(tmp_path / "tls", {"tls.crt": one.cert, "tls.key": one.key})
    certificates = Certificates(volume.path("tls.crt"), volume.path("tls.key"), require_client_cert=False)
    followers = [material_follower(certificates) for _ in range(4)]
    assert [follow() for follow in followers] == [None] * 4
    volume.update({"tls.crt": two.cert, "tls.key": two.key})
    switched = [follow() for follow in followers]
    assert [material is not None and material.certificate_chain == two.cert for material in switched] == [True] * 4
    assert [follow() for follow in followers] == [None] * 4
    assert certificates.reloads == 1


def test_identities_from_grpc_and_from_ssl() -> None:
    grpc_context = {
        "x509_common_name": [b"runner"],
        "x509_subject_alternative_name": [b"spiffe://verdict.test/runner", b"runner.loops.svc"],
        "transport_security_type": [b"ssl"],
    }
    assert peer_identities(grpc_context) == ("spiffe://verdict.test/runner", "runner.loops.svc", "runner")
    assert peer_identities({}) == ()
    ssl_certificate = {
        "subject": ((("commonName", "runner"),),),
        "subjectAltName": (("DNS", "runner.loops.svc"), ("URI", "spiffe://verdict.test/runner")),
    }
    assert ssl_peer_identities(ssl_certificate) == ("spiffe://verdict.test/runner", "runner.loops.svc", "runner")
    assert ssl_peer_identities(None) == ()
