"""Proto messages ⇄ domain values: what the servicer, the batch runner and the CLI convert requests and answers with.

Pure functions over messages and frozen dataclasses, no grpc: the conversion is the contract between the wire and
the domain, and keeping it apart from the servicer lets the CLI (which has no server) use the same one. Parts that
walk every value of a big request (`check_finite`, `context_dict`) take and return picklable values, so the
servicer can run them in the parse pool.
"""

from __future__ import annotations

import math
from typing import Any

from google.protobuf import json_format, message, struct_pb2

from verdict.errors import InvalidArgument, InvalidConfig
from verdict.evaluators import (
    EvaluationInput,
    EvaluationResult,
    EvaluatorSpec,
    ResponseFacts,
    jsonable,
    load_evaluate_block,
    whole_numbers,
)
from verdict.evaluators.catalogue import SPECS
from verdict.v1 import verdict_pb2
from verdict.verify.languages import LANGUAGES, Languages, Runs
from verdict.verify.model import ToolCall, ToolDefinition, Verdict, Verification, VerifyInput
from verdict.verify.tool_shapes import read_message

__all__ = [
    "VERDICT_TO_PROTO",
    "catalogue_response",
    "check_finite",
    "context_dict",
    "evaluation_input",
    "evaluation_to_proto",
    "evaluator_config",
    "response_facts",
    "verdict_name",
    "verification_to_proto",
    "verify_input",
]

VERDICT_TO_PROTO: dict[Verdict, verdict_pb2.VerifyVerdict.ValueType] = {
    Verdict.OK: verdict_pb2.VERIFY_VERDICT_OK,
    Verdict.TRUNCATED: verdict_pb2.VERIFY_VERDICT_TRUNCATED,
    Verdict.MALFORMED: verdict_pb2.VERIFY_VERDICT_MALFORMED,
    Verdict.UNVERIFIABLE: verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE,
}
"""The one table of verdict spellings: each domain Verdict (whose value, `malformed`, is the spelling people read)
and its proto enum value (`VERIFY_VERDICT_MALFORMED`). The conversion to the wire reads it, and so does every place
that turns a wire verdict back into words (`verdict_name`: the decision log's `result.verdict`, the CLI's JSON), so
a verdict added to the proto and the domain is spelled in one place."""

_VERDICT_NAMES: dict[int, str] = {
    verdict_pb2.VERIFY_VERDICT_UNSPECIFIED: "unspecified",
    **{number: verdict.value for verdict, number in VERDICT_TO_PROTO.items()},
}


def verdict_name(value: int | str) -> str:
    """A wire verdict, as its number or its proto enum name (`VERIFY_VERDICT_MALFORMED`, as proto JSON prints it), in
    the spelling people read everywhere (`malformed`), from `VERDICT_TO_PROTO`. Raises ValueError for a value the
    proto does not define."""
    number = verdict_pb2.VerifyVerdict.Value(value) if isinstance(value, str) else value
    if number not in _VERDICT_NAMES:
        raise ValueError(f"{value!r} is not a VerifyVerdict")
    return _VERDICT_NAMES[number]


# --- VerifyResponse ------------------------------------------------------------------------------------------------


_MESSAGE_FACTS = ("text", "finish_reason", "has_tool_calls", "completion_tokens", "tool_calls")
"""The typed fields whose facts `message_json` carries itself: sending both would leave two answers to one question."""


def verify_input(request: verdict_pb2.VerifyResponseRequest) -> VerifyInput:
    """The domain form of a VerifyResponse request. Raises InvalidArgument naming the field when the typed fields and
    the JSON forms are mixed for the same facts, or when `message_json` is not a provider shape."""
    if request.tools_json and len(request.tools):
        raise InvalidArgument(
            "send the tools either typed (tools) or as the provider's JSON (tools_json), not both", field="tools"
        )
    if request.message_json:
        mixed = [name for name in _MESSAGE_FACTS if _is_set(request, name)]
        if mixed:
            raise InvalidArgument(
                f"{mixed[0]} is also in message_json; send the turn either typed or as the provider's JSON, not both",
                field=mixed[0],
            )
        turn = read_message(request.message_json)
        text, finish_reason, calls, tokens = turn.text, turn.finish_reason, turn.tool_calls, turn.completion_tokens
    else:
        text, finish_reason, tokens = request.text, request.finish_reason, request.completion_tokens
        # most turns call no tool and declare none: no generator is built for nothing
        calls = (
            tuple(ToolCall(call.id, call.name, call.arguments) for call in request.tool_calls)
            if len(request.tool_calls)
            else ()
        )
    tools = (
        tuple(
            ToolDefinition(tool.name, tool.description, tool.parameters, tool.strict, f"tools[{index}].parameters")
            for index, tool in enumerate(request.tools)
        )
        if len(request.tools)
        else ()
    )
    return VerifyInput(
        text=text,
        finish_reason=finish_reason,
        has_tool_calls=request.has_tool_calls or bool(calls),
        completion_tokens=tokens,
        request_text=request.request_text,
        model=request.model,
        tool_calls=calls,
        tools=tools,
        tools_json=request.tools_json,
    )


def _is_set(request: verdict_pb2.VerifyResponseRequest, name: str) -> bool:
    value = getattr(request, name)
    return bool(len(value)) if name == "tool_calls" else bool(value)


def verification_to_proto(verification: Verification) -> verdict_pb2.VerifyResponseResponse:
    """The wire form of a verification. Each check is built in place in its repeated field (`add`), not built and then
    copied in: on a short answer the copies cost a fifth of the conversion."""
    response = verdict_pb2.VerifyResponseResponse(
        verdict=VERDICT_TO_PROTO[verification.verdict],
        failed=verification.failed,
        detail=verification.detail,
    )
    for check in verification.checks:
        response.checks.add(
            block_index=check.block_index,
            language=check.language,
            verdict=VERDICT_TO_PROTO[check.verdict],
            detail=check.detail,
            line=check.line,
            error_line=check.error_line,
        )
    for tool_check in verification.tool_checks:
        response.tool_checks.add(
            call_index=tool_check.call_index,
            id=tool_check.id,
            name=tool_check.name,
            verdict=VERDICT_TO_PROTO[tool_check.verdict],
            detail=tool_check.detail,
            pointer=tool_check.pointer,
            reason=tool_check.reason,
            schema_digest=tool_check.schema_digest,
        )
    opinion = verification.second_opinion
    if opinion is not None:
        response.second_opinion.verdict = VERDICT_TO_PROTO[opinion.verdict]
        response.second_opinion.reason = opinion.reason
        response.second_opinion.host = opinion.host
    return response


# --- Evaluate ------------------------------------------------------------------------------------------------------


def evaluation_input(
    request: verdict_pb2.EvaluateRequest,
    *,
    config: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
) -> EvaluationInput:
    """The domain form of an Evaluate request; `config` and `context` when they were already converted (off the
    event loop, for a big request: `check_finite` in the pool, then `verdict.rpc.stepwise.context_in_steps`)."""
    if context is None:
        _refuse_non_finite(request)
        context = context_dict(request.context.SerializeToString()) if request.HasField("context") else {}
    return EvaluationInput(
        config=evaluator_config(request.config) if config is None else config,
        output=request.output,
        exit_code=request.exit_code,
        context=context,
        state=request.state,
        workspace=request.workspace,
        facts=response_facts(request),
    )


def response_facts(request: verdict_pb2.EvaluateRequest) -> ResponseFacts:
    """The provider facts of an Evaluate request (tool calls, finish reason, latency, cost, logprobs, tools)."""
    return ResponseFacts(
        tool_calls=tuple(ToolCall(call.id, call.name, call.arguments) for call in request.tool_calls),
        finish_reason=request.finish_reason,
        latency_ms=request.latency_ms if request.HasField("latency_ms") else None,
        cost=request.cost if request.HasField("cost") else None,
        logprobs=tuple(request.logprobs),
        tools=tuple(
            ToolDefinition(tool.name, tool.description, tool.parameters, tool.strict, f"tools[{index}].parameters")
            for index, tool in enumerate(request.tools)
        ),
    )


def context_dict(serialized: bytes) -> dict[str, Any]:
    """A serialized `context` Struct as the plain dict the evaluators read, numbers normalised. Takes and returns
    picklable values, so a big context can be converted in the parse pool."""
    struct = struct_pb2.Struct.FromString(serialized)
    return whole_numbers(json_format.MessageToDict(struct))  # type: ignore[no-any-return]


def check_finite(serialized_request: bytes) -> None:
    """For a big Evaluate request, in the parse pool: refuse non-finite numbers anywhere in it (InvalidArgument).
    The walk visits every value, which for a 180k-key context would hold the event loop; it returns nothing, because
    handing a 180k-key dict back costs the loop its unpickling (70 ms in one call): the servicer converts the context
    itself, in steps (`verdict.rpc.stepwise.context_in_steps`)."""
    _refuse_non_finite(verdict_pb2.EvaluateRequest.FromString(serialized_request))


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
    elif isinstance(getattr(config, kind), str):  # a member that carries another tool's configuration as text
        block = {"type": kind, SPECS[kind].text_member: getattr(config, kind)}
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


def catalogue_response(
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
