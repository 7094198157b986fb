"""Request building and deadline choice, shared by the sync and the asyncio client so the two cannot drift."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

import grpc

from verdict_client._judge_types import JUDGE_TYPES
from verdict_client._proto.verdict.v1 import verdict_pb2
from verdict_client.config import ClientConfig

EvaluatorConfigLike: TypeAlias = verdict_pb2.EvaluatorConfig | Mapping[str, Any] | str
"""An evaluator configuration: the typed proto, a little-loops `evaluate:` block as a mapping (sent as JSON in
`EvaluatorConfig.yaml`), or such a block as YAML/JSON text."""

Metadata: TypeAlias = Sequence[tuple[str, str | bytes]]


def evaluator_config(config: EvaluatorConfigLike) -> verdict_pb2.EvaluatorConfig:
    if isinstance(config, verdict_pb2.EvaluatorConfig):
        return config
    if isinstance(config, str):
        return verdict_pb2.EvaluatorConfig(yaml=config)
    if isinstance(config, Mapping):
        return verdict_pb2.EvaluatorConfig(yaml=json.dumps(dict(config)))
    raise TypeError(f"config must be an EvaluatorConfig, a mapping or YAML text, not {type(config).__name__}")


_MODEL_GRADERS = ('"score_model"', '"label_model"')
"""An OpenAI grader asks a judge when it holds one of these types (a multi grader may hold them anywhere)."""


def uses_judge(config: verdict_pb2.EvaluatorConfig) -> bool:
    """Whether the evaluation may wait for a judge. Raw YAML is not parsed here, so it counts as judge-backed; an
    OpenAI grader does when its text names a model grader type, a promptfoo list when it names llm-rubric."""
    kind = config.WhichOneof("kind")
    if kind == "yaml":
        try:
            block = json.loads(config.yaml)
        except ValueError:
            return True
        if isinstance(block, dict) and block.get("type") == "openai_grader":
            return any(name in json.dumps(block) for name in _MODEL_GRADERS)
        if isinstance(block, dict) and block.get("type") == "promptfoo":
            return "llm-rubric" in json.dumps(block)
        return not isinstance(block, dict) or block.get("type") in JUDGE_TYPES
    if kind == "openai_grader":
        return any(name in config.openai_grader.replace(" ", "") for name in _MODEL_GRADERS)
    if kind == "promptfoo":
        return "llm-rubric" in config.promptfoo
    return kind in JUDGE_TYPES


ToolCallLike: TypeAlias = verdict_pb2.ToolCall | Mapping[str, Any]
"""One tool call: the proto, a mapping with `id`, `name` and `arguments` (the provider's JSON text, or an object, which
is sent as JSON), or a call as OpenAI's chat completions return it (`{"id", "type": "function", "function": {...}}`)."""

ToolLike: TypeAlias = verdict_pb2.ToolDefinition | Mapping[str, Any]
"""One declared tool: the proto, or a mapping with `name`, `description`, `parameters` (a JSON Schema as a mapping or
JSON text) and `strict`, or a tool as OpenAI's requests declare it (`{"type": "function", "function": {...}}`)."""

ProviderJson: TypeAlias = str | bytes | Mapping[str, Any] | Sequence[Any] | Any
"""A provider's JSON as text, as parsed JSON, or as an SDK object with `model_dump_json()` (OpenAI, Anthropic and
Google's SDKs' response types) or `to_json()`: passed straight through."""


def provider_json(value: ProviderJson) -> str:
    """A provider response, message or tools array as the JSON text `message_json` / `tools_json` carry."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8")
    for method in ("model_dump_json", "to_json"):
        dump = getattr(value, method, None)
        if callable(dump):
            text = dump()
            return text if isinstance(text, str) else json.dumps(text)
    return json.dumps(value)


def tool_call(call: ToolCallLike) -> verdict_pb2.ToolCall:
    if isinstance(call, verdict_pb2.ToolCall):
        return call
    function = call.get("function", call)
    arguments = function.get("arguments", "")
    return verdict_pb2.ToolCall(
        id=str(call.get("id", "")),
        name=function["name"],
        arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
    )


def tool_definition(tool: ToolLike) -> verdict_pb2.ToolDefinition:
    if isinstance(tool, verdict_pb2.ToolDefinition):
        return tool
    function = tool.get("function", tool)
    parameters = function.get("parameters", "")
    return verdict_pb2.ToolDefinition(
        name=function["name"],
        description=function.get("description", ""),
        parameters=parameters if isinstance(parameters, str) else json.dumps(parameters),
        strict=bool(function.get("strict", False)),
    )


def verify_request(
    text: str,
    *,
    finish_reason: str,
    has_tool_calls: bool,
    completion_tokens: int,
    request_text: str,
    model: str,
    tool_calls: Sequence[ToolCallLike] = (),
    tools: Sequence[ToolLike] = (),
    message: ProviderJson | None = None,
    tools_json: ProviderJson | None = None,
) -> verdict_pb2.VerifyResponseRequest:
    return verdict_pb2.VerifyResponseRequest(
        text=text,
        finish_reason=finish_reason,
        has_tool_calls=has_tool_calls,
        completion_tokens=completion_tokens,
        request_text=request_text,
        model=model,
        tool_calls=[tool_call(call) for call in tool_calls],
        tools=[tool_definition(tool) for tool in tools],
        message_json=provider_json(message) if message is not None else "",
        tools_json=provider_json(tools_json) if tools_json is not None else "",
    )


def evaluate_request(
    config: verdict_pb2.EvaluatorConfig,
    output: str,
    *,
    exit_code: int,
    context: Mapping[str, Any] | None,
    state: bytes,
    workspace: str,
    tool_calls: Sequence[ToolCallLike] = (),
    finish_reason: str = "",
    latency_ms: float | None = None,
    cost: float | None = None,
    logprobs: Sequence[float] = (),
    tools: Sequence[ToolLike] = (),
) -> verdict_pb2.EvaluateRequest:
    """The request; the provider facts (tool calls, finish reason, latency, cost, logprobs, tools) are what the
    trajectory, promptfoo and openai_grader evaluators read."""
    request = verdict_pb2.EvaluateRequest(
        config=config,
        output=output,
        exit_code=exit_code,
        state=state,
        workspace=workspace,
        tool_calls=[tool_call(call) for call in tool_calls],
        finish_reason=finish_reason,
        logprobs=list(logprobs),
        tools=[tool_definition(tool) for tool in tools],
    )
    if latency_ms is not None:
        request.latency_ms = latency_ms
    if cost is not None:
        request.cost = cost
    if context:
        request.context.update(dict(context))
    return request


FACTS = ("tool_calls", "finish_reason", "latency_ms", "cost", "logprobs", "tools")
"""evaluate()'s provider-fact arguments, accepted in a batch item too."""


VerifyItem: TypeAlias = verdict_pb2.VerifyResponseRequest | Mapping[str, Any] | str
"""One completion of a batch: its text alone, a mapping of `verify_response`'s keyword arguments (`text`,
`finish_reason`, ...), or the request message itself."""

EvaluateItem: TypeAlias = verdict_pb2.EvaluateRequest | Mapping[str, Any]
"""One evaluation of a batch: a mapping of `evaluate`'s arguments (`config`, `output`, `exit_code`, `context`,
`state`, `workspace` and the provider facts), or the request message itself."""

DEFAULT_BATCH_SIZE = 100
"""Items per batch call in `verify_many` / `evaluate_many`: large enough that the per-call cost vanishes, small
enough to stay far under the server's max_batch_items and byte limit with answers of a few KB."""

_Item = TypeVar("_Item")


def verify_item(item: VerifyItem) -> verdict_pb2.VerifyResponseRequest:
    if isinstance(item, verdict_pb2.VerifyResponseRequest):
        return item
    if isinstance(item, str):
        return verdict_pb2.VerifyResponseRequest(text=item)
    if isinstance(item, Mapping):
        return verdict_pb2.VerifyResponseRequest(**dict(item))
    raise TypeError(f"a batch item must be a str, a mapping or a VerifyResponseRequest, not {type(item).__name__}")


def evaluate_item(item: EvaluateItem) -> verdict_pb2.EvaluateRequest:
    if isinstance(item, verdict_pb2.EvaluateRequest):
        return item
    if isinstance(item, Mapping):
        fields = dict(item)
        unknown = set(fields) - {"config", "output", "exit_code", "context", "state", "workspace", *FACTS}
        if "config" not in fields or unknown:
            raise TypeError(f"an evaluate item needs `config` and takes evaluate()'s arguments; got {sorted(fields)}")
        return evaluate_request(
            evaluator_config(fields["config"]),
            fields.get("output", ""),
            exit_code=fields.get("exit_code", 0),
            context=fields.get("context"),
            state=fields.get("state", b""),
            workspace=fields.get("workspace", ""),
            **{name: fields[name] for name in FACTS if name in fields},
        )
    raise TypeError(f"a batch item must be a mapping or an EvaluateRequest, not {type(item).__name__}")


def chunks(items: Iterable[_Item], size: int) -> Iterator[list[_Item]]:
    """Consecutive lists of at most `size` items, read lazily (a million-line file is never held whole)."""
    if size < 1:
        raise ValueError(f"batch_size must be at least 1, got {size}")
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def batch_deadline(client_config: ClientConfig, timeout: float | None, count: int, *, judged: bool = False) -> float:
    """A batch's deadline: `timeout` when given, else the per-call default scaled by the batch's size (a batch of
    100 answers takes longer than one), capped at the judge deadline."""
    if timeout is not None:
        return deadline(client_config, timeout)
    single = client_config.judge_timeout_seconds if judged else client_config.timeout_seconds
    return min(max(single, single * count / 10), max(single, client_config.judge_timeout_seconds))


def deadline(client_config: ClientConfig, timeout: float | None, *, judged: bool = False) -> float:
    if timeout is not None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        return timeout
    return client_config.judge_timeout_seconds if judged else client_config.timeout_seconds


def credentials(client_config: ClientConfig) -> Any:
    """Channel credentials for a TLS config, or None for plaintext."""
    tls = client_config.tls
    if tls is None:
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=tls.root_certificates,
        private_key=tls.private_key,
        certificate_chain=tls.certificate_chain,
    )


_token_cache: dict[str, tuple[tuple[int, int, int], str]] = {}
"""Token files read so far, by path: ((inode, mtime, size), token). Re-read only when the stamp changes."""


def bearer_token(client_config: ClientConfig) -> str | None:
    """The token to send, from the config or its (re-read when changed) file; None when the config has none."""
    if client_config.bearer_token is not None:
        return client_config.bearer_token
    path = client_config.bearer_token_file
    if path is None:
        return None
    st = os.stat(path)
    stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
    cached = _token_cache.get(path)
    if cached is None or cached[0] != stamp:
        with open(path, encoding="utf-8") as f:
            cached = (stamp, f.read().strip())
        _token_cache[path] = cached
    return cached[1]


def call_metadata(client_config: ClientConfig, metadata: Metadata | None) -> Metadata | None:
    """The call's metadata plus `authorization: Bearer ...` when the config carries a token (the caller's own
    `authorization`, if any, wins)."""
    token = bearer_token(client_config)
    if token is None or any(key.lower() == "authorization" for key, _ in metadata or ()):
        return metadata
    return (*(metadata or ()), ("authorization", f"Bearer {token}"))
