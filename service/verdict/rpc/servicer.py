"""The servicer: proto messages in, domain calls, proto messages out; domain errors become gRPC status here, once.

Nothing below this layer imports grpc. The conversion between messages and domain values lives in `messages.py`,
the error-to-status mapping in `status.py` and batch execution with the size limits in `batch.py`; this module
wires them into the RPCs; the package's `__init__` is the one import for callers.

Requests are decoded leniently: a message the protobuf runtime rejects (a string field holding invalid UTF-8, say)
reaches the servicer as `Undecodable` and is answered with INVALID_ARGUMENT naming the field, instead of the opaque
INTERNAL "Exception deserializing request" that grpcio would otherwise send.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc
import grpc.aio
from google.protobuf import message
from google.protobuf.descriptor import Descriptor
from google.rpc import status_pb2

from verdict.errors import Internal, ResourceExhausted, Unavailable, VerdictError, resource_exhausted
from verdict.evaluators import Evaluations
from verdict.metrics import Metrics
from verdict.rpc.batch import Limits, batch_response, run_batch
from verdict.rpc.decisions import DecisionLog, failure, record_call
from verdict.rpc.decisions.records import evaluated
from verdict.rpc.decoding import Undecodable, lenient_decoder
from verdict.rpc.messages import (
    catalogue_response,
    check_finite,
    evaluation_input,
    evaluation_to_proto,
    evaluator_config,
    verification_to_proto,
    verify_input,
)
from verdict.rpc.status import to_status
from verdict.rpc.stepwise import context_in_steps, wire_bytes, wire_size
from verdict.security.gate import current_caller, require_judges
from verdict.v1 import verdict_pb2
from verdict.verify.verifier import InlineBudget, Verifier

__all__ = ["SERVICE_DESCRIPTOR", "SERVICE_NAME", "VerdictServicer", "message_class", "method_handlers"]

log = logging.getLogger("verdict.rpc")

SERVICE_DESCRIPTOR = verdict_pb2.DESCRIPTOR.services_by_name["VerdictService"]
SERVICE_NAME = SERVICE_DESCRIPTOR.full_name


Handler = Callable[[Any, Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]


def _translating(handler: Handler) -> Handler:
    """Turn an Undecodable request or a raised VerdictError into the matching status, and anything else into
    INTERNAL without leaking internals (the traceback goes to the log).

    A request over `max_message_bytes` is refused here (gRPC's own receive limit is the larger batch limit, so batch
    calls can be bigger than single ones). A response over the send limit is refused here too: gRPC would otherwise
    fail the call after the handler returned, with a bare RESOURCE_EXHAUSTED the caller cannot tell from its own
    request being too big, while the metrics counted the call OK. A request under the limit can produce such a
    response (details echo the output)."""
    batch = getattr(handler, "__name__", "").startswith("Batch")

    @functools.wraps(handler)
    async def translated(self: VerdictServicer, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            if isinstance(request, Undecodable):
                raise request.error()
            if not batch:
                self._limits.check_request(request)
            response = await handler(self, request, context)
            limit = self._limits.batch_bytes if batch else self._limits.message_bytes
            if limit and response.ByteSize() > limit:
                size = response.ByteSize()
                raise ResourceExhausted(
                    f"the response would be {size} bytes, over the server's "
                    f"{'max_batch_bytes' if batch else 'max_message_bytes'} ({limit})",
                    reason="RESPONSE_TOO_LARGE",
                    metadata={"responseBytes": str(size), "limitBytes": str(limit)},
                )
            return response
        except VerdictError as error:
            failure.set(error)
            await context.abort_with_status(to_status(error))
        except grpc.aio.AbortError:
            raise
        except (OSError, MemoryError) as exc:
            exhausted = resource_exhausted(exc, what=f"answer {handler.__name__}")
            if exhausted is None:
                log.exception("internal error in %s", handler.__name__)
                internal = Internal("internal error; the server log has the details")
                failure.set(internal)
                await context.abort_with_status(to_status(internal))
            else:
                failure.set(exhausted)
                await self._exhausted(exhausted, context)
        except Exception:
            log.exception("internal error in %s", handler.__name__)
            internal = Internal("internal error; the server log has the details")
            failure.set(internal)
            await context.abort_with_status(to_status(internal))

    @functools.wraps(handler)
    async def decided(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """Every answer, success or error, becomes one decision record when a decision log is configured."""
        decisions: DecisionLog | None = self._decisions
        if decisions is None:
            return await translated(self, request, context)
        started = time.perf_counter()
        token = failure.set(None)
        converted = evaluated.set(None)
        response = None
        try:
            response = await translated(self, request, context)
            return response
        finally:
            record_call(decisions, handler.__name__, request, response, failure.get(), started)
            failure.reset(token)
            evaluated.reset(converted)

    return decided


def _deadline(context: grpc.aio.ServicerContext[Any, Any]) -> float | None:
    remaining = context.time_remaining()
    return None if remaining is None else time.monotonic() + remaining


OFF_LOOP_BYTES = 16 * 1024
"""Request parts bigger than this (a `context` Struct, a `yaml` member, the details an Evaluate answer echoes) are
converted in the runner's threads rather than on the event loop: a 180k-key context takes half a second of pure
Python to turn into a dict, and every other call and health check would wait for it."""


OffLoop = Callable[..., Awaitable[Any]]


async def _inline(func: Callable[..., Any], *args: Any) -> Any:
    return func(*args)


class VerdictServicer:
    """Implements verdict.v1.VerdictService over the domain's Verifier and Evaluations."""

    def __init__(
        self,
        verifier: Verifier,
        evaluations: Evaluations,
        *,
        max_response_bytes: int = 0,
        limits: Limits | None = None,
        off_loop: OffLoop | None = None,
        metrics: Metrics | None = None,
        decisions: DecisionLog | None = None,
    ) -> None:
        self._verifier = verifier
        self._evaluations = evaluations
        self._limits = limits or Limits(message_bytes=max_response_bytes, batch_bytes=max_response_bytes)
        self._off_loop: OffLoop = off_loop or _inline
        self._metrics = metrics
        self._decisions = decisions
        self._catalogue = catalogue_response(evaluations.catalogue())
        self._judge_types = frozenset(spec.type for spec in evaluations.catalogue() if spec.uses_judge)

    async def _exhausted(self, error: Unavailable, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Refuse a call the server has no resources for right now: UNAVAILABLE with a retry hint, counted."""
        log.warning("%s", error.message)
        if self._metrics is not None:
            self._metrics.resource_exhaustion.labels(resource=error.metadata["resource"]).inc()
        await context.abort_with_status(to_status(error))

    @_translating
    async def VerifyResponse(
        self, request: verdict_pb2.VerifyResponseRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verdict_pb2.VerifyResponseResponse:
        return await self._verify_one(request, _deadline(context))

    @_translating
    async def Evaluate(
        self, request: verdict_pb2.EvaluateRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verdict_pb2.EvaluateResponse:
        return await self._evaluate_one(request, _deadline(context))

    @_translating
    async def ListEvaluators(
        self, request: verdict_pb2.ListEvaluatorsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verdict_pb2.ListEvaluatorsResponse:
        return self._catalogue

    @_translating
    async def BatchVerifyResponses(
        self, request: verdict_pb2.BatchVerifyResponsesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verdict_pb2.BatchVerifyResponsesResponse:
        self._limits.check_batch(request)
        outcomes = await self.verify_batch(request.items, _deadline(context))
        return batch_response(verdict_pb2.BatchVerifyResponsesResponse, outcomes, self._limits.batch_bytes)

    @_translating
    async def BatchEvaluate(
        self, request: verdict_pb2.BatchEvaluateRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verdict_pb2.BatchEvaluateResponse:
        self._limits.check_batch(request)
        outcomes = await self.evaluate_batch(request.items, _deadline(context))
        return batch_response(verdict_pb2.BatchEvaluateResponse, outcomes, self._limits.batch_bytes)

    async def verify_batch(
        self, items: Sequence[verdict_pb2.VerifyResponseRequest], deadline: float | None = None
    ) -> list[verdict_pb2.VerifyResponseResponse | status_pb2.Status]:
        """Verify every item as BatchVerifyResponses does (the batch RPC and `verdict verify` over many inputs). The
        items share one inline parse budget: a batch is one call."""
        budget = InlineBudget(self._verifier.inline_parse_budget_bytes)

        async def verify_one(
            item: verdict_pb2.VerifyResponseRequest, cutoff: float | None
        ) -> verdict_pb2.VerifyResponseResponse:
            return await self._verify_one(item, cutoff, budget)

        return await run_batch("BatchVerifyResponses", items, verify_one, deadline, self._limits, self._metrics)

    async def evaluate_batch(
        self, items: Sequence[verdict_pb2.EvaluateRequest], deadline: float | None = None
    ) -> list[verdict_pb2.EvaluateResponse | status_pb2.Status]:
        """Evaluate every item as BatchEvaluate does (the batch RPC and `verdict evaluate --jsonl`)."""
        return await run_batch("BatchEvaluate", items, self._evaluate_one, deadline, self._limits, self._metrics)

    async def _verify_one(
        self, request: verdict_pb2.VerifyResponseRequest, deadline: float | None, budget: InlineBudget | None = None
    ) -> verdict_pb2.VerifyResponseResponse:
        verification = await self._verifier.verify(
            verify_input(request),
            deadline=deadline,
            second_opinion=current_caller.get().grant.judges,
            inline_budget=budget,
        )
        return verification_to_proto(verification)

    async def _evaluate_one(
        self, request: verdict_pb2.EvaluateRequest, deadline: float | None
    ) -> verdict_pb2.EvaluateResponse:
        big = wire_size(request) > OFF_LOOP_BYTES
        if big:
            serialized = wire_bytes(request) or request.SerializeToString()
            await self._verifier.in_pool(check_finite, serialized)
            context = await context_in_steps(request.context) if request.HasField("context") else {}
            if request.config.ByteSize() > OFF_LOOP_BYTES // 4:  # a `yaml` member: PyYAML is pure Python
                config = await self._verifier.in_pool(evaluator_config, request.config)
            else:
                config = evaluator_config(request.config)
            evaluation = evaluation_input(request, config=config, context=context)
        else:
            evaluation = evaluation_input(request)
        evaluated.set(evaluation.config)  # the decision record reads the type from this parse, not its own
        kind = evaluation.config.get("type")
        if isinstance(kind, str) and kind in self._judge_types:
            require_judges(current_caller.get(), str(kind))
        result = await self._evaluations.evaluate(evaluation, deadline=deadline)
        if big or len(result.details) > 64:
            return await self._off_loop(evaluation_to_proto, result)  # type: ignore[no-any-return]
        return evaluation_to_proto(result)


def method_handlers(servicer: VerdictServicer) -> dict[str, grpc.RpcMethodHandler]:
    """One handler per RPC in the proto by method name, decoded leniently. A proto RPC the servicer lacks fails here,
    at startup. The server registers them by name (`add_registered_method_handlers`), which lets it keep several
    requests for the next call of a method outstanding (verdict.server.acceptors)."""
    handlers = {}
    for method in SERVICE_DESCRIPTOR.methods:
        request_class = message_class(method.input_type)
        response_class = message_class(method.output_type)
        handlers[method.name] = grpc.unary_unary_rpc_method_handler(
            getattr(servicer, method.name),
            request_deserializer=lenient_decoder(request_class),
            response_serializer=response_class.SerializeToString,
        )
    return handlers


def message_class(descriptor: Descriptor) -> type[message.Message]:
    return getattr(verdict_pb2, descriptor.name)  # type: ignore[no-any-return]
