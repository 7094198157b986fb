"""`python -m bench.echo_server [--bare] [flags of verdict serve]`: the null echoes the load bench divides by.

- `--bare`: a plain `grpc.aio.server()` with one generic handler that answers VerifyResponse with the request's
  bytes, never decoded: no interceptors, no logging, no metrics, default options. The floor of the stack: what
  grpc.aio itself costs per call on this machine, and the denominator of the issue's "÷ bare echo" targets.
- otherwise: `verdict.server.build_server` with VerdictService's handlers replaced by the same echo, so options,
  the per-call layers (metrics, access line, access control, admission), logging, health and the event loop are the
  server's own: "Verdict ÷ this echo" is the cost of Verdict's work per call (decode, verify, encode), and "this
  echo ÷ the bare one" the cost of the layers every call passes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from typing import Any

import grpc
import grpc.aio

from verdict.config.sources import load_config
from verdict.rpc import SERVICE_DESCRIPTOR, SERVICE_NAME
from verdict.server.assembly import build_server
from verdict.server.logs import configure_logging


async def _echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    return request


def _handlers() -> dict[str, grpc.RpcMethodHandler]:
    return {m.name: grpc.unary_unary_rpc_method_handler(_echo) for m in SERVICE_DESCRIPTOR.methods}


async def _serve_bare() -> int:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, _handlers()),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print(json.dumps({"event": "serving", "grpc_port": port}), file=sys.stderr, flush=True)
    await stop.wait()
    await server.stop(0)
    return 0


async def main(argv: list[str]) -> int:
    if argv[:1] == ["--bare"]:
        return await _serve_bare()
    flags = dict(zip((a.lstrip("-").replace("-", "_") for a in argv[::2]), argv[1::2], strict=True))
    config = load_config(env={}, flags={"grpc_address": "127.0.0.1:0", "metrics_address": "", **flags})
    configure_logging(config.log_format, config.log_level)  # as `verdict serve` does: the access line per call too
    app, port = await build_server(config, handlers=_handlers())
    await app.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    logging.getLogger("verdict.server").info("ready", extra={"fields": {"event": "serving", "grpc_port": port}})
    await stop.wait()
    await app.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
