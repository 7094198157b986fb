"""Fixtures for the judge tests: the fake judge CLI on a PATH the test controls, a real runner, and the check that no
judge process outlives a test."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf import json_format
from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.judges import HOSTS, HostRegistry, JudgeService
from verdict.metrics import Metrics
from verdict.runner.door import Runner
from verdict.server.assembly import build_server
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

HERE = Path(__file__).parent
FAKE_JUDGE = HERE / "fake_judge.py"
ENVELOPES = HERE / "envelopes"


def envelope(host: str, name: str) -> str:
    """A recorded envelope from tests/judges/envelopes/<host>/<name>."""
    return (ENVELOPES / host / name).read_text()


def _jsonl(host: str, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in envelope(host, name).splitlines() if line.strip()]


def _dump_lines(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def answer_stdout(host: str, answer: dict[str, Any]) -> str:
    """The host's recorded success envelope, carrying `answer` where that host puts the model's answer."""
    text = json.dumps(answer)
    if host == "claude-code":
        return json.dumps({**json.loads(envelope(host, "success-structured.json")), "structured_output": answer})
    if host == "qwen":
        events = _jsonl(host, "success.jsonl")
        events[-1]["result"] = text
        return _dump_lines(events)
    if host == "codex":
        events = _jsonl(host, "success.jsonl")
        for event in events:
            if event.get("item", {}).get("type") == "agent_message":
                event["item"]["text"] = text
        return _dump_lines(events)
    if host == "gemini":
        return json.dumps({**json.loads(envelope(host, "success.json")), "response": text})
    if host == "kimi-code":
        events = _jsonl(host, "success.jsonl")
        events[0]["content"][-1]["text"] = text
        return _dump_lines(events)
    if host == "omp":
        events = _jsonl(host, "success.jsonl")
        for event in events:
            for message in [event.get("message"), *event.get("messages", [])]:
                if isinstance(message, dict) and message.get("role") == "assistant" and message["content"]:
                    message["content"][-1]["text"] = text
        return _dump_lines(events)
    raise AssertionError(host)


@dataclass
class FakeJudges:
    """The fake judge installed under real CLI names in `bin_dir`, its scenario, and the calls it recorded."""

    bin_dir: Path

    @property
    def path(self) -> str:
        return f"{self.bin_dir}:/usr/bin:/bin"

    def install(self, *names: str) -> None:
        source = FAKE_JUDGE.read_text().split("\n", 1)[1]
        for name in names:
            target = self.bin_dir / name
            target.write_text(f"#!{sys.executable}\n{source}")
            target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def scenario(self, *steps: dict[str, Any]) -> None:
        (self.bin_dir / "scenario.json").write_text(json.dumps({"steps": list(steps)}))

    def answer(self, host: str, answer: dict[str, Any]) -> None:
        self.scenario({"stdout": answer_stdout(host, answer)})

    def calls(self) -> list[dict[str, Any]]:
        """Every finished call record, in call order."""
        directory = self.bin_dir / "calls"
        if not directory.is_dir():
            return []
        records = []
        for path in sorted(directory.glob("*.json"), key=lambda p: int(p.stem)):
            text = path.read_text()
            if text:
                records.append(json.loads(text))
        return records

    async def wait_for_calls(self, count: int) -> list[dict[str, Any]]:
        import asyncio

        for _ in range(500):
            calls = self.calls()
            if len(calls) >= count:
                return calls
            await asyncio.sleep(0.01)
        raise AssertionError(f"the fake judge was called {len(self.calls())} times, expected {count}")

    def orphans(self) -> list[int]:
        directory = self.bin_dir / "orphans"
        return [int(path.name) for path in directory.iterdir()] if directory.is_dir() else []


@pytest.fixture
def fake_judges(tmp_path: Path) -> FakeJudges:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    judges = FakeJudges(bin_dir)
    judges.scenario({"stdout": "", "rc": 0})
    return judges


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """Where this test's judge calls get their private HOME: the marker the leftover check looks for."""
    path = tmp_path / "scratch"
    path.mkdir()
    return path


def processes_with_home_under(root: Path) -> list[int]:
    """Live processes whose environment has HOME inside `root` (zombies have no readable environment)."""
    marker = f"HOME={root}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if any(item.startswith(marker) for item in (entry / "environ").read_bytes().split(b"\0")):
                found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_leftover_processes(scratch: Path) -> Iterator[None]:
    """After every test, no process started for it may still run (killed ones get a moment to disappear)."""
    yield
    deadline = time.monotonic() + 5
    survivors = processes_with_home_under(scratch)
    while survivors and time.monotonic() < deadline:
        time.sleep(0.02)
        survivors = processes_with_home_under(scratch)
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert survivors == [], f"judge processes outlived the test: {survivors}"


@pytest.fixture
def metrics() -> Metrics:
    return Metrics(CollectorRegistry(), model_labels=("claude-sonnet-4-5",))


@pytest.fixture
async def runner(metrics: Metrics) -> AsyncIterator[Runner]:
    runner = Runner(metrics)
    yield runner
    live = runner.live_process_groups
    runner.shutdown()
    assert live == frozenset(), f"process groups still running after the test: {sorted(live)}"


ServiceFactory = Callable[..., JudgeService]


@pytest.fixture
def judge_service(fake_judges: FakeJudges, runner: Runner, metrics: Metrics, scratch: Path) -> ServiceFactory:
    """`judge_service(host="claude-code", **config)`: a JudgeService whose host is the fake judge; `hosts=` injects
    a registry of host records (a changed record, a toy host) instead of the known CLIs."""

    def build(
        host: str = "claude-code", env: dict[str, str] | None = None, hosts: HostRegistry = HOSTS, **config: Any
    ) -> JudgeService:
        if host in hosts.by_name:
            fake_judges.install(hosts.by_name[host].binary)
        return JudgeService(
            Config(judge_host=host, **config),
            runner,
            metrics,
            {"PATH": fake_judges.path, **(env or {})},
            scratch_root=scratch,
            hosts=hosts,
        )

    return build


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


class ChatServer:
    """A small OpenAI-compatible chat-completions server on 127.0.0.1:<free port>, run in a thread.

    `replies` are served in order (the last repeats): (status, body) or (status, body, delay seconds). Every request
    is kept in `requests` as (path, parsed JSON body), and its Authorization header in `authorizations`. With `key`
    set, a request without `Authorization: Bearer <key>` gets 401 instead, its body quoting the header it got (as a
    careless gateway might: the worst case for a key that must not leak).
    """

    def __init__(self) -> None:
        import http.server
        import threading

        self.replies: list[tuple[Any, ...]] = [(200, chat_body('{"ok": true, "reason": "fine"}'))]
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.authorizations: list[str | None] = []
        self.key: str | None = None
        self.release = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                index = len(server.requests)
                server.requests.append((self.path, body))
                authorization = self.headers.get("Authorization")
                server.authorizations.append(authorization)
                status, reply, *delay = server.replies[min(index, len(server.replies) - 1)]
                if server.key is not None and authorization != f"Bearer {server.key}":
                    message = f"Incorrect API key provided: {authorization}"
                    status, reply, delay = 401, json.dumps({"error": {"message": message}}), []
                if delay:
                    server.release.wait(delay[0])
                data = reply.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def chat_body(content: str, *, model: str = "qwen2.5-7b-instruct") -> str:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912},
        }
    )


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.close()


# --- A real server with the fake judge, for the end-to-end judge tests ----------------------------------------------

RPC_OUTPUT = "running 12 checks\nAll 42 tests passed\n"
RPC_YES = {"verdict": "yes", "confidence": 0.9, "reason": "the summary says so", "evidence": "All 42 tests passed"}


@pytest.fixture
def homes_under_scratch(monkeypatch: pytest.MonkeyPatch, scratch: Path) -> None:
    """The server makes judge HOMEs in the temp dir; put them under this test's scratch so leftovers are found."""
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))


@pytest.fixture
def serve(fake_judges: FakeJudges, homes_under_scratch: None) -> Callable[..., Any]:
    """`async with serve(host="claude-code", registry=None, **config) as stub:` a started server whose judge is the
    fake CLI; on exit it asserts no judge process group is left."""

    @contextlib.asynccontextmanager
    async def serving(
        host: str = "claude-code", registry: CollectorRegistry | None = None, **overrides: Any
    ) -> AsyncIterator[Any]:
        if host in HOSTS.by_name:
            fake_judges.install(HOSTS.by_name[host].binary)
        values: dict[str, Any] = {
            "grpc_address": "127.0.0.1:0",
            "metrics_address": "",
            "judge_host": host,
            **overrides,
        }
        app, port = await build_server(
            Config(**values),
            registry=CollectorRegistry() if registry is None else registry,
            env={"PATH": fake_judges.path},
        )
        await app.start()
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        try:
            yield verdict_pb2_grpc.VerdictServiceStub(channel)
            for _ in range(500):
                if not app.runner.live_process_groups:
                    break
                await asyncio.sleep(0.01)
            assert app.runner.live_process_groups == frozenset()
        finally:
            await channel.close()
            await app.stop(grace=1)

    return serving


def llm_request(output: str = RPC_OUTPUT, **config: Any) -> verdict_pb2.EvaluateRequest:
    return verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(**config)), output=output
    )


def details(response: verdict_pb2.EvaluateResponse) -> dict[str, Any]:
    return json_format.MessageToDict(response.details)
