"""Calls waiting for their request message: a bounded number, for a bounded time, before authentication.

grpc.aio reads a unary call's whole request message before any interceptor's behaviour runs, and waits for it
forever: HEADERS without a token, a message header announcing 4 MiB, 200 bytes, then nothing cost about 16 KB each
and were never timed out (20,000 held 318 MiB; max_connections x max_concurrent_streams allowed far more).
`PendingMessages` serves every unary-unary method as a client-streaming one, which the wire cannot tell apart (one
message each way either way), so its behaviour runs as soon as the call's headers arrive and the wait for the message
is ours to bound:

- at most `limit` calls wait for their message at once (health has its own budget of the same size, so a flood of
  unfinished VerdictService calls never starves a probe); past it a call is RESOURCE_EXHAUSTED with a retry hint
  at once, its message never read;
- a message not complete within `timeout` seconds of the headers ends the call with DEADLINE_EXCEEDED;
- then the method's own (already intercepted) behaviour runs on the message, exactly as before.

It is the outermost interceptor, so a refused call costs only its headers. A call that admission control is about to
refuse (the server is full: `gate`) is not read at all: the layers below run on an `Unread` in place of the message
and refuse it. Reading a message is a round trip to grpc-core and a loop turn; under twice the capacity, when half the
calls are refused, skipping it took a refusal's server CPU from about 1.4 times the bare echo's per call to about
1.05-1.1 times (bench/NOTES.md). Should the call be admitted after all (a slot freed meanwhile), admission reads it
(`Unread.read`, with the same bound and timeout).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
from prometheus_client import Counter

from verdict.errors import DeadlineTooShort, InvalidArgument, ResourceExhausted
from verdict.rpc.status import to_status
from verdict.rpc.stepwise import STEPWISE_BYTES, decode_in_steps, message_class_of, remember_wire
from verdict.server.interceptors.base import HandlerInterceptor

__all__ = ["PendingMessages", "Unread"]

_HEALTH = "/grpc.health.v1.Health/"


class PendingMessages(HandlerInterceptor):
    """Bounds the calls waiting for their request message, in number and in time (see the module docstring)."""

    def __init__(
        self,
        limit: int,
        timeout: float,
        rejected: Counter,
        gate: Callable[[str], Callable[[], bool] | None] | None = None,
    ) -> None:
        """`gate(full_method)`: for a method admission control governs, a predicate true while it would refuse a new
        call at once (`AdmissionInterceptor.gate`); such a call is passed on unread."""
        self.limit = limit
        self.timeout = timeout
        self._rejected = rejected
        self._gate = gate
        self.waiting = {"health": 0, "calls": 0}
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def intercept_handler(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """The same rewrite as a chain layer (chain.py): built once per method, then looked up."""
        if handler.unary_unary is None:
            return handler
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        budget = "health" if method.startswith(_HEALTH) else "calls"
        refusing = self._gate(method) if self._gate is not None else None
        wrapped = grpc.stream_unary_rpc_method_handler(
            self._waiting(handler.unary_unary, budget, handler.request_deserializer, refusing),
            request_deserializer=None,  # the message's bytes: `_decode` decides how to decode them
            response_serializer=handler.response_serializer,
        )
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _waiting(
        self,
        behavior: Any,
        budget: str,
        deserializer: Callable[[bytes], Any] | None,
        refusing: Callable[[], bool] | None,
    ) -> Any:
        decode = _decoder(deserializer)

        async def first_message(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if refusing is not None and refusing():
                return await behavior(Unread(self, requests, decode, budget), context)
            return await behavior(await self.read(requests, decode, budget, context), context)

        return first_message

    async def read(
        self,
        requests: AsyncIterator[Any],
        decode: Callable[[bytes], Awaitable[Any]],
        budget: str,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> Any:
        """The call's request message, decoded: within the bound on calls waiting and the timeout, or the call is
        ended (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, INVALID_ARGUMENT for a call that ended without one)."""
        if self.waiting[budget] >= self.limit:
            self._rejected.labels(limit="pending_messages").inc()
            refused = ResourceExhausted(
                f"{self.limit} calls are already waiting for their request message",
                reason="TOO_MANY_PENDING_MESSAGES",
                retry_after=1.0,
            )
            await context.abort_with_status(to_status(refused))
        self.waiting[budget] += 1
        try:
            async with asyncio.timeout(self.timeout):
                request = await anext(aiter(requests))
        except TimeoutError:
            self._rejected.labels(limit="message_timeout").inc()
            late = DeadlineTooShort(
                f"the request message did not arrive within {self.timeout:g} s", reason="REQUEST_MESSAGE_TIMEOUT"
            )
            await context.abort_with_status(to_status(late))
        except StopAsyncIteration:
            missing = InvalidArgument("the call ended without a request message", field="request")
            await context.abort_with_status(to_status(missing))
        finally:
            self.waiting[budget] -= 1
        return await decode(request)


class Unread:
    """A call's request message, not read yet: what the layers below `PendingMessages` get in its place when the
    call is about to be refused. Every layer passes it on untouched; the one that admits the call after all reads it."""

    __slots__ = ("_budget", "_decode", "_pending", "_requests", "read_done")

    def __init__(
        self,
        pending: PendingMessages,
        requests: AsyncIterator[Any],
        decode: Callable[[bytes], Awaitable[Any]],
        budget: str,
    ) -> None:
        self._pending = pending
        self._requests = requests
        self._decode = decode
        self._budget = budget
        self.read_done = False
        """Whether the message was read after all (the metrics count a received message only then)."""

    async def read(self, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """The message, read and decoded as `PendingMessages` would have."""
        message = await self._pending.read(self._requests, self._decode, self._budget, context)
        self.read_done = True
        return message


def _decoder(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Awaitable[Any]]:
    """How a method's request bytes become its message: in one call, as grpc.aio would have decoded them, unless they
    are bigger than `STEPWISE_BYTES`; then in steps that each hold the event loop briefly (verdict.rpc.stepwise),
    and in one call again only if the steps find the bytes malformed, for the deserializer's own diagnosis."""
    message_class = message_class_of(deserializer)

    async def decode(data: bytes) -> Any:
        if deserializer is None:
            return data
        if message_class is not None and len(data) > STEPWISE_BYTES:
            decoded = await decode_in_steps(message_class, data)
            if decoded is not None:
                remember_wire(decoded, data)
                return decoded
        return deserializer(data)

    return decode
