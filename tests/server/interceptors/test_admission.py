"""Admission's queue bound (CoDel) and its drain, on the object itself with an injected clock: whether a queue is
standing is decided by the clock the test moves, never by how fast this machine runs."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from prometheus_client import CollectorRegistry

from verdict.errors import ResourceExhausted, Unavailable
from verdict.metrics import Metrics
from verdict.server.interceptors.admission import Admission, AdmissionLimits


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _admission(
    running: int = 1, queued: int = 4, interval: float = 600.0
) -> tuple[Admission, Clock, CollectorRegistry]:
    registry = CollectorRegistry()
    clock = Clock()
    limits = AdmissionLimits(running, queued, 0.0, queue_target_seconds=0.005, queue_interval_seconds=interval)
    return Admission(limits, Metrics(registry), clock=clock), clock, registry


def _shed(registry: CollectorRegistry, reason: str) -> float | None:
    return registry.get_sample_value("verdict_shed_total", {"reason": reason})


async def _queued(admission: Admission, count: int) -> None:
    for _ in range(100):
        if admission.queued == count:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{admission.queued} queued, expected {count}")


async def test_a_burst_queues_but_a_queue_standing_a_whole_interval_refuses_at_once() -> None:
    admission, clock, registry = _admission(interval=600.0)
    await admission.enter(None)  # the one slot
    first = asyncio.ensure_future(admission.enter(None))
    await _queued(admission, 1)
    assert not admission.standing  # a queue in its first interval is a burst
    clock.now += 700  # the interval ends with the first call still waiting: its wait is the interval's shortest
    second = asyncio.ensure_future(admission.enter(None))
    await _queued(admission, 2)
    clock.now += 700
    with pytest.raises(ResourceExhausted) as refused:
        await admission.enter(None)  # a queue stood for a whole interval: refused at once, though there is room
    assert refused.value.reason == "SERVER_OVERLOADED"
    assert refused.value.retry_after is not None
    assert refused.value.retry_after > 0
    assert admission.standing
    assert admission.queued == 2
    assert _shed(registry, "overloaded") == 1
    admission.leave(0.01)
    admission.leave(0.01)
    await asyncio.gather(first, second)
    assert (admission.running, admission.queued) == (1, 0)


async def test_a_queue_that_drains_within_an_interval_is_not_overload() -> None:
    admission, clock, _ = _admission(interval=600.0)
    await admission.enter(None)
    waiting = asyncio.ensure_future(admission.enter(None))
    await _queued(admission, 1)
    clock.now += 0.001
    admission.leave(0.001)
    await waiting
    clock.now += 700  # the next interval starts with a call that found no wait
    admission.leave(0.001)
    await admission.enter(None)
    assert not admission.standing


async def test_no_call_waits_longer_than_the_interval() -> None:
    admission, _, registry = _admission(interval=0.05)
    await admission.enter(None)
    with pytest.raises(ResourceExhausted) as refused:
        await admission.enter(None)  # nobody leaves: the bound, not a deadline, ends the wait
    assert refused.value.reason == "SERVER_OVERLOADED"
    assert _shed(registry, "queue_wait") == 1
    assert (admission.running, admission.queued) == (1, 0)


async def test_the_drain_refuses_queued_and_new_calls_and_lets_running_ones_finish() -> None:
    admission, _, registry = _admission(running=1, queued=2)
    await admission.enter(None)
    queued = [asyncio.ensure_future(admission.enter(None)) for _ in range(2)]
    await _queued(admission, 2)
    admission.drain()
    for outcome in await asyncio.gather(*queued, return_exceptions=True):
        assert isinstance(outcome, Unavailable)
        assert outcome.reason == "SHUTTING_DOWN"
        assert outcome.retry_after is not None
        assert outcome.retry_after > 0
    with pytest.raises(Unavailable):
        await admission.enter(None)
    assert _shed(registry, "draining") == 3
    assert (admission.running, admission.queued) == (1, 0)  # the running call keeps its slot
    admission.leave(0.01)
    assert admission.running == 0


async def test_a_slot_granted_just_before_the_drain_is_kept() -> None:
    admission, _, _ = _admission(running=1, queued=1)
    await admission.enter(None)
    waiting = asyncio.ensure_future(admission.enter(None))
    await _queued(admission, 1)
    admission.leave(0.01)  # the slot passes to the waiter, which has not resumed yet
    admission.drain()
    await waiting  # it was given the slot before the drain: it runs
    assert admission.running == 1
    admission.leave(0.01)
    assert admission.running == 0


def test_refusals_are_logged_once_per_second_with_a_count_not_once_each(caplog: pytest.LogCaptureFixture) -> None:
    """Under overload a line per refusal cost the loop more than the refusal; the metric counts each one, the log
    says how many since its last line."""
    admission, clock, _ = _admission()
    refusal = ResourceExhausted("full", reason="SERVER_OVERLOADED", retry_after=0.1)
    with caplog.at_level("INFO", logger="verdict.admission"):
        for _ in range(500):
            admission.shed_line(refusal)
            clock.now += 0.001  # 500 refusals within half a second: the first is logged, the rest counted
        clock.now += 0.6
        admission.shed_line(refusal)
    lines = [record for record in caplog.records if record.name == "verdict.admission"]
    assert [getattr(record, "fields", {}).get("refused") for record in lines] == [1, 500]
    assert all("SERVER_OVERLOADED" in record.getMessage() for record in lines)


async def test_a_refusal_status_is_built_once_per_distinct_refusal_and_says_what_the_refusal_says() -> None:
    """Under overload the same refusal repeats hundreds of times a second: its rich status is built once, and a
    refusal that differs in anything the caller reads (the counts, the retry hint, the metadata) gets its own."""
    admission, _, _ = _admission(running=1, queued=0)
    await admission.enter(None)
    refusals = []
    for _ in range(3):
        with pytest.raises(ResourceExhausted) as refused:
            await admission.enter(None)
        refusals.append(refused.value)
    statuses = [admission.status_of(error) for error in refusals]
    hint = refusals[0].retry_after
    assert hint is not None
    assert statuses[0] is statuses[1] is statuses[2]
    assert statuses[0].code == grpc.StatusCode.RESOURCE_EXHAUSTED
    rich = status_pb2.Status.FromString(dict(statuses[0].trailing_metadata)["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    retry = error_details_pb2.RetryInfo()
    assert rich.details[0].Unpack(info)
    assert info.reason == "SERVER_OVERLOADED"
    assert rich.details[-1].Unpack(retry)
    assert retry.retry_delay.ToNanoseconds() == int(hint * 1e9)
    later = ResourceExhausted(
        refusals[0].message,
        reason="SERVER_OVERLOADED",
        metadata=refusals[0].metadata,
        retry_after=hint + 0.01,
    )
    assert admission.status_of(later) is not statuses[0]  # another hint: another status
    other = ResourceExhausted(
        refusals[0].message, reason="SERVER_OVERLOADED", metadata={"running": "9"}, retry_after=hint
    )
    assert dict(admission.status_of(other).trailing_metadata) != dict(statuses[0].trailing_metadata)


async def test_a_call_waiting_outside_lends_its_place_and_takes_it_back_without_queueing() -> None:
    """A call that waits seconds for a judge or the parse pool does no work on the loop: its place goes to the next
    call in line meanwhile, and it runs again when its wait ends, over the limit if need be (it must finish)."""
    from verdict.waiting import loop_slot, waiting_outside

    admission, _, _ = _admission(running=1, queued=4)
    await admission.enter(None)  # call A runs
    place = admission.place()
    second = asyncio.ensure_future(admission.enter(None))  # call B waits in line
    await _queued(admission, 1)
    token = loop_slot.set(place)
    try:
        async with waiting_outside():
            async with waiting_outside():  # a panel's overlapping waits lend the place once
                await second  # B got A's place
                assert (admission.running, admission.queued) == (1, 0)
            assert admission.running == 1
        assert admission.running == 2  # A is back, over the limit of one
    finally:
        loop_slot.reset(token)
    admission.leave(0.01)  # B
    admission.leave(0.01)  # A
    assert (admission.running, admission.queued) == (0, 0)
    async with waiting_outside():  # outside an admitted call nothing listens
        assert admission.running == 0
