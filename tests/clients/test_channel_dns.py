"""The Python client's round-robin over a headless Service, through a real DNS lookup.

tests/clients/test_channel.py proves round_robin with an `ipv4:` list of addresses. A headless Service is a DNS
name with one A record per ready pod, reached with a `dns:` target, so here a small DNS server on 127.0.0.1 answers
a made-up Service name with two loopback addresses, each served by its own server on the same port (as pods share
their container port), and the client, given only the `dns:` target, must spread its calls over both. gRPC's DNS
resolver (c-ares) takes the DNS server as the target's authority: `dns://127.0.0.1:<port>/<name>:<port>`.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest

from tests.clients.fakes import Recorder
from verdict.v1 import verdict_pb2_grpc
from verdict_client import ClientConfig, VerdictClient

NAME = "verdict-headless.verdict.svc.cluster.test"
POD_ADDRESSES = ("127.0.0.1", "127.0.0.2")
A, CLASS_IN = 1, 1


class DnsServer:
    """Answers A queries for NAME with POD_ADDRESSES; every other query gets an empty NOERROR (or NXDOMAIN for other
    names). Records the (name, type) of every query."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port: int = self.socket.getsockname()[1]
        self.queries: list[tuple[str, int]] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                data, peer = self.socket.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            with contextlib.suppress(IndexError, struct.error):
                self.socket.sendto(self._answer(data), peer)

    def _answer(self, query: bytes) -> bytes:
        (ident,) = struct.unpack("!H", query[:2])
        labels, position = [], 12
        while query[position]:
            length = query[position]
            labels.append(query[position + 1 : position + 1 + length].decode())
            position += 1 + length
        qtype, _qclass = struct.unpack("!HH", query[position + 1 : position + 5])
        question = query[12 : position + 5]
        name = ".".join(labels).lower()
        self.queries.append((name, qtype))
        if name != NAME:
            return struct.pack("!HHHHHH", ident, 0x8183, 1, 0, 0, 0) + question  # NXDOMAIN
        records = b""
        if qtype == A:
            for address in POD_ADDRESSES:
                records += struct.pack("!HHHIH", 0xC00C, A, CLASS_IN, 5, 4) + socket.inet_aton(address)
        count = len(POD_ADDRESSES) if qtype == A else 0
        return struct.pack("!HHHHHH", ident, 0x8580, 1, count, 0, 0) + question + records

    def close(self) -> None:
        self.stopped.set()
        self.socket.close()
        self.thread.join(timeout=5)


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    server = DnsServer()
    yield server
    server.close()


@contextlib.contextmanager
def pods() -> Iterator[tuple[int, list[Recorder]]]:
    """One fake Verdict server per pod address, all on the same port."""
    recorders = [Recorder(name=address) for address in POD_ADDRESSES]
    servers = []
    port = 0
    try:
        for address, recorder in zip(POD_ADDRESSES, recorders, strict=True):
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
            verdict_pb2_grpc.add_VerdictServiceServicer_to_server(recorder, server)
            bound = server.add_insecure_port(f"{address}:{port}")
            assert bound, f"cannot bind {address}:{port}"
            port = bound
            server.start()
            servers.append(server)
        yield port, recorders
    finally:
        for server in servers:
            server.stop(grace=None)


def _answered(dns: DnsServer, config: ClientConfig, calls: int) -> list[str]:
    with pods() as (port, _recorders):
        target = f"dns://127.0.0.1:{dns.port}/{NAME}:{port}"
        with VerdictClient(target, config=config) as client:
            return [client.verify_response("x").detail for _ in range(calls)]


def test_a_dns_target_with_two_pods_gets_calls_on_both(dns: DnsServer) -> None:
    answered = _answered(dns, ClientConfig(), calls=10)
    assert (NAME, A) in dns.queries, "the client resolved the name through DNS"
    assert set(answered) == set(POD_ADDRESSES)


def test_pick_first_over_the_same_dns_name_pins_one_pod(dns: DnsServer) -> None:
    """The control: the spread above comes from the client's round_robin, not from the resolver or the servers."""
    answered = _answered(dns, ClientConfig(load_balancing="pick_first"), calls=10)
    assert (NAME, A) in dns.queries
    assert len(set(answered)) == 1
