"""Helpers the HTTP port's tests share."""

from __future__ import annotations

import asyncio
from typing import Any

from verdict.v1 import verdict_pb2

__all__ = ["HeldServicer"]


class HeldServicer:
    """Stands in for the servicer: VerifyResponse waits until released, so a call is deterministically in flight."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def VerifyResponse(self, request: Any, context: Any) -> verdict_pb2.VerifyResponseResponse:
        self.entered.set()
        await self.release.wait()
        return verdict_pb2.VerifyResponseResponse(verdict=verdict_pb2.VERIFY_VERDICT_OK)

    async def Evaluate(self, request: Any, context: Any) -> verdict_pb2.EvaluateResponse:
        return verdict_pb2.EvaluateResponse(verdict="yes")

    async def ListEvaluators(self, request: Any, context: Any) -> verdict_pb2.ListEvaluatorsResponse:
        return verdict_pb2.ListEvaluatorsResponse()

    async def BatchVerifyResponses(self, request: Any, context: Any) -> verdict_pb2.BatchVerifyResponsesResponse:
        return verdict_pb2.BatchVerifyResponsesResponse()

    async def BatchEvaluate(self, request: Any, context: Any) -> verdict_pb2.BatchEvaluateResponse:
        return verdict_pb2.BatchEvaluateResponse()
