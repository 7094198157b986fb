"""The synchronous client: one method per RPC of verdict.v1.VerdictService."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

import grpc

from verdict_client import _calls
from verdict_client._calls import EvaluatorConfigLike, Metadata
from verdict_client._proto.verdict.v1 import verdict_pb2, verdict_pb2_grpc
from verdict_client.config import ClientConfig
from verdict_client.errors import VerdictRpcError
from verdict_client.results import Evaluation, EvaluatorCatalogue, Verification

__all__ = ["VerdictClient"]


class VerdictClient:
    """A blocking Verdict client over one gRPC channel; thread-safe, meant to be created once and shared.

    `target` is any gRPC target: `host:port`, or `dns:///verdict-headless.ns.svc.cluster.local:50051` to spread
    calls over every pod of a headless Service (round_robin is the default policy). Every method takes `timeout`
    (seconds; the config's default deadline when None) and `metadata`, and raises `VerdictRpcError` on failure.
    Pass `channel` to bring your own (interceptors, a shared channel); the config's channel options then do not
    apply, its deadlines still do, and `close()` leaves the channel open.
    """

    def __init__(
        self,
        target: str,
        *,
        config: ClientConfig | None = None,
        channel: grpc.Channel | None = None,
    ) -> None:
        self.config = config or ClientConfig()
        self.target = target
        self._owns_channel = channel is None
        if channel is None:
            credentials = _calls.credentials(self.config)
            options = self.config.channel_options()
            if credentials is None:
                channel = grpc.insecure_channel(target, options=options)
            else:
                channel = grpc.secure_channel(target, credentials, options=options)
        self._channel = channel
        self._stub = verdict_pb2_grpc.VerdictServiceStub(channel)

    def verify_response(
        self,
        text: str,
        *,
        finish_reason: str = "",
        has_tool_calls: bool = False,
        completion_tokens: int = 0,
        request_text: str = "",
        model: str = "",
        timeout: float | None = None,
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
        response = self._call(self._stub.VerifyResponse, request, _calls.deadline(self.config, timeout), metadata)
        return Verification.from_proto(response)

    def evaluate(
        self,
        config: EvaluatorConfigLike,
        output: str = "",
        *,
        exit_code: int = 0,
        context: Mapping[str, Any] | None = None,
        state: bytes = b"",
        workspace: str = "",
        timeout: float | None = None,
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
        return Evaluation.from_proto(self._call(self._stub.Evaluate, request, seconds, metadata))

    def list_evaluators(self, *, timeout: float | None = None, metadata: Metadata | None = None) -> EvaluatorCatalogue:
        """The server's evaluator catalogue (ListEvaluators)."""
        request = verdict_pb2.ListEvaluatorsRequest()
        response = self._call(self._stub.ListEvaluators, request, _calls.deadline(self.config, timeout), metadata)
        return EvaluatorCatalogue.from_proto(response)

    def close(self) -> None:
        """Close the channel, unless it was passed in."""
        if self._owns_channel:
            self._channel.close()

    def __enter__(self) -> VerdictClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"VerdictClient({self.target!r})"

    def _call(self, method: Any, request: Any, timeout: float, metadata: Metadata | None) -> Any:
        try:
            return method(request, timeout=timeout, metadata=_calls.call_metadata(self.config, metadata))
        except grpc.RpcError as error:
            raise VerdictRpcError.from_rpc_error(error) from error
