"""Bearer tokens: the `authorization: Bearer <token>` header, and the directory of tokens it is checked against.

A caller presents a token as `authorization: Bearer <token>` metadata (or the HTTP header on /metrics). It proves the
principal `<principal>` when it equals the content of the file `<auth_tokens_dir>/<principal>`. The directory is a
mounted Kubernetes Secret, one key per principal; files are re-read when they change, and every presented token is
compared with every configured one in constant time (`hmac.compare_digest`), so neither the answer nor its timing
tells which principal came close. Tokens never reach logs or metrics; principals do.
"""

from __future__ import annotations

import hmac
import logging
import os
from pathlib import Path
from typing import Any

from verdict.security.policy import ANONYMOUS, PRINCIPAL

__all__ = ["MIN_TOKEN_BYTES", "TokenDirectory", "bearer_token"]

log = logging.getLogger("verdict.auth")

MIN_TOKEN_BYTES = 16
"""Shorter token files are ignored (with an error in the log): a short token can be guessed."""


def bearer_token(header: str | bytes | None) -> str | None:
    """The token of an `authorization: Bearer <token>` value; None when absent or of another scheme."""
    if header is None:
        return None
    if isinstance(header, bytes):
        header = header.decode("latin-1")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


class TokenDirectory:
    """`<dir>/<principal>` files holding tokens, re-read when the directory or any file in it changes.

    A Secret volume keeps its files behind `..data` symlinks and swaps that link on update, which changes the
    directory's mtime; an in-place edit changes the file's own stamp. Dot files (`..data`, `..2026_…`) are skipped.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._stamp: tuple[Any, ...] = ()
        self._tokens: tuple[tuple[str, bytes], ...] = ()
        self.current()

    def _stat(self) -> tuple[Any, ...]:
        directory = os.stat(self._path)
        stamps: list[Any] = [(directory.st_ino, directory.st_mtime_ns)]
        for principal, _ in self._tokens:
            try:
                st = os.stat(os.path.join(self._path, principal))
                stamps.append((st.st_ino, st.st_mtime_ns, st.st_size))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def current(self) -> tuple[tuple[str, bytes], ...]:
        try:
            stamp = self._stat()
            if stamp != self._stamp:
                self._tokens = self._read()
                self._stamp = self._stat()
        except OSError as exc:
            log.error("cannot read auth_tokens_dir %s; keeping the tokens loaded before: %s", self._path, exc.strerror)
        return self._tokens

    def _read(self) -> tuple[tuple[str, bytes], ...]:
        tokens: list[tuple[str, bytes]] = []
        for entry in sorted(os.listdir(self._path)):
            if entry.startswith("."):
                continue
            path = os.path.join(self._path, entry)
            if not os.path.isfile(path):
                continue
            if not PRINCIPAL.match(entry) or entry == ANONYMOUS:
                log.error("auth token file %r ignored: not a valid principal name", entry)
                continue
            token = Path(path).read_bytes().strip()
            if len(token) < MIN_TOKEN_BYTES:
                log.error("auth token of %s ignored: shorter than %d bytes", entry, MIN_TOKEN_BYTES)
                continue
            tokens.append((entry, token))
        log.info("auth tokens loaded for %d principals", len(tokens))
        return tuple(tokens)

    def principal(self, token: str) -> str | None:
        """The principal whose token this is. Every configured token is compared, whatever matched before."""
        presented = token.encode("utf-8", errors="replace")
        found = None
        for principal, expected in self.current():
            if hmac.compare_digest(presented, expected) and found is None:
                found = principal
        return found
