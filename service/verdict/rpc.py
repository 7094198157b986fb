"""The servicer: proto messages in, domain calls, proto messages out; domain errors become gRPC status here, once.

Nothing below this layer imports grpc. Errors travel as `google.rpc.Status` with exactly one `ErrorInfo` (reason,
domain, metadata) and, for INVALID_ARGUMENT, a `BadRequest` naming the field (AIP-193), so a Go, Java or Node client
can switch on `reason` and show `field` without parsing English.

Requests are decoded leniently: a message the protobuf runtime rejects (a string field holding invalid UTF-8, say)
reaches the servicer as `Undecodable` and is answered with INVALID_ARGUMENT naming the field, instead of the opaque
INTERNAL "Exception deserializing request" that grpcio would otherwise send.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
from google.protobuf import any_pb2, duration_pb2, json_format, message, struct_pb2
from google.protobuf.descriptor import Descriptor
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from verdict.auth import current_caller, require_judges
from verdict.decisions import DecisionLog, failure, record_call
from verdict.errors import (
    ERROR_DOMAIN,
    Internal,
    InvalidArgument,
    InvalidConfig,
    ResourceExhausted,
    Unavailable,
    VerdictError,
    resource_exhausted,
)
from verdict.evaluators import (
    EvaluationInput,
    EvaluationResult,
    Evaluations,
    EvaluatorSpec,
    jsonable,
    load_evaluate_block,
    whole_numbers,
)
from verdict.metrics import Metrics
from verdict.v1 import verdict_pb2
from verdict.verify.languages import LANGUAGES, Languages, Runs
from verdict.verify.model import BlockCheck, Verdict, Verification, VerifyInput
from verdict.verify.verifier import Verifier
from verdict.wire import Undecodable, lenient_decoder

__all__ = [
    "SERVICE_DESCRIPTOR",
    "SERVICE_NAME",
    "VERDICT_TO_PROTO",
    "VerdictServicer",
    "evaluation_input",
    "evaluation_to_proto",
    "evaluator_config",
    "message_class",
    "method_handlers",
    "to_status",
    "verification_to_proto",
    "verify_input",
]

log = logging.getLogger("verdict.rpc")

SERVICE_DESCRIPTOR = verdict_pb2.DESCRIPTOR.services_by_name["VerdictService"]
SERVICE_NAME = SERVICE_DESCRIPTOR.full_name

VERDICT_TO_PROTO = {
    Verdict.OK: verdict_pb2.VERIFY_VERDICT_OK,
    Verdict.TRUNCATED: verdict_pb2.VERIFY_VERDICT_TRUNCATED,
    Verdict.MALFORMED: verdict_pb2.VERIFY_VERDICT_MALFORMED,
    Verdict.UNVERIFIABLE: verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE,
}


Handler = Callable[[Any, Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]


_MAX_MESSAGE_BYTES = 512
_MAX_METADATA_VALUE_BYTES = 256
"""A status travels in trailers, and gRPC clients refuse trailers over 8 KiB by default (the call then fails with
RESOURCE_EXHAUSTED and the ErrorInfo is lost). Messages can echo the caller's input (an unknown evaluator type of
20,000 characters), and the message is sent three times (grpc-message, Status.message, BadRequest), so every
caller-influenced string is clipped here, once."""


def _clip(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", errors="ignore") + "…"


def to_status(error: VerdictError) -> grpc.Status:
    """The one mapping from the domain's error tree to a rich gRPC status."""
    code = getattr(code_pb2, error.code_name)
    text = _clip(error.message, _MAX_MESSAGE_BYTES)
    metadata = {key: _clip(str(value), _MAX_METADATA_VALUE_BYTES) for key, value in error.metadata.items()}
    info = error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN, metadata=metadata)
    details = [any_pb2.Any()]
    details[0].Pack(info)
    if isinstance(error, InvalidArgument):
        violation = error_details_pb2.BadRequest.FieldViolation(
            field=_clip(error.field, _MAX_METADATA_VALUE_BYTES), description=text
        )
        packed = any_pb2.Any()
        packed.Pack(error_details_pb2.BadRequest(field_violations=[violation]))
        details.append(packed)
    if error.retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(int(error.retry_after * 1e9))
        packed = any_pb2.Any()
        packed.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
        details.append(packed)
    status = status_pb2.Status(code=code, message=text, details=details)
    return rpc_status.to_status(status)


def _translating(handler: Handler) -> Handler:
    """Turn an Undecodable request or a raised VerdictError into the matching status, and anything else into
    INTERNAL without leaking internals (the traceback goes to the log).

    A response over the send limit is refused here too: gRPC would otherwise fail the call after the handler
    returned, with a bare RESOURCE_EXHAUSTED the caller cannot tell from its own request being too big, while the
    metrics counted the call OK. A request under the limit can produce such a response (details echo the output)."""

    @functools.wraps(handler)
    async def translated(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            if isinstance(request, Undecodable):
                raise request.error()
            response = await handler(self, request, context)
            limit = self._max_response_bytes
            if limit and response.ByteSize() > limit:
                size = response.ByteSize()
                raise ResourceExhausted(
                    f"the response would be {size} bytes, over the server's max_message_bytes ({limit})",
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
        response = None
        try:
            response = await translated(self, request, context)
            return response
        finally:
            record_call(decisions, handler.__name__, request, response, failure.get(), started)
            failure.reset(token)

    return decided


def _deadline(context: grpc.aio.ServicerContext[Any, Any]) -> float | None:
    remaining = context.time_remaining()
    return None if remaining is None else time.monotonic() + remaining


class VerdictServicer:
    """Implements verdict.v1.VerdictService over the domain's Verifier and Evaluations."""

    def __init__(
        self,
        verifier: Verifier,
        evaluations: Evaluations,
        *,
        max_response_bytes: int = 0,
        metrics: Metrics | None = None,
        decisions: DecisionLog | None = None,
    ) -> None:
        self._verifier = verifier
        self._evaluations = evaluations
        self._max_response_bytes = max_response_bytes
        self._metrics = metrics
        self._decisions = decisions
        self._catalogue = _catalogue_response(evaluations.catalogue())
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
        verification = await self._verifier.verify(
            verify_input(request), deadline=_deadline(context), second_opinion=current_caller.get().grant.judges
        )
        return verification_to_proto(verification)

    @_translating
    async def Evaluate(
        self, request: verdict_pb2.EvaluateRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verdict_pb2.EvaluateResponse:
        evaluation = evaluation_input(request)
        kind = evaluation.config.get("type")
        if isinstance(kind, str) and kind in self._judge_types:
            require_judges(current_caller.get(), str(kind))
        result = await self._evaluations.evaluate(evaluation, deadline=_deadline(context))
        return evaluation_to_proto(result)

    @_translating
    async def ListEvaluators(
        self, request: verdict_pb2.ListEvaluatorsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verdict_pb2.ListEvaluatorsResponse:
        return self._catalogue


def method_handlers(servicer: VerdictServicer) -> grpc.GenericRpcHandler:
    """One handler per RPC in the proto, decoded leniently. A proto RPC the servicer lacks fails here, at startup."""
    handlers = {}
    for method in SERVICE_DESCRIPTOR.methods:
        request_class = message_class(method.input_type)
        response_class = message_class(method.output_type)
        handlers[method.name] = grpc.unary_unary_rpc_method_handler(
            getattr(servicer, method.name),
            request_deserializer=lenient_decoder(request_class),
            response_serializer=response_class.SerializeToString,
        )
    return grpc.method_handlers_generic_handler(SERVICE_NAME, handlers)


def message_class(descriptor: Descriptor) -> type[message.Message]:
    return getattr(verdict_pb2, descriptor.name)  # type: ignore[no-any-return]


# --- VerifyResponse ------------------------------------------------------------------------------------------------


def verify_input(request: verdict_pb2.VerifyResponseRequest) -> VerifyInput:
    return VerifyInput(
        text=request.text,
        finish_reason=request.finish_reason,
        has_tool_calls=request.has_tool_calls,
        completion_tokens=request.completion_tokens,
        request_text=request.request_text,
        model=request.model,
    )


def verification_to_proto(verification: Verification) -> verdict_pb2.VerifyResponseResponse:
    response = verdict_pb2.VerifyResponseResponse(
        verdict=VERDICT_TO_PROTO[verification.verdict],
        failed=verification.failed,
        detail=verification.detail,
        checks=[_check_to_proto(check) for check in verification.checks],
    )
    opinion = verification.second_opinion
    if opinion is not None:
        response.second_opinion.verdict = VERDICT_TO_PROTO[opinion.verdict]
        response.second_opinion.reason = opinion.reason
        response.second_opinion.host = opinion.host
    return response


def _check_to_proto(check: BlockCheck) -> verdict_pb2.BlockCheck:
    return verdict_pb2.BlockCheck(
        block_index=check.block_index,
        language=check.language,
        verdict=VERDICT_TO_PROTO[check.verdict],
        detail=check.detail,
        line=check.line,
        error_line=check.error_line,
    )


# --- Evaluate ------------------------------------------------------------------------------------------------------


def evaluation_input(request: verdict_pb2.EvaluateRequest) -> EvaluationInput:
    _refuse_non_finite(request)
    return EvaluationInput(
        config=evaluator_config(request.config),
        output=request.output,
        exit_code=request.exit_code,
        context=whole_numbers(json_format.MessageToDict(request.context)) if request.HasField("context") else {},
        state=request.state,
        workspace=request.workspace,
    )


def _refuse_non_finite(request: message.Message, prefix: str = "") -> None:
    """A NaN or an infinity in any `google.protobuf.Value` of the request is INVALID_ARGUMENT naming the field.

    A Value can carry them in binary, but no JSON can (protobuf's JSON mapping refuses to write them), no evaluator
    defines a comparison with them, and left alone they surface as a serialisation failure deep in the conversion:
    INTERNAL for a caller's typo, which pages whoever is on call.
    """
    for field, value in request.ListFields():
        path = f"{prefix}{field.name}"
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for index, item in enumerate(items):
            item_path = f"{path}.{index}" if field.is_repeated else path
            if isinstance(item, struct_pb2.Value | struct_pb2.Struct | struct_pb2.ListValue):
                _check_value(item, item_path)
            elif isinstance(item, message.Message):
                _refuse_non_finite(item, f"{item_path}.")


def _check_value(value: struct_pb2.Value | struct_pb2.Struct | struct_pb2.ListValue, path: str) -> None:
    """Walk one Value, Struct or ListValue (iteratively: a hostile one nests up to protobuf's limit of 100)."""
    pending: list[tuple[Any, str]] = [(value, path)]
    while pending:
        item, where = pending.pop()
        if isinstance(item, struct_pb2.Struct):
            pending.extend((child, f"{where}.{key}") for key, child in item.fields.items())
        elif isinstance(item, struct_pb2.ListValue):
            pending.extend((child, f"{where}.{index}") for index, child in enumerate(item.values))
        else:
            kind = item.WhichOneof("kind")
            if kind == "number_value" and not math.isfinite(item.number_value):
                raise InvalidArgument(
                    f"{where} is {item.number_value}: numbers in a request must be finite",
                    field=where,
                    reason="NON_FINITE_NUMBER",
                )
            if kind == "struct_value":
                pending.append((item.struct_value, where))
            elif kind == "list_value":
                pending.append((item.list_value, where))


def evaluator_config(config: verdict_pb2.EvaluatorConfig) -> dict[str, Any]:
    """Both forms of EvaluatorConfig as the one plain dict the evaluators validate: a typed member becomes
    {"type": member, **its set fields}; the `yaml` member is parsed as a little-loops `evaluate:` block."""
    kind = config.WhichOneof("kind")
    if kind is None:
        raise InvalidConfig("config must set one evaluator type or `yaml`", field="config", reason="MISSING_EVALUATOR")
    if kind == "yaml":
        block = load_evaluate_block(config.yaml)
    else:
        fields = json_format.MessageToDict(getattr(config, kind), preserving_proto_field_name=True)
        block = {"type": kind, **whole_numbers(fields)}
    if config.HasField("source"):
        if "source" in block:
            raise InvalidConfig("source is set both in the yaml block and in EvaluatorConfig", field="config.source")
        block["source"] = config.source
    return block


def evaluation_to_proto(result: EvaluationResult) -> verdict_pb2.EvaluateResponse:
    response = verdict_pb2.EvaluateResponse(verdict=result.verdict, state=result.state)
    response.details.update(result.details)  # Evaluations.evaluate already made them jsonable
    return response


# --- ListEvaluators ------------------------------------------------------------------------------------------------


def _catalogue_response(
    specs: tuple[EvaluatorSpec, ...], languages: Languages = LANGUAGES
) -> verdict_pb2.ListEvaluatorsResponse:
    response = verdict_pb2.ListEvaluatorsResponse()
    for record in sorted(languages.records, key=lambda record: record.name):
        response.languages.add(
            name=record.name,
            aliases=sorted(record.aliases),
            checked=record.runs is not Runs.NOT_CHECKED,
            sees=record.sees,
            blind_to=record.blind_to,
            leniencies=list(record.leniencies),
            unchecked_reason=record.unchecked.format(name=record.name),
            metric_label=record.label,
        )
    for spec in sorted(specs, key=lambda s: s.type):
        info = response.evaluators.add(
            type=spec.type,
            description=spec.description,
            verdicts=list(spec.verdicts),
            open_verdicts=spec.open_verdicts,
            exit_code_aware=spec.exit_code_aware,
            uses_judge=spec.uses_judge,
            stateful=spec.stateful,
        )
        for field_spec in spec.fields:
            entry = info.fields.add(
                name=field_spec.name,
                type=field_spec.type,
                required=field_spec.required,
                description=field_spec.description,
            )
            entry.default_value.CopyFrom(_value(field_spec.default))
    return response


def _value(python_value: Any) -> struct_pb2.Value:
    value = struct_pb2.Value()
    json_format.ParseDict(jsonable(python_value), value)
    return value
