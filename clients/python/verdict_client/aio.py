"""The asyncio client: the same methods as `VerdictClient`, awaited, over a `grpc.aio` channel."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

import grpc
import grpc.aio

from verdict_client import _calls
from verdict_client._calls import (
    EvaluateItem,
    EvaluatorConfigLike,
    Metadata,
    ProviderJson,
    ToolCallLike,
    ToolLike,
    VerifyItem,
)
from verdict_client._proto.verdict.v1 import verdict_pb2, verdict_pb2_grpc
from verdict_client.config import ClientConfig
from verdict_client.errors import VerdictRpcError
from verdict_client.results import (
    Evaluation,
    EvaluatorCatalogue,
    Verification,
    evaluation_results,
    verification_results,
)

__all__ = ["AsyncVerdictClient"]


class AsyncVerdictClient:
    """A Verdict client for asyncio code. Create it inside the running event loop and `await close()` it (or use
    `async with`). Targets, deadlines, errors and `channel` behave as in `VerdictClient`."""

    def __init__(
        self,
        target: str,
        *,
        config: ClientConfig | None = None,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.config = config or ClientConfig()
        self.target = target
        self._owns_channel = channel is None
        if channel is None:
            credentials = _calls.credentials(self.config)
            options = self.config.channel_options()
            if credentials is None:
                channel = grpc.aio.insecure_channel(target, options=options)
            else:
                channel = grpc.aio.secure_channel(target, credentials, options=options)
        self._channel = channel
        self._stub = verdict_pb2_grpc.VerdictServiceStub(channel)

    async def verify_response(
        self,
        text: str = "",
        *,
        finish_reason: str = "",
        has_tool_calls: bool = False,
        completion_tokens: int = 0,
        request_text: str = "",
        model: str = "",
        tool_calls: Sequence[ToolCallLike] = (),
        tools: Sequence[ToolLike] = (),
        message: ProviderJson | None = None,
        tools_json: ProviderJson | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> Verification:
        """Structurally verify one completion (VerifyResponse), and each of its tool calls against `tools`.

        A tool-calling turn is sent typed (`text`, `finish_reason`, `tool_calls`) or as the provider's own JSON:
        `message` (the response or its assistant message: an OpenAI, Anthropic or Google SDK object, a dict, or JSON
        text) and `tools_json` (the `tools` array as sent to that provider). `Verification.tool_checks` has one
        entry per call.
        """
        request = _calls.verify_request(
            text,
            finish_reason=finish_reason,
            has_tool_calls=has_tool_calls,
            completion_tokens=completion_tokens,
            request_text=request_text,
            model=model,
            tool_calls=tool_calls,
            tools=tools,
            message=message,
            tools_json=tools_json,
        )
        seconds = _calls.deadline(self.config, timeout)
        return Verification.from_proto(await self._call(self._stub.VerifyResponse, request, seconds, metadata))

    async def evaluate(
        self,
        config: EvaluatorConfigLike,
        output: str = "",
        *,
        exit_code: int = 0,
        context: Mapping[str, Any] | None = None,
        state: bytes = b"",
        workspace: str = "",
        tool_calls: Sequence[ToolCallLike] = (),
        finish_reason: str = "",
        latency_ms: float | None = None,
        cost: float | None = None,
        logprobs: Sequence[float] = (),
        tools: Sequence[ToolLike] = (),
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> Evaluation:
        """Run one evaluator over one loop step's output (Evaluate); send `Evaluation.state` back next time.

        `context` maps interpolation namespaces to their values, as ${...} references read them:
        `{"context": {"action": "ls"}, "captured": {...}, "prev": {...}}`; an OpenAI grader's `{{item.…}}` reads
        `context["item"]`. `tool_calls`, `finish_reason`, `latency_ms`, `cost`, `logprobs` and `tools` are the
        provider's facts the trajectory, promptfoo and openai_grader evaluators read (see ToolCallLike, ToolLike).
        """
        evaluator = _calls.evaluator_config(config)
        request = _calls.evaluate_request(
            evaluator,
            output,
            exit_code=exit_code,
            context=context,
            state=state,
            workspace=workspace,
            tool_calls=tool_calls,
            finish_reason=finish_reason,
            latency_ms=latency_ms,
            cost=cost,
            logprobs=logprobs,
            tools=tools,
        )
        seconds = _calls.deadline(self.config, timeout, judged=_calls.uses_judge(evaluator))
        return Evaluation.from_proto(await self._call(self._stub.Evaluate, request, seconds, metadata))

    async def list_evaluators(
        self,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> EvaluatorCatalogue:
        """The server's evaluator catalogue (ListEvaluators)."""
        request = verdict_pb2.ListEvaluatorsRequest()
        seconds = _calls.deadline(self.config, timeout)
        return EvaluatorCatalogue.from_proto(await self._call(self._stub.ListEvaluators, request, seconds, metadata))

    async def batch_verify_responses(
        self,
        items: Iterable[VerifyItem],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> list[Verification | VerdictRpcError]:
        """Verify many completions in one call (BatchVerifyResponses); see `VerdictClient.batch_verify_responses`."""
        request = verdict_pb2.BatchVerifyResponsesRequest(items=[_calls.verify_item(item) for item in items])
        seconds = _calls.batch_deadline(self.config, timeout, len(request.items))
        return verification_results(await self._call(self._stub.BatchVerifyResponses, request, seconds, metadata))

    async def batch_evaluate(
        self,
        items: Iterable[EvaluateItem],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> list[Evaluation | VerdictRpcError]:
        """Run many evaluations in one call (BatchEvaluate); see `VerdictClient.batch_evaluate`."""
        request = verdict_pb2.BatchEvaluateRequest(items=[_calls.evaluate_item(item) for item in items])
        judged = any(_calls.uses_judge(item.config) for item in request.items)
        seconds = _calls.batch_deadline(self.config, timeout, len(request.items), judged=judged)
        return evaluation_results(await self._call(self._stub.BatchEvaluate, request, seconds, metadata))

    async def verify_many(
        self,
        items: Iterable[VerifyItem],
        *,
        batch_size: int = _calls.DEFAULT_BATCH_SIZE,
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> AsyncIterator[Verification | VerdictRpcError]:
        """Verify any number of completions `batch_size` at a time; yields one result per item, in order."""
        for chunk in _calls.chunks(items, batch_size):
            for result in await self.batch_verify_responses(chunk, timeout=timeout, metadata=metadata):
                yield result

    async def evaluate_many(
        self,
        items: Iterable[EvaluateItem],
        *,
        batch_size: int = _calls.DEFAULT_BATCH_SIZE,
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> AsyncIterator[Evaluation | VerdictRpcError]:
        """Run any number of evaluations `batch_size` at a time; yields one result per item, in order."""
        for chunk in _calls.chunks(items, batch_size):
            for result in await self.batch_evaluate(chunk, timeout=timeout, metadata=metadata):
                yield result

    async def close(self) -> None:
        """Close the channel, unless it was passed in; calls in flight are cancelled."""
        if self._owns_channel:
            await self._channel.close()

    async def __aenter__(self) -> AsyncVerdictClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncVerdictClient({self.target!r})"

    async def _call(self, method: Any, request: Any, deadline: float, metadata: Metadata | None) -> Any:
        try:
            return await method(request, timeout=deadline, metadata=_calls.call_metadata(self.config, metadata))
        except grpc.RpcError as error:
            raise VerdictRpcError.from_rpc_error(error) from error
