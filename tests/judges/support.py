"""Helpers shared by the tests of this folder (fixtures stay in conftest.py, which uses them).

Fixtures for the judge tests: the fake judge CLI on a PATH the test controls, a real runner, and the check that no
judge process outlives a test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from verdict.judges import JudgeService
from verdict.metrics import Metrics
from verdict.v1 import verdict_pb2

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

        for _ in range(3000):  # up to 30 s: each call is a Python process starting, slow on a loaded machine
            calls = self.calls()
            if len(calls) >= count:
                return calls
            await asyncio.sleep(0.01)
        raise AssertionError(f"the fake judge was called {len(self.calls())} times, expected {count}")

    def orphans(self) -> list[int]:
        directory = self.bin_dir / "orphans"
        return [int(path.name) for path in directory.iterdir()] if directory.is_dir() else []


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


ServiceFactory = Callable[..., JudgeService]


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


RPC_OUTPUT = "running 12 checks\nAll 42 tests passed\n"


RPC_YES = {"verdict": "yes", "confidence": 0.9, "reason": "the summary says so", "evidence": "All 42 tests passed"}


def llm_request(output: str = RPC_OUTPUT, **config: Any) -> verdict_pb2.EvaluateRequest:
    return verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(**config)), output=output
    )


def details(response: verdict_pb2.EvaluateResponse) -> dict[str, Any]:
    return json_format.MessageToDict(response.details)
