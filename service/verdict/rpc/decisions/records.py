"""What a decision record says about a call: the digests of its input, its result, the evaluator type it asked for,
and the per-call context variables (`failure`, `evaluated`) through which the rpc layer hands those facts over.
Pure functions and context variables; building, buffering and delivering the record are `log.py`'s."""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Mapping
from typing import Any

from google.protobuf import message
from google.rpc import code_pb2, error_details_pb2

from verdict.errors import VerdictError
from verdict.evaluators import load_evaluate_block
from verdict.rpc.messages import verdict_name

__all__ = ["call_result", "evaluated", "evaluator_type", "failure", "input_digests"]


def _digest(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def input_digests(request: message.Message) -> dict[str, Any]:
    """Digests and sizes of every text and bytes field, and the scalars as they are; nested messages (config,
    context) as the digest of their deterministic serialization. Enough to tell two inputs apart, never the text."""
    digests: dict[str, Any] = {}
    for field, value in request.ListFields():
        if field.type == field.TYPE_STRING:
            digests[field.name] = _digest(value.encode("utf-8"))
        elif field.type == field.TYPE_BYTES:
            digests[field.name] = _digest(value)
        elif field.type == field.TYPE_MESSAGE and not field.is_repeated:
            digests[field.name] = _digest(value.SerializeToString(deterministic=True))
        elif not field.is_repeated:
            digests[field.name] = value
    return digests


failure: contextvars.ContextVar[VerdictError | None] = contextvars.ContextVar("verdict_failure", default=None)
"""The domain error a call ended with, set by the rpc layer where it turns the error into a status (per call: each
call runs in its own task, so its own context)."""

evaluated: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar("verdict_evaluated", default=None)
"""The evaluator configuration an Evaluate call converted (`rpc.messages.evaluator_config`, which parses a `yaml`
member), handed over by the rpc layer as soon as it has it, so the record reads the type from the call's one parse
instead of parsing the block a second time (PyYAML is pure Python: a 64 KiB block is milliseconds on the loop)."""


def call_result(rpc: str, response: Any) -> dict[str, Any]:
    if rpc == "VerifyResponse":
        result: dict[str, Any] = {
            "verdict": verdict_name(response.verdict),
            "failed": response.failed,
            "languages": sorted({check.language for check in response.checks}),
        }
        if response.tool_checks:  # the schema each call was checked against, by digest: names and arguments stay out
            result["tool_calls"] = [
                {"verdict": verdict_name(check.verdict), "reason": check.reason, "schema_digest": check.schema_digest}
                for check in response.tool_checks
            ]
        return result
    if rpc == "Evaluate":
        return {"verdict": response.verdict}
    if rpc == "ListEvaluators":
        return {"evaluators": len(response.evaluators)}
    if rpc in ("BatchVerifyResponses", "BatchEvaluate"):
        # Each item's verdict, or the code and reason it alone failed with, in order: a batch record that only said
        # "OK" could not be replayed or audited item by item.
        item_rpc = "VerifyResponse" if rpc == "BatchVerifyResponses" else "Evaluate"
        return {"items": [_item_result(item_rpc, result) for result in response.results]}
    return {}


def _item_result(rpc: str, result: Any) -> dict[str, Any]:
    if result.HasField("error"):
        reason = next((info.reason for info in _error_infos(result.error)), "")
        return {"code": code_pb2.Code.Name(result.error.code), "reason": reason}
    return call_result(rpc, result.response)


def _error_infos(status: Any) -> list[error_details_pb2.ErrorInfo]:
    infos = []
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            infos.append(info)
    return infos


def evaluator_type(request: Any, converted: Mapping[str, Any] | None = None, error: VerdictError | None = None) -> str:
    """The evaluator type an Evaluate asked for, typed or in its YAML block; empty when it cannot be told.

    `converted` is the configuration the call itself converted (`evaluated`): its type is read, nothing is parsed.
    Without it the call ended before converting its configuration; a `yaml` block is parsed here then, unless the
    call ended because that very block could not be loaded (`error` names `config.yaml`), whose type cannot be told.
    So a call's block is parsed once, except when the call is refused for setting `source` in both places.
    """
    if converted is not None:
        kind = converted.get("type")
        return kind if isinstance(kind, str) else ""
    kind = request.config.WhichOneof("kind")
    if kind != "yaml":
        return kind or ""
    if error is not None and "config.yaml" in (getattr(error, "field", None), error.metadata.get("field")):
        return ""
    try:
        block = load_evaluate_block(request.config.yaml)
    except (VerdictError, ValueError):
        return ""
    kind = block.get("type")
    return kind if isinstance(kind, str) else ""
