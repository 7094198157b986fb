"""Batch calls and the sizes the servicer enforces: BatchVerifyResponses and BatchEvaluate run here, item by item.

A batch is not atomic: every item gets its own response or the `google.rpc.Status` it alone would have failed with,
and a batch near its deadline answers with what it has instead of losing the finished items. Kept apart from the
servicer because `verdict verify` and `verdict evaluate --jsonl` run batches without a server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf import message
from google.rpc import code_pb2, status_pb2

from verdict.config.keys import Config
from verdict.errors import DeadlineTooShort, Internal, InvalidArgument, ResourceExhausted, VerdictError
from verdict.metrics import Metrics
from verdict.rpc.status import status_proto
from verdict.rpc.stepwise import wire_size
from verdict.v1 import verdict_pb2

__all__ = ["BATCH_REPLY_MARGIN_SECONDS", "Limits", "batch_response", "run_batch"]

log = logging.getLogger("verdict.rpc")

_Response = TypeVar("_Response", verdict_pb2.BatchVerifyResponsesResponse, verdict_pb2.BatchEvaluateResponse)

BATCH_REPLY_MARGIN_SECONDS = 0.5
"""A batch stops this long (at most a tenth of its time) before its deadline and answers with what it has, so the
finished items reach the caller instead of being lost with a DEADLINE_EXCEEDED for the whole call."""


@dataclass(frozen=True)
class Limits:
    """The sizes the servicer enforces itself (gRPC's receive limit is the larger of the two byte limits)."""

    message_bytes: int = 0
    batch_items: int = 1000
    batch_bytes: int = 0
    batch_concurrency: int = 8

    @classmethod
    def from_config(cls, config: Config) -> Limits:
        return cls(config.max_message_bytes, config.max_batch_items, config.max_batch_bytes, config.batch_concurrency)

    def check_request(self, request: message.Message, field: str = "") -> None:
        """Refuse a single request (or one batch item) over max_message_bytes, as gRPC's receive limit would."""
        if self.message_bytes and wire_size(request) > self.message_bytes:
            size = wire_size(request)
            raise ResourceExhausted(
                f"the request is {size} bytes, over the server's max_message_bytes ({self.message_bytes})",
                reason="REQUEST_TOO_LARGE",
                metadata={
                    "field": field or "request",
                    "requestBytes": str(size),
                    "limitBytes": str(self.message_bytes),
                },
            )

    def check_batch(self, request: Any) -> None:
        count = len(request.items)
        if count > self.batch_items:
            raise InvalidArgument(
                f"the batch has {count} items; the server takes at most {self.batch_items} (max_batch_items)",
                field="items",
                reason="BATCH_TOO_LARGE",
                metadata={"items": str(count), "limit": str(self.batch_items)},
            )
        size = request.ByteSize()
        if self.batch_bytes and size > self.batch_bytes:
            raise InvalidArgument(
                f"the batch is {size} bytes; the server takes at most {self.batch_bytes} (max_batch_bytes)",
                field="items",
                reason="BATCH_TOO_LARGE",
                metadata={"requestBytes": str(size), "limitBytes": str(self.batch_bytes)},
            )


async def run_batch(
    method: str,
    items: Sequence[Any],
    run_one: Callable[[Any, float | None], Awaitable[Any]],
    deadline: float | None,
    limits: Limits,
    metrics: Metrics | None = None,
) -> list[Any]:
    """Run every item, at most `batch_concurrency` at once and in order of arrival, each to its own response or
    `google.rpc.Status`. With a deadline, the batch stops a little before it: items not finished then are
    cancelled (their children killed) and reported DEADLINE_EXCEEDED in their place, never dropped.

    `batch_concurrency` workers take the next item in turn (one coroutine per slot, not one task per item: a task, a
    semaphore and a loop turn per item cost a third of what verifying a short answer does)."""
    outcomes: list[Any] = [None] * len(items)
    cutoff = None
    if deadline is not None:
        left = deadline - time.monotonic()
        cutoff = deadline - min(BATCH_REPLY_MARGIN_SECONDS, max(0.0, left) / 10)
    started: set[int] = set()
    queue = iter(enumerate(items))

    async def worker() -> None:
        for index, item in queue:
            if cutoff is not None and time.monotonic() >= cutoff:
                return
            started.add(index)
            try:
                limits.check_request(item, field=f"items[{index}]")
                outcomes[index] = await run_one(item, cutoff)
            except VerdictError as error:
                outcomes[index] = status_proto(error)
            except Exception:
                log.exception("internal error in %s item %d", method, index)
                outcomes[index] = status_proto(Internal("internal error; the server log has the details"))

    workers = [asyncio.ensure_future(worker()) for _ in range(min(limits.batch_concurrency, len(items)))]
    try:
        if workers:
            timeout = None if cutoff is None else max(0.0, cutoff - time.monotonic())
            await asyncio.wait(workers, timeout=timeout)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    counts = {"ok": 0, "deadline_exceeded": 0, "error": 0}
    for index, outcome in enumerate(outcomes):
        if outcome is None:
            outcomes[index] = outcome = _unfinished(index, started=index in started)
        if not isinstance(outcome, status_pb2.Status):
            counts["ok"] += 1
        elif outcome.code == code_pb2.DEADLINE_EXCEEDED:
            counts["deadline_exceeded"] += 1
        else:
            counts["error"] += 1
    if metrics is not None:
        for label, count in counts.items():
            if count:
                metrics.batch_items.labels(method=method, outcome=label).inc(count)
    return outcomes


def _unfinished(index: int, *, started: bool) -> status_pb2.Status:
    what = "did not finish" if started else "was not started"
    return status_proto(
        DeadlineTooShort(
            f"item {index} {what} before the batch's deadline",
            reason="BATCH_DEADLINE_EXCEEDED",
            metadata={"index": str(index), "started": str(started).lower()},
        )
    )


def batch_response(response_class: type[_Response], outcomes: Iterable[Any], max_bytes: int = 0) -> _Response:
    """A batch response with one result per outcome, in order: a `google.rpc.Status` as the item's error, anything
    else as its response (both batch responses share this shape).

    With `max_bytes` (max_batch_bytes, gRPC's send limit), an answer that would not fit keeps every item: the largest
    item responses are replaced by a RESOURCE_EXHAUSTED status of their own (reason `BATCH_RESPONSE_TOO_LARGE`,
    metadata `index`) until the rest fits, as the batch contract promises (only the items that do not fit fail).
    Without it, one answer over the limit threw away every item's result."""
    response = response_class()
    for outcome in outcomes:
        result = response.results.add()
        if isinstance(outcome, status_pb2.Status):
            result.error.CopyFrom(outcome)
        else:
            result.response.CopyFrom(outcome)
    if max_bytes <= 0:
        return response
    total = response.ByteSize()
    if total <= max_bytes:
        return response
    largest = sorted(
        (index for index, result in enumerate(response.results) if result.HasField("response")),
        key=lambda index: response.results[index].ByteSize(),
        reverse=True,
    )
    for index in largest:
        result = response.results[index]
        before = _framed(result.ByteSize())
        refused = ResourceExhausted(
            f"item {index}'s answer ({result.response.ByteSize()} bytes) did not fit in the batch response "
            f"(max_batch_bytes {max_bytes}); send it alone or in a smaller batch",
            reason="BATCH_RESPONSE_TOO_LARGE",
            metadata={"index": str(index), "limitBytes": str(max_bytes)},
        )
        result.error.CopyFrom(status_proto(refused))  # a oneof: the response is cleared
        total += _framed(result.ByteSize()) - before
        if total <= max_bytes:
            break
    return response


def _framed(size: int) -> int:
    """The bytes one `results` entry of `size` bytes takes in the batch response: tag, varint length, payload."""
    length, rest = 1, size
    while rest >= 0x80:
        rest >>= 7
        length += 1
    return 1 + length + size
