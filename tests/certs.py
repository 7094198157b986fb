"""Certificates made at test time with the openssl CLI, and a Secret volume rotated the way kubelet does it.

`CertificateAuthority` signs server and client certificates with the names a test asks for (CN, SAN DNS, IP, URI).
`SecretVolume` lays files out as a mounted Kubernetes Secret (`name -> ..data/name`, `..data -> ..<timestamp>`)
and `update()` replaces them the way kubelet's atomic writer does: the new files go into a fresh hidden directory,
then a `..data_tmp` symlink to it is renamed over `..data` in one step.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CertificateAuthority", "Issued", "SecretVolume"]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@dataclass(frozen=True)
class Issued:
    """A certificate and its key, as PEM files and bytes."""

    cert_file: Path
    key_file: Path

    @property
    def cert(self) -> bytes:
        return self.cert_file.read_bytes()

    @property
    def key(self) -> bytes:
        return self.key_file.read_bytes()


class CertificateAuthority:
    """A throwaway CA (P-256, valid one day) in `directory`."""

    _serials = itertools.count(1)

    def __init__(self, directory: Path, name: str = "verdict-test-ca") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.name = name
        self.cert_file = directory / f"{name}.crt"
        self.key_file = directory / f"{name}.key"
        _openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", str(self.key_file), "-out", str(self.cert_file), "-subj", f"/CN={name}", "-days", "1",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=directory,
        )  # fmt: skip

    @property
    def cert(self) -> bytes:
        return self.cert_file.read_bytes()

    def issue(self, name: str, *, common_name: str | None = None, sans: tuple[str, ...] = ()) -> Issued:
        """A leaf for server and client use. `sans` are openssl spellings: "DNS:localhost", "URI:spiffe://x/y"."""
        stem = self.directory / f"{name}-{next(self._serials)}"
        key, csr, cert, ext = (stem.with_suffix(suffix) for suffix in (".key", ".csr", ".crt", ".ext"))
        _openssl(
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={common_name or name}",
            cwd=self.directory,
        )  # fmt: skip
        lines = ["basicConstraints=CA:FALSE", "extendedKeyUsage=serverAuth,clientAuth"]
        if sans:
            lines.append("subjectAltName=" + ",".join(sans))
        ext.write_text("\n".join(lines) + "\n")
        _openssl(
            "x509", "-req", "-in", str(csr), "-CA", str(self.cert_file), "-CAkey", str(self.key_file),
            "-set_serial", str(next(self._serials)), "-out", str(cert), "-days", "1", "-extfile", str(ext),
            cwd=self.directory,
        )  # fmt: skip
        return Issued(cert, key)

    def server(self, name: str = "server") -> Issued:
        """A server certificate for localhost and 127.0.0.1."""
        return self.issue(name, common_name="localhost", sans=("DNS:localhost", "IP:127.0.0.1"))


class SecretVolume:
    """A directory shaped like a mounted Secret; `update()` swaps every file at once through `..data`."""

    _versions = itertools.count(1)

    def __init__(self, directory: Path, files: dict[str, bytes]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.update(files)

    def path(self, name: str) -> str:
        return str(self.directory / name)

    def update(self, files: dict[str, bytes]) -> None:
        version = self.directory / f"..2026_12_01_00_00_00.{next(self._versions)}"
        version.mkdir()
        for name, content in files.items():
            (version / name).write_bytes(content)
        data = self.directory / "..data"
        previous = os.readlink(data) if data.is_symlink() else None
        temporary = self.directory / "..data_tmp"
        os.symlink(version.name, temporary)
        os.replace(temporary, data)
        if previous is not None:
            shutil.rmtree(self.directory / previous)
        for name in files:
            link = self.directory / name
            if not link.is_symlink():
                os.symlink(f"..data/{name}", link)
        for name in os.listdir(self.directory):
            if name not in files and not name.startswith(".."):
                (self.directory / name).unlink()


def certificate_shown(port: int, context: ssl.SSLContext) -> bytes:
    """The DER certificate a brand-new TLS connection to 127.0.0.1:`port` (as `localhost`) is shown."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        certificate = tls.getpeercert(binary_form=True)
    assert certificate is not None
    return certificate
