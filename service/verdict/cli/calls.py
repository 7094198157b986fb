"""How the CLI reaches the checks: the server's domain side in this process, or a server at `--target`.

- in process: `local_components`, the server's `Components` configured from VERDICT_* variables like the server;
- remote: `open_channel` (TLS and mutual TLS from `--ca-file`, `--cert-file`, `--key-file`), `call_metadata` (the
  bearer token of `--token-file`), `call` for one RPC, and `remote_batches` for a batch job, one batch RPC per batch,
  riding out a server that sheds load;
- `state_token`: the base64 state token `verdict evaluate --state` takes (the proto3 JSON form of bytes).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verdict.config.sources import load_config

if TYPE_CHECKING:
    from verdict.server.assembly import Components

__all__ = ["call", "call_metadata", "local_components", "open_channel", "remote_batches", "state_token"]


def local_components(flags: Mapping[str, Any] | None = None) -> Components:
    """The server's domain side, in this process, configured from VERDICT_* variables like the server (and `flags`,
    the command's own configuration flags such as `--workspace-root`, over them)."""
    from prometheus_client import CollectorRegistry

    from verdict.metrics import Metrics
    from verdict.server.assembly import build_components

    config = load_config(env=os.environ, flags=dict(flags or {}))
    return build_components(config, Metrics(CollectorRegistry()), os.environ)


def remote_batches(args: argparse.Namespace, channel: Any) -> Any:
    """One batch RPC per batch. A batch the server sheds (RESOURCE_EXHAUSTED) is retried after the server's
    RetryInfo hint, a few times: a long job should ride out a busy moment, not fail a whole batch."""
    import grpc
    from google.rpc import code_pb2, status_pb2
    from grpc_status import rpc_status

    from verdict.v1 import verdict_pb2, verdict_pb2_grpc

    stub = verdict_pb2_grpc.VerdictServiceStub(channel)
    verify = args.command == "verify"

    async def run(requests: list[Any]) -> list[Any]:
        message: Any
        if verify:
            method, message = stub.BatchVerifyResponses, verdict_pb2.BatchVerifyResponsesRequest(items=requests)
        else:
            method, message = stub.BatchEvaluate, verdict_pb2.BatchEvaluateRequest(items=requests)
        for attempt in range(6):
            try:
                response = await method(message, timeout=args.timeout, metadata=call_metadata(args))
                return [
                    result.response if result.WhichOneof("outcome") == "response" else result.error
                    for result in response.results
                ]
            except grpc.aio.AioRpcError as error:
                status = rpc_status.from_call(error) or status_pb2.Status(
                    code=error.code().value[0], message=error.details() or ""
                )
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or attempt == 5:
                    return [status] * len(requests)
                await asyncio.sleep(_retry_after(status) * (attempt + 1))
        return [status_pb2.Status(code=code_pb2.UNKNOWN)] * len(requests)  # pragma: no cover - the loop returns

    return run


def _retry_after(status: Any) -> float:
    from google.rpc import error_details_pb2

    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return max(0.05, float(info.retry_delay.ToNanoseconds()) / 1e9)
    return 1.0


async def call(args: argparse.Namespace, method: str, request: Any) -> Any:
    from verdict.v1 import verdict_pb2_grpc

    async with open_channel(args) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        return await getattr(stub, method)(request, timeout=args.timeout, metadata=call_metadata(args))


def call_metadata(args: argparse.Namespace) -> tuple[tuple[str, str], ...] | None:
    if args.token_file:
        return (("authorization", f"Bearer {Path(args.token_file).read_text().strip()}"),)
    return None


def open_channel(args: argparse.Namespace) -> Any:
    import grpc
    import grpc.aio

    options: list[tuple[str, Any]] = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    if args.ca_file:
        client_key = Path(args.key_file).read_bytes() if args.key_file else None
        client_cert = Path(args.cert_file).read_bytes() if args.cert_file else None
        credentials = grpc.ssl_channel_credentials(Path(args.ca_file).read_bytes(), client_key, client_cert)
        if args.server_name:
            options.append(("grpc.ssl_target_name_override", args.server_name))
        return grpc.aio.secure_channel(args.target, credentials, options=options)
    return grpc.aio.insecure_channel(args.target, options=options)


def state_token(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        raise ValueError("--state must be the base64 token printed by the previous call") from None
