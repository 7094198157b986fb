"""`python -m bench.echo_server [flags of verdict serve]`: the null echo the load bench divides by.

It is `verdict.server.build_server` with one change: VerdictService's handlers answer with the request's bytes, never
decoded. Options, interceptors (metrics, access, admission), logging (the access line per call), health and the event
loop are the server's own, so the ratio "Verdict ÷ echo" is the cost of Verdict's work per call (decode, verify,
encode), not of gRPC or of what every call logs and counts.
"""

from __future__ import annotations

import asyncio
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


async def main(argv: list[str]) -> int:
    flags = dict(zip((a.lstrip("-").replace("-", "_") for a in argv[::2]), argv[1::2], strict=True))
    config = load_config(env={}, flags={"grpc_address": "127.0.0.1:0", "metrics_address": "", **flags})
    configure_logging(config.log_format, config.log_level)  # as `verdict serve` does: the access line per call too
    handlers = grpc.method_handlers_generic_handler(
        SERVICE_NAME, {m.name: grpc.unary_unary_rpc_method_handler(_echo) for m in SERVICE_DESCRIPTOR.methods}
    )
    app, port = await build_server(config, handlers=handlers)
    await app.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    logging.getLogger("verdict.server").info("ready", extra={"fields": {"event": "serving", "grpc_port": port}})
    await stop.wait()
    await app.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
