"""OpenAI's graders endpoints on the HTTP port: `POST …/graders/run` and `POST …/graders/validate`, in OpenAI's
request and response shapes, so code written against the retired hosted endpoints works by changing its base URL.

Any path ending in `/graders/run` or `/graders/validate` is served (`/v1/fine_tuning/alpha/graders/run`, as the
OpenAI SDKs call it, and `/fine_tuning/alpha/graders/run` under a base URL that already ends in `/v1`); every other
request goes on to the Connect application.

- run: `{"grader": {...}, "model_sample": "...", "item": {...}}` becomes an Evaluate call with the `openai_grader`
  member, `output` = model_sample (a JSON value that is not a string is sent as its JSON text, which
  `{{sample.output_json}}` reads back) and `context.item` = item. It goes through the same door as an Evaluate
  call on this port: access control, admission, metrics and the access log (as Evaluate), decision records. The
  answer is `{reward, metadata: {name, type, errors, execution_time, scores, token_usage, sampled_model_name},
  sub_rewards, model_grader_token_usage_per_model}`.
- validate: `{"grader": {...}}` is checked as Evaluate would check it (same access rules, no grader is run, no
  judge is asked) and answered `{"grader": {...}}` as sent.

Errors take OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with the HTTP status of the gRPC code
(INVALID_ARGUMENT 400 naming the field in `param`, UNAUTHENTICATED 401, PERMISSION_DENIED 403, RESOURCE_EXHAUSTED
429, UNAVAILABLE 503, DEADLINE_EXCEEDED 504).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from connectrpc.errors import ConnectError
from connectrpc.request import Headers, RequestContext
from google.protobuf import json_format
from google.rpc import error_details_pb2

from verdict.errors import InvalidArgument
from verdict.evaluators.graders import check_grader, run_response
from verdict.rpc import to_status
from verdict.v1 import verdict_pb2

__all__ = ["ASGIApp", "GradersHttp", "Route", "is_graders_path", "refusal"]

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]
Route = Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]
"""An endpoint function of the Connect port (`connect._endpoint_function`): access, admission, metrics, access log."""

_PATH = re.compile(r"^(?:/[\w.-]+)*/graders/(run|validate)/?$")
_STATUS = {
    "INVALID_ARGUMENT": (400, "invalid_request_error"),
    "FAILED_PRECONDITION": (400, "invalid_request_error"),
    "OUT_OF_RANGE": (400, "invalid_request_error"),
    "UNAUTHENTICATED": (401, "authentication_error"),
    "PERMISSION_DENIED": (403, "permission_error"),
    "NOT_FOUND": (404, "not_found_error"),
    "RESOURCE_EXHAUSTED": (429, "rate_limit_error"),
    "UNIMPLEMENTED": (501, "server_error"),
    "UNAVAILABLE": (503, "server_error"),
    "DEADLINE_EXCEEDED": (504, "timeout_error"),
}


class _Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body


def _error(status: int, kind: str, message: str, param: str | None = None, code: str | None = None) -> _Refused:
    return _Refused(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})


def _from_connect(error: ConnectError) -> _Refused:
    status, kind = _STATUS.get(error.code.name, (500, "server_error"))
    param = code = None
    for detail in error.details:
        if detail.type_name == "google.rpc.BadRequest":
            violations = error_details_pb2.BadRequest.FromString(detail.message_bytes).field_violations
            param = violations[0].field if violations else None
        elif detail.type_name == "google.rpc.ErrorInfo":
            code = error_details_pb2.ErrorInfo.FromString(detail.message_bytes).reason
    return _error(status, kind, error.message, param, code)


def is_graders_path(path: str) -> bool:
    """Whether a request path is one of the graders routes (`/graders/run`, `/graders/validate`, under any prefix)."""
    return _PATH.match(path) is not None


def refusal(error: ConnectError) -> tuple[int, bytes]:
    """The HTTP status and OpenAI-style JSON error body of a refusal on a graders route, so a caller of those routes
    gets the same shape whichever layer (the head-time gate, the route itself) refused."""
    refused = _from_connect(error)
    return refused.status, json.dumps(refused.body).encode()


class GradersHttp:
    """The ASGI application in front of the Connect one: the graders routes here, every other request to `inner`.

    `route(behavior)` wraps a behavior `(request, adapter) -> answer` in the Connect port's door for Evaluate;
    `evaluate` is the servicer's Evaluate."""

    def __init__(
        self,
        inner: ASGIApp,
        route: Callable[[Callable[[Any, Any], Awaitable[Any]]], Route],
        evaluate: Callable[[verdict_pb2.EvaluateRequest, Any], Awaitable[verdict_pb2.EvaluateResponse]],
        *,
        max_bytes: int,
    ) -> None:
        self._inner = inner
        self._run = route(evaluate)
        self._validate = route(self._checked)
        self._max_bytes = max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        match = _PATH.match(scope.get("path", "")) if scope.get("type") == "http" else None
        if match is None:
            await self._inner(scope, receive, send)
            return
        try:
            if scope.get("method") != "POST":
                raise _error(405, "invalid_request_error", f"{scope.get('path')} takes POST")
            body = await self._body(receive)
            ctx: RequestContext[Any, Any] = RequestContext(
                method=None,  # type: ignore[arg-type]  # read by nothing the door calls
                http_method="POST",
                request_headers=Headers(
                    [(key.decode("latin-1"), value.decode("latin-1")) for key, value in scope.get("headers", ())]
                ),
                client_address=(scope.get("client") or ("", 0))[0] or None,
            )
            run = match.group(1) == "run"
            answer = await (self._answer_run(body, ctx) if run else self._answer_validate(body, ctx))
            await _send(send, 200, answer)
        except _Refused as refused:
            await _send(send, refused.status, refused.body)

    async def _body(self, receive: Any) -> dict[str, Any]:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message.get("type") == "http.disconnect":
                raise _error(400, "invalid_request_error", "the client went away")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max_bytes:
                raise _error(413, "invalid_request_error", f"the request is over {self._max_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        try:
            document = json.loads(b"".join(chunks) or b"null")
        except (ValueError, RecursionError):
            raise _error(400, "invalid_request_error", "the request body is not JSON") from None
        if not isinstance(document, dict) or "grader" not in document:
            raise _error(400, "invalid_request_error", "the body must be an object with `grader`", "grader")
        return document

    async def _answer_run(self, body: dict[str, Any], ctx: RequestContext[Any, Any]) -> dict[str, Any]:
        sample = body.get("model_sample", "")
        item = body.get("item") or {}
        if not isinstance(item, dict):
            raise _error(400, "invalid_request_error", "`item` must be an object", "item")
        request = verdict_pb2.EvaluateRequest(
            config=verdict_pb2.EvaluatorConfig(openai_grader=json.dumps(body["grader"])),
            output=sample if isinstance(sample, str) else json.dumps(sample),
        )
        try:
            request.context.update({"item": item})
        except (ValueError, TypeError) as exc:
            raise _error(400, "invalid_request_error", f"`item` is not JSON: {exc}", "item") from None
        started = time.monotonic()
        try:
            response = await self._run(request, ctx)
        except ConnectError as error:
            raise _from_connect(error) from None
        details = json_format.MessageToDict(response.details)
        return run_response(
            str(details.get("name", "")),
            str(details.get("type", "")),
            float(details.get("reward", 0.0)),
            details.get("errors") or {},
            details.get("sub_rewards") or {},
            time.monotonic() - started,
        )

    async def _answer_validate(self, body: dict[str, Any], ctx: RequestContext[Any, Any]) -> dict[str, Any]:
        try:
            await self._validate(body["grader"], ctx)
        except ConnectError as error:
            raise _from_connect(error) from None
        return {"grader": body["grader"]}

    async def _checked(self, grader: Any, adapter: Any) -> None:
        """validate's behavior: the grader checked as Evaluate checks it; a refusal is the servicer's own status."""
        try:
            check_grader(grader)
        except InvalidArgument as refused:
            await adapter.abort_with_status(to_status(refused))


async def _send(send: Any, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload, "more_body": False})
