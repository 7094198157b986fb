"""The asyncio client: the same methods as `VerdictClient`, awaited, over a `grpc.aio` channel."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

import grpc
import grpc.aio

from verdict_client import _calls
from verdict_client._calls import EvaluatorConfigLike, Metadata
from verdict_client._proto.verdict.v1 import verdict_pb2, verdict_pb2_grpc
from verdict_client.config import ClientConfig
from verdict_client.errors import VerdictRpcError
from verdict_client.results import Evaluation, EvaluatorCatalogue, Verification

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
        text: str,
        *,
        finish_reason: str = "",
        has_tool_calls: bool = False,
        completion_tokens: int = 0,
        request_text: str = "",
        model: str = "",
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> Verification:
        """Structurally verify one completion (VerifyResponse)."""
        request = _calls.verify_request(
            text,
            finish_reason=finish_reason,
            has_tool_calls=has_tool_calls,
            completion_tokens=completion_tokens,
            request_text=request_text,
            model=model,
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
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
        metadata: Metadata | None = None,
    ) -> Evaluation:
        """Run one evaluator over one loop step's output (Evaluate); send `Evaluation.state` back next time.

        `context` maps interpolation namespaces to their values, as ${...} references read them:
        `{"context": {"action": "ls"}, "captured": {...}, "prev": {...}}`.
        """
        evaluator = _calls.evaluator_config(config)
        request = _calls.evaluate_request(
            evaluator, output, exit_code=exit_code, context=context, state=state, workspace=workspace
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
