"""The gRPC door every call passes: who is calling (auth.Gate), may it call this, and is there room for it.

One interceptor, inside the metrics interceptor (so refused calls are counted with their codes) and outside every
servicer. Health (grpc.health.v1) is open: kubelet and load balancers probe it without credentials, and a Check must
never be refused for being one call too many. Its Watch streams, though, stay open as long as the client likes, so
one unauthenticated connection could hold `max_concurrent_streams` of them; a connection may hold at most
`HEALTH_WATCHES_PER_CONNECTION` (RESOURCE_EXHAUSTED, reason TOO_MANY_HEALTH_WATCHES, past it). For every other call:

1. authentication from the `authorization: Bearer` metadata and the verified client certificate
   (UNAUTHENTICATED on failure);
2. authorization of the RPC, or of reflection (PERMISSION_DENIED);
3. calls in flight per connection and per principal (RESOURCE_EXHAUSTED, reasons TOO_MANY_CALLS_PER_CONNECTION and
   TOO_MANY_CALLS_PER_PRINCIPAL), so one caller, or one connection multiplexing hundreds of streams, cannot take
   every slot of a shared server;
4. the caller is published for the call (`auth.current_caller`: the judges check it) and its principal is added to
   the per-call log context.

Every refusal is a rich status from the one error mapping (`rpc.to_status`): one ErrorInfo with a stable reason.
The principal label of `verdict_auth_decisions_total` is folded to the policy's principals, `anonymous` and `other`.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio

from verdict.errors import ResourceExhausted, Unauthenticated, VerdictError
from verdict.metrics import OTHER, LabelFolder, Metrics
from verdict.rpc import SERVICE_NAME, to_status
from verdict.rpc.context import current_call
from verdict.rpc.decisions import DecisionLog, record_refusal
from verdict.security.gate import ANONYMOUS, Caller, Gate, bearer_token, current_caller
from verdict.security.tls import peer_identities
from verdict.server.interceptors.base import HandlerInterceptor, rewrap

__all__ = ["HEALTH_WATCHES_PER_CONNECTION", "AccessInterceptor", "InFlight", "publish", "unpublish"]

log = logging.getLogger("verdict.access_control")

HEALTH_SERVICE = "grpc.health.v1.Health"
HEALTH_WATCHES_PER_CONNECTION = 16
"""Open health Watch streams one connection may hold. A client's health checking opens one per service name it
watches (gRPC shares it between the channels on one connection), so this is far above any honest client's need, and
keeps `max_connections` unauthenticated connections to a few thousand open streams instead of a hundred thousand."""
REFLECTION_PREFIX = "grpc.reflection."


class InFlight:
    """Counts of calls in flight per key, under a limit (0: unlimited). The event loop is the only writer."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._counts: dict[str, int] = {}

    def acquire(self, key: str) -> bool:
        count = self._counts.get(key, 0)
        if self.limit and count >= self.limit:
            return False
        self._counts[key] = count + 1
        return True

    def release(self, key: str) -> None:
        count = self._counts.get(key, 0) - 1
        if count > 0:
            self._counts[key] = count
        else:
            self._counts.pop(key, None)

    def __len__(self) -> int:
        """Keys with calls in flight now (a key leaves when its last call ends, so the map stays bounded)."""
        return len(self._counts)


class AccessInterceptor(HandlerInterceptor):
    """Authentication, authorization and in-flight limits for every call but health."""

    def __init__(self, gate: Gate, metrics: Metrics, *, per_connection: int, per_principal: int) -> None:
        self._gate = gate
        self._metrics = metrics
        self.per_connection = InFlight(per_connection)
        self.per_principal = InFlight(per_principal)
        self.health_watches = InFlight(HEALTH_WATCHES_PER_CONNECTION)
        self._labels = LabelFolder(allowed=(*gate.principals(), ANONYMOUS))
        self.active = gate.enabled or bool(per_connection) or bool(per_principal)
        """False with auth off and no in-flight limits: nothing to check, so calls skip this layer entirely (every
        caller is the unchecked anonymous one, `current_caller`'s default) and pay nothing for it."""
        self.decisions: DecisionLog | None = None
        """Where refusals are recorded (set by the assembly once the decision log exists)."""

    def record_refusal(self, method: str, error: VerdictError) -> None:
        """A VerdictService call the gate refused leaves a decision record (its code and reason), as an answered call
        does: an audit of the log sees who was turned away, on both ports."""
        record_refusal(self.decisions, method, error)

    def intercept_handler(self, handler: grpc.RpcMethodHandler, full_method: str) -> grpc.RpcMethodHandler:
        service, _, method = full_method.lstrip("/").rpartition("/")
        if service == HEALTH_SERVICE and method == "Watch" and handler.unary_stream:
            return rewrap(handler, lambda behavior, _shape: self._watch_guard(behavior), "unary_stream")
        if service == HEALTH_SERVICE or not self.active:
            return handler
        # no client-streaming RPC is served, so a stream-unary handler is left as it is
        return rewrap(
            handler,
            lambda behavior, _shape: self._guard(service, method, behavior),
            "unary_unary",
            "unary_stream",
            "stream_stream",
        )

    def admit(self, service: str, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> tuple[Caller, str]:
        """Authenticate, authorize and take the in-flight slots; (caller, connection key). Raises VerdictError.

        The HTTP port (connect.py) admits its calls here too, through a context adapter, so one gate, one set of
        limits and one set of `verdict_auth_decisions_total` counts cover both ports."""
        try:
            caller = self._gate.authenticate(*self._credentials(context))
        except Unauthenticated:
            self._metrics.auth_decisions.labels(principal=OTHER, decision="unauthenticated").inc()
            raise
        call = current_call.get()
        if call is not None:  # the access line names who was refused, too
            call.learned["principal"] = caller.principal
        label = self._labels.fold(caller.principal)
        try:
            if service == SERVICE_NAME:
                self._gate.authorize_rpc(caller, method)
            elif service.startswith(REFLECTION_PREFIX):
                self._gate.authorize_reflection(caller)
            else:
                self._gate.authorize_rpc(caller, f"{service}/{method}")
        except VerdictError:
            self._metrics.auth_decisions.labels(principal=label, decision="permission_denied").inc()
            raise
        connection = context.peer() or "unknown"
        if not self.per_connection.acquire(connection):
            self._limited(label, "per_connection")
            raise ResourceExhausted(
                f"this connection already has {self.per_connection.limit} calls in flight (max_calls_per_connection)",
                reason="TOO_MANY_CALLS_PER_CONNECTION",
                metadata={"limit": str(self.per_connection.limit)},
            )
        if not self.per_principal.acquire(caller.principal):
            self.per_connection.release(connection)
            self._limited(label, "per_principal")
            raise ResourceExhausted(
                f"principal {caller.principal} already has {self.per_principal.limit} calls in flight "
                "(max_calls_per_principal)",
                reason="TOO_MANY_CALLS_PER_PRINCIPAL",
                metadata={"limit": str(self.per_principal.limit), "principal": caller.principal},
            )
        self._metrics.auth_decisions.labels(principal=label, decision="allowed").inc()
        return caller, connection

    def _credentials(self, context: grpc.aio.ServicerContext[Any, Any]) -> tuple[str | None, tuple[str, ...]]:
        """The bearer token (None when absent) and the verified certificate names of a call. With auth off nothing
        is read: a stray `authorization` header must not fail a call on a server that checks none."""
        if not self._gate.enabled:
            return None, ()
        token = None
        for key, value in context.invocation_metadata() or ():
            if key == "authorization":
                token = bearer_token(value)
                if token is None:
                    raise Unauthenticated("the authorization metadata must be `Bearer <token>`", reason="INVALID_TOKEN")
        return token, peer_identities(context.auth_context())

    def _limited(self, label: str, limit: str) -> None:
        self._metrics.auth_decisions.labels(principal=label, decision="limited").inc()
        self._metrics.calls_in_flight_rejected.labels(limit=limit).inc()

    def release(self, caller: Caller, connection: str) -> None:
        self.per_connection.release(connection)
        self.per_principal.release(caller.principal)

    def _watch_guard(self, behavior: Any) -> Any:
        """A health Watch, unauthenticated as every health call, but at most HEALTH_WATCHES_PER_CONNECTION open on
        one connection. The servicer writes through `context` (a coroutine), so this wrapper is one too."""

        async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            connection = context.peer() or "unknown"
            if not self.health_watches.acquire(connection):
                self._metrics.calls_in_flight_rejected.labels(limit="health_watches_per_connection").inc()
                error = ResourceExhausted(
                    f"this connection already has {HEALTH_WATCHES_PER_CONNECTION} health Watch streams open",
                    reason="TOO_MANY_HEALTH_WATCHES",
                    metadata={"limit": str(HEALTH_WATCHES_PER_CONNECTION)},
                )
                log.info("refused %s/Watch: %s (%s)", HEALTH_SERVICE, error.reason, error.code_name)
                await context.abort_with_status(to_status(error))
                return None
            try:
                if inspect.isasyncgenfunction(behavior):
                    async for response in behavior(request, context):
                        await context.write(response)
                    return None
                return await behavior(request, context)
            finally:
                self.health_watches.release(connection)

        return guarded

    def _guard(self, service: str, method: str, behavior: Any) -> Any:
        async def refuse(context: grpc.aio.ServicerContext[Any, Any], error: VerdictError) -> None:
            principal = error.metadata.get("principal", "-")
            log.info("refused %s/%s principal=%s: %s (%s)", service, method, principal, error.reason, error.code_name)
            if service == SERVICE_NAME:
                self.record_refusal(method, error)
            await context.abort_with_status(to_status(error))

        if inspect.isasyncgenfunction(behavior):

            async def guarded_stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
                try:
                    caller, connection = self.admit(service, method, context)
                except VerdictError as error:
                    await refuse(context, error)
                    return
                tokens = publish(caller)
                log.debug("admitted (authenticated by %s)", caller.via)
                try:
                    async for response in behavior(request, context):
                        yield response
                finally:
                    unpublish(tokens)
                    self.release(caller, connection)

            return guarded_stream

        async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            try:
                caller, connection = self.admit(service, method, context)
            except VerdictError as error:
                await refuse(context, error)
                return None
            tokens = publish(caller)
            log.debug("admitted (authenticated by %s)", caller.via)
            try:
                return await behavior(request, context)
            finally:
                unpublish(tokens)
                self.release(caller, connection)

        return guarded


def publish(caller: Caller) -> tuple[Any, Any]:
    call = current_call.get()
    if call is not None:
        call.learned["principal"] = caller.principal  # for the access line, written after this context is reset
    call_token = current_call.set(dataclasses.replace(call, principal=caller.principal)) if call else None
    return current_caller.set(caller), call_token


def unpublish(tokens: tuple[Any, Any]) -> None:
    caller_token, call_token = tokens
    current_caller.reset(caller_token)
    if call_token is not None:
        current_call.reset(call_token)
