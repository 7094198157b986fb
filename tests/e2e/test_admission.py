"""Admission control against a real server: the excess is refused at once with RESOURCE_EXHAUSTED and a retry hint,
every accepted call completes, health stays SERVING, and the server's metrics count exactly what the client saw.

Slow calls are an injected evaluator that waits on an event the test sets, so "at once" is asserted as an ordering
(every refusal arrived while the accepted calls were still held), never as a duration.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from tests.support import Running, make_config, serving
from verdict.evaluators import EvaluationResult
from verdict.server.interceptors.admission import AdmissionLimits
from verdict.v1 import verdict_pb2

SERVICE = "verdict.v1.VerdictService"
EXIT_CODE = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: exit_code"))


def _hold_evaluations(running: Running, monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, list[int]]:
    """Make every Evaluate wait for the returned event; the list counts evaluations that started."""
    release = asyncio.Event()
    started: list[int] = []

    async def held(*args: object, **kwargs: object) -> EvaluationResult:
        started.append(1)
        await release.wait()
        return EvaluationResult(verdict="yes", details={})

    monkeypatch.setattr(running.app.components.evaluations, "evaluate", held)
    return release, started


async def _until(predicate: Any) -> None:
    for _ in range(2000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition never became true")


def _details(error: grpc.aio.AioRpcError) -> tuple[error_details_pb2.ErrorInfo, error_details_pb2.RetryInfo | None]:
    status = rpc_status.from_call(error)
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    retry = None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
    return info, retry


async def test_overload_is_refused_at_once_and_nothing_accepted_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    limit, queue = 2, 2
    offered = 4 * (limit + queue)
    config = make_config(max_concurrent_rpcs=limit, max_queued_rpcs=queue, max_queue_wait_seconds=600)
    async with serving(config) as running:
        release, started = _hold_evaluations(running, monkeypatch)
        finished_before_release: list[grpc.StatusCode] = []
        codes: collections.Counter[grpc.StatusCode] = collections.Counter()
        retry_hints: list[float] = []

        async def call() -> None:
            try:
                await running.stub.Evaluate(EXIT_CODE, timeout=60)
                code = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as error:
                code = error.code()
                info, retry = _details(error)
                assert info.reason == "SERVER_OVERLOADED"
                assert retry is not None
                retry_hints.append(retry.retry_delay.ToTimedelta().total_seconds())
            if not release.is_set():
                finished_before_release.append(code)
            codes[code] += 1

        calls = [asyncio.ensure_future(call()) for _ in range(offered)]
        admission = running.app.admission
        assert admission is not None
        await _until(lambda: len(finished_before_release) == offered - limit - queue)
        # Every refusal came back while the accepted calls were still held: rejection does not wait for capacity.
        assert set(finished_before_release) == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert (admission.running, admission.queued, len(started)) == (limit, queue, limit)
        health = health_pb2_grpc.HealthStub(running.channel)
        for name in ("", SERVICE):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING  # shedding is not sickness

        release.set()
        await asyncio.gather(*calls)
        assert codes == {grpc.StatusCode.OK: limit + queue, grpc.StatusCode.RESOURCE_EXHAUSTED: offered - limit - queue}
        assert len(started) == limit + queue
        assert all(0 < hint <= 5 for hint in retry_hints)
        sample = running.registry.get_sample_value
        labels = {"grpc_type": "unary", "grpc_service": SERVICE, "grpc_method": "Evaluate"}
        assert sample("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) == codes[grpc.StatusCode.OK]
        assert (
            sample("grpc_server_handled_total", {**labels, "grpc_code": "ResourceExhausted"})
            == codes[grpc.StatusCode.RESOURCE_EXHAUSTED]
        )
        assert sample("grpc_server_handled_total", {**labels, "grpc_code": "Canceled"}) == 0
        assert sample("verdict_shed_total", {"reason": "overloaded"}) == codes[grpc.StatusCode.RESOURCE_EXHAUSTED]
        assert sample("grpc_server_started_total", labels) == offered
        assert (admission.running, admission.queued) == (0, 0)


async def test_a_deadline_too_short_is_refused_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(make_config(min_deadline_seconds=30)) as running:
        release, started = _hold_evaluations(running, monkeypatch)
        release.set()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.stub.Evaluate(EXIT_CODE, timeout=10)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        info, retry = _details(caught.value)
        assert (info.reason, retry) == ("DEADLINE_TOO_SHORT", None)
        assert started == []
        assert running.registry.get_sample_value("verdict_shed_total", {"reason": "deadline"}) == 1
        assert (await running.stub.Evaluate(EXIT_CODE, timeout=60)).verdict == "yes"


async def test_a_queued_call_whose_deadline_runs_down_is_refused_in_the_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    config = make_config(max_concurrent_rpcs=1, max_queued_rpcs=1, min_deadline_seconds=0.5, max_queue_wait_seconds=600)
    async with serving(config) as running:
        release, started = _hold_evaluations(running, monkeypatch)
        holder = asyncio.ensure_future(running.stub.Evaluate(EXIT_CODE, timeout=60))
        await _until(lambda: len(started) == 1)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.stub.Evaluate(EXIT_CODE, timeout=1.5)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert _details(caught.value)[0].reason == "DEADLINE_TOO_SHORT"
        assert running.registry.get_sample_value("verdict_shed_total", {"reason": "deadline_in_queue"}) == 1
        release.set()
        assert (await holder).verdict == "yes"
        assert len(started) == 1
        admission = running.app.admission
        assert admission is not None
        assert (admission.running, admission.queued) == (0, 0)


async def test_a_cancelled_queued_call_gives_its_place_back(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(make_config(max_concurrent_rpcs=1, max_queued_rpcs=1, max_queue_wait_seconds=600)) as running:
        release, started = _hold_evaluations(running, monkeypatch)
        holder = asyncio.ensure_future(running.stub.Evaluate(EXIT_CODE, timeout=60))
        await _until(lambda: len(started) == 1)
        admission = running.app.admission
        assert admission is not None
        waiting = running.stub.Evaluate(EXIT_CODE, timeout=60)
        await _until(lambda: admission.queued == 1)
        waiting.cancel()
        await _until(lambda: admission.queued == 0)
        release.set()
        assert (await holder).verdict == "yes"
        assert (await running.stub.Evaluate(EXIT_CODE, timeout=60)).verdict == "yes"
        assert (admission.running, admission.queued) == (0, 0)


async def test_admission_control_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(make_config(admission_control=False, max_concurrent_rpcs=1, max_queued_rpcs=0)) as running:
        release, started = _hold_evaluations(running, monkeypatch)
        calls = [asyncio.ensure_future(running.stub.Evaluate(EXIT_CODE, timeout=60)) for _ in range(4)]
        await _until(lambda: len(started) == 4)
        release.set()
        assert [reply.verdict for reply in await asyncio.gather(*calls)] == ["yes"] * 4
        assert running.app.admission is None


def test_limits_are_one_event_loops_unless_set() -> None:
    """Each worker process has one event loop and its own admission: the defaults are one loop's knee, whatever the
    cores (the workers, one per core, multiply them)."""
    assert AdmissionLimits.from_config(make_config()) == AdmissionLimits(2, 6, 0.01, 0.005, 0.1)
    assert AdmissionLimits.from_config(make_config(max_concurrent_rpcs=5, max_queued_rpcs=0)).queued == 0
    assert AdmissionLimits.from_config(make_config(max_concurrent_rpcs=5)).queued == 15
    assert AdmissionLimits.from_config(make_config(max_queue_wait_seconds=0.002)).queue_target_seconds == 0.002
