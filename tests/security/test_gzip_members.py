"""Bodies of empty gzip members against the HTTP port of a real server, without credentials: refused after a few
members, in time linear in the body, instead of the runtime's quadratic decoder holding the event loop."""

from __future__ import annotations

import concurrent.futures
import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.support import MIB, TOKEN, Hostile, healthy, production_like
from tests.support import grpc_frame, http_send, stop_server_process

AUTH = {"Authorization": f"Bearer {TOKEN}"}
"""The gate checks credentials at the request head, before the body is read: the decoder is reached with a token."""

EVALUATE = "/verdict.v1.VerdictService/Evaluate"
MEMBERS = gzip.compress(b"") * ((4 * MIB - 64) // len(gzip.compress(b"")))
"""Just under the port's 4 MiB read limit: the runtime's decoder spent seconds per body on this."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Hostile]:
    hostile = production_like(tmp_path)
    yield hostile
    stop_server_process(hostile.server)


def test_a_connect_body_of_gzip_members_is_refused_naming_the_cap(server: Hostile) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip", **AUTH}
    status, _, body = http_send(server.http_port, "POST", EVALUATE, MEMBERS, headers)
    assert status == 400
    answer = json.loads(body)
    assert answer["code"] == "invalid_argument"
    assert "members" in answer["message"]


def test_a_grpc_web_message_of_gzip_members_is_refused(server: Hostile) -> None:
    headers = {"Content-Type": "application/grpc-web+proto", "grpc-encoding": "gzip", **AUTH}
    _, reply_headers, body = http_send(server.http_port, "POST", EVALUATE, grpc_frame(MEMBERS, flags=1), headers)
    trailer = body[body.rfind(b"\x80") + 5 :].decode(errors="replace")
    status = reply_headers.get("grpc-status") or trailer.partition("grpc-status:")[2].split()[0]
    assert status == "3"  # INVALID_ARGUMENT


def test_a_single_member_body_is_still_served(server: Hostile) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    status, _, body = http_send(server.http_port, "POST", EVALUATE, gzip.compress(b'{"output": "1"}'), headers)
    assert (status, json.loads(body)["code"]) == (401, "unauthenticated")  # refused at the head


def test_health_answers_while_four_bodies_are_in_flight(server: Hostile) -> None:
    """Four 4 MiB bodies together held the loop 28.7 s on the runtime's decoder (probes failed, kubelet restarted
    the pod); refused after MAX_GZIP_MEMBERS members, they leave health answering within a generous bound."""
    headers = {"Content-Type": "application/proto", "Content-Encoding": "gzip", **AUTH}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        sent = [pool.submit(http_send, server.http_port, "POST", EVALUATE, MEMBERS, headers) for _ in range(4)]
        assert healthy(server.server.grpc_port, timeout=5)
        assert {reply.result()[0] for reply in sent} == {400}
