"""The OpenAI-compatible chat-completions backend: a judge that is an HTTP endpoint, not a CLI.

llama.cpp's server, vLLM and Ollama all serve `POST /v1/chat/completions`, so one small client reaches any local
model (the verify module's "local LLM" was one). It uses the standard library's `http.client` in a worker thread
rather than an HTTP dependency: one POST per judge call needs no connection pool, and the thread is bounded twice, by
the socket timeout and by shutting the socket down when the call times out or the caller cancels, so an abandoned
request cannot keep a thread blocked on a silent server.

`response_format: {"type": "json_object"}` is asked for; a server that rejects the field (HTTP 400 naming it) is
asked again once without it, and the prompt itself always spells out the JSON wanted.

A host with credentials is sent `Authorization: Bearer <key>`; the body and every error message that comes back
have the key redacted before anything else reads them (judges.credentials).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from verdict.judges.credentials import ApiKey, CredentialError
from verdict.judges.hosts import HttpHost

__all__ = ["MAX_RESPONSE_BYTES", "ChatUnreachable", "CredentialError", "HttpResponse", "complete"]

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""A chat completion bigger than this is cut (and will not parse): bounds the memory one judge answer can cost."""


class ChatUnreachable(Exception):
    """Raised when the endpoint cannot be reached or drops the connection (refused, reset, bad TLS)."""


@dataclass(frozen=True)
class HttpResponse:
    status: int
    body: str


class _Exchange:
    """One POST in a worker thread, with a handle the event loop can use to abort it."""

    def __init__(self) -> None:
        self.connection: http.client.HTTPConnection | None = None

    def post(
        self,
        url: str,
        body: bytes,
        timeout: float,
        key: ApiKey | None = None,
        provider_headers: Mapping[str, str] | None = None,
    ) -> HttpResponse:
        try:
            parts = urlsplit(url)
            connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
            self.connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
        except ValueError as exc:  # a port out of range; host_named refuses such URLs at startup
            raise ChatUnreachable(f"cannot reach {url}: {exc}") from None
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if provider_headers is not None:  # a provider API's own headers, its key among them (judges/apis.py)
            headers.update(provider_headers)
        elif key is not None:
            headers["Authorization"] = key.authorization()
        try:
            self.connection.request("POST", path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read(MAX_RESPONSE_BYTES)
            text = data.decode("utf-8", "replace")
            return HttpResponse(response.status, key.redact(text) if key is not None else text)
        except TimeoutError:
            raise
        except (OSError, ValueError, http.client.HTTPException) as exc:
            # ValueError: a host name IDNA cannot encode (UnicodeError), a malformed header in the reply
            message = f"cannot reach {url}: {exc}"
            raise ChatUnreachable(key.redact(message) if key is not None else message) from None
        finally:
            self.connection.close()

    def abort(self) -> None:
        connection = self.connection
        if connection is not None and connection.sock is not None:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)


async def _post(
    url: str,
    payload: Mapping[str, Any],
    seconds: float,
    key: ApiKey | None,
    provider_headers: Mapping[str, str] | None = None,
) -> HttpResponse:
    exchange = _Exchange()
    body = json.dumps(payload).encode()
    try:
        return await asyncio.wait_for(
            asyncio.to_thread(exchange.post, url, body, seconds, key, provider_headers), seconds
        )
    except (TimeoutError, asyncio.CancelledError):
        exchange.abort()
        raise


async def complete(
    host: HttpHost, *, system: str, prompt: str, model: str, seconds: float, temperature: float = 0
) -> HttpResponse:
    """POST one chat completion and return the raw response (the key redacted from it). Raises TimeoutError after
    `seconds` (both attempts together), ChatUnreachable when there is no HTTP answer at all, and CredentialError when
    the host's key cannot be read now."""
    key = host.credentials.current() if host.credentials is not None else None
    give_up = time.monotonic() + seconds
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    payload: dict[str, Any] = {"messages": messages, "temperature": temperature, "stream": False}
    if model:
        payload["model"] = model
    response = await _post(host.completions_url, {**payload, "response_format": {"type": "json_object"}}, seconds, key)
    if response.status == 400 and "response_format" in response.body:
        left = give_up - time.monotonic()
        if left <= 0:
            raise TimeoutError
        response = await _post(host.completions_url, payload, left, key)
    return response
