"""Server TLS: certificate files that are re-read when they change, for the gRPC port and the /metrics port alike.

cert-manager and kubelet rotate a mounted Secret by writing the new files into a fresh hidden directory and swapping
the `..data` symlink to it in one rename, so every file of the Secret changes at once. `Certificates` notices the swap
by comparing each file's (device, inode, mtime, size) as `stat` sees it through the symlinks, re-reads all of them,
and builds the new material only if the certificate and key still belong together. A rotation half-seen (the
certificate read before the swap, the key after) is retried; a broken new set (a key that does not match, a file
missing) is logged and the last good set stays in use, so a bad rotation never takes the server down.

New connections get the new certificate; connections already open keep theirs until they close (calls in flight are
never dropped), and `max_connection_age_seconds` bounds how long that is.

gRPC: `grpc.dynamic_ssl_server_credentials` asks a fetcher for fresh material at each handshake; ours answers "no
change" after a few `stat` calls. /metrics: `ssl_context()` hands out the current `ssl.SSLContext`.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from verdict.config.keys import Config
from verdict.errors import ConfigError

__all__ = ["Certificates", "material_follower", "peer_identities", "server_credentials", "ssl_peer_identities"]

log = logging.getLogger("verdict.tls")

_Stamp = tuple[tuple[int, int, int, int], ...]

_READ_ATTEMPTS = 5
"""Re-reads when the files change while they are being read (a rotation landing mid-read)."""


@dataclass(frozen=True)
class Material:
    """One consistent set of TLS files, read together, and the `ssl.SSLContext` built from them."""

    certificate_chain: bytes
    private_key: bytes
    client_ca: bytes | None
    ssl_context: ssl.SSLContext
    http_ssl_context: ssl.SSLContext
    """The same, offering HTTP/2 and HTTP/1.1 by ALPN (the HTTP port); /metrics keeps one without, as it speaks
    HTTP/1.1 only and a client offering h2 would otherwise be told it got it."""


class Certificates:
    """The server's certificate, key and (for mutual TLS) client CA files, re-read when any of them changes.

    Thread-safe: gRPC calls `refresh()` from its own threads, the /metrics server from the event loop.
    """

    def __init__(self, cert_file: str, key_file: str, client_ca_file: str = "", *, require_client_cert: bool) -> None:
        self._cert_file = cert_file
        self._key_file = key_file
        self._client_ca_file = client_ca_file
        self.require_client_cert = require_client_cert
        self._lock = threading.Lock()
        self.reloads = 0
        """How many times a changed set of files was loaded after the first (for logs and tests)."""
        self._stamp, self._material = self._load()

    @classmethod
    def from_config(cls, config: Config) -> Certificates | None:
        """The certificates the configuration names, or None when the server speaks plaintext. Raises ConfigError
        naming the key when a file cannot be read or the certificate and key do not match."""
        if not config.tls:
            return None
        try:
            return cls(
                config.tls_cert_file,
                config.tls_key_file,
                config.tls_client_ca_file,
                require_client_cert=config.tls_client_auth == "require",
            )
        except (ssl.SSLError, ValueError) as exc:  # SSLError first: it is an OSError too
            raise ConfigError("tls_cert_file", f"not a usable certificate and key: {exc}") from None
        except OSError as exc:
            names = {"tls_key_file": config.tls_key_file, "tls_client_ca_file": config.tls_client_ca_file}
            key = next((key for key, path in names.items() if path and path == exc.filename), "tls_cert_file")
            raise ConfigError(key, f"cannot read {exc.filename}: {exc.strerror}") from None

    @property
    def material(self) -> Material:
        """The material in use now (without looking at the files)."""
        return self._material

    def refresh(self) -> Material | None:
        """Re-read the files if they changed since the last load; the new material, or None when nothing changed or
        the new files are unusable (then the old material stays and the problem is logged)."""
        with self._lock:
            try:
                if self._files_stamp() == self._stamp:
                    return None
                self._stamp, self._material = self._load()
            except (OSError, ssl.SSLError, ValueError) as exc:
                log.error("TLS files changed but cannot be loaded; still serving the previous certificate: %s", exc)
                return None
            self.reloads += 1
            log.info("TLS certificate reloaded from %s", self._cert_file)
            return self._material

    def ssl_context(self) -> ssl.SSLContext:
        """The current context for a new /metrics connection (re-reading the files first if they changed)."""
        self.refresh()
        return self._material.ssl_context

    def http_ssl_context(self) -> ssl.SSLContext:
        """The current context for a new HTTP-port connection: the same files, ALPN h2 and http/1.1."""
        self.refresh()
        return self._material.http_ssl_context

    def _paths(self) -> tuple[str, ...]:
        return tuple(path for path in (self._cert_file, self._key_file, self._client_ca_file) if path)

    def _files_stamp(self) -> _Stamp:
        stamps = []
        for path in self._paths():
            st = os.stat(path)
            stamps.append((st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size))
        return tuple(stamps)

    def _load(self) -> tuple[_Stamp, Material]:
        for _ in range(_READ_ATTEMPTS):
            before = self._files_stamp()
            material = self._read()
            if self._files_stamp() == before:
                return before, material
        raise ValueError(f"the TLS files kept changing while being read ({_READ_ATTEMPTS} attempts)")

    def _read(self) -> Material:
        with open(self._cert_file, "rb") as f:
            chain = f.read()
        with open(self._key_file, "rb") as f:
            key = f.read()
        client_ca = None
        if self._client_ca_file:
            with open(self._client_ca_file, "rb") as f:
                client_ca = f.read()
        if b"-----BEGIN" not in chain or b"-----BEGIN" not in key:
            raise ValueError("the certificate and key files must be PEM")
        http_context = self._context(client_ca)
        http_context.set_alpn_protocols(["h2", "http/1.1"])
        return Material(chain, key, client_ca, self._context(client_ca), http_context)

    def _context(self, client_ca: bytes | None) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        # load_cert_chain checks that the key belongs to the certificate: a mismatched pair fails here, not in
        # every handshake after it was installed.
        context.load_cert_chain(self._cert_file, self._key_file)
        if client_ca is not None:
            context.load_verify_locations(cadata=client_ca.decode("ascii", errors="replace"))
            context.verify_mode = ssl.CERT_REQUIRED if self.require_client_cert else ssl.CERT_OPTIONAL
        return context


def server_credentials(certificates: Certificates) -> grpc.ServerCredentials:
    """gRPC credentials whose certificate follows the files: each handshake first asks `certificates.refresh()`."""

    def configuration(material: Material) -> Any:
        return grpc.ssl_server_certificate_configuration(
            [(material.private_key, material.certificate_chain)], root_certificates=material.client_ca
        )

    changed = material_follower(certificates)

    def fetch() -> Any:
        material = changed()
        return None if material is None else configuration(material)

    return grpc.dynamic_ssl_server_credentials(
        configuration(certificates.material),
        fetch,
        require_client_authentication=certificates.require_client_cert,
    )


def material_follower(certificates: Certificates) -> Callable[[], Material | None]:
    """For one set of credentials: the material to switch to at this handshake, or None to keep the current one.

    Several servers share one `Certificates` (a process binds the gRPC port with several accept loops, each with its
    own credentials), and `refresh()` reports a change only to the first caller after it; so each follower compares
    the material in use now with the one it last handed out, and every server's credentials follow the rotation."""
    served = [certificates.material]

    def changed() -> Material | None:
        try:
            certificates.refresh()
        except Exception:  # an exception here would fail the handshake; the old certificate is still good
            log.exception("TLS certificate refresh failed")
            return None
        material = certificates.material
        if material is served[0]:
            return None
        served[0] = material
        return material

    return changed


def peer_identities(auth_context: Mapping[str, Iterable[bytes]]) -> tuple[str, ...]:
    """The verified client certificate's names, from a gRPC auth context: SAN URIs (SPIFFE IDs), SAN DNS names, the
    subject CN. Empty when the peer presented no certificate (gRPC fills these only after verifying the chain)."""
    names: list[str] = []
    for key in ("peer_spiffe_id", "x509_subject_alternative_name", "x509_common_name"):
        for value in auth_context.get(key, ()):
            name = value.decode("utf-8", errors="replace")
            if name and name not in names:
                names.append(name)
    return tuple(names)


def ssl_peer_identities(peer_certificate: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The same names from `SSLObject.getpeercert()` (the /metrics port), in the same order of preference."""
    if not peer_certificate:
        return ()
    names: list[str] = []
    alternative: Sequence[tuple[str, str]] = peer_certificate.get("subjectAltName", ())
    for kind in ("URI", "DNS"):
        names.extend(value for key, value in alternative if key == kind and value not in names)
    for rdn in peer_certificate.get("subject", ()):
        for key, value in rdn:
            if key == "commonName" and value not in names:
                names.append(value)
    return tuple(names)
