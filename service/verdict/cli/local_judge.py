"""`verdict local-judge`: a deterministic judge on this machine, for trying the judged evaluators without a model.

It is an OpenAI-compatible chat-completions endpoint (`POST /v1/chat/completions`, the envelope llama.cpp, vLLM and
Ollama answer with), so the server talks to it exactly as to a real local model: point `judge_host` at it.

    verdict local-judge --address 127.0.0.1:8089 &
    VERDICT_JUDGE_HOST=http://127.0.0.1:8089 verdict serve

What it answers is a pure function of the prompt, so demos and tests repeat:

- the `llm_structured` question (the default schema, with its verdict and evidence): the judged output (between
  `<action_output>` tags) is read line by line from the end; the last line that reads like a failure (FAIL, error,
  Traceback, not ok, ...) gives `no`, else the last line that reads like success (pass, ok, done, success, ...) gives
  `yes`, each quoting that line as evidence (so evidence verification passes); otherwise `cannot_judge`;
- any other question (comparator, contract, second opinion, a custom schema): the smallest object the JSON schema in
  the prompt allows (an enum's first value, a number's minimum or 1, empty strings), so every judged evaluator runs.

The model it reports is `verdict-local-judge`. It never reads or runs the output; it binds loopback by default.
"""

from __future__ import annotations

import argparse
import http.server
import json
import re
import threading
from typing import Any

__all__ = ["MODEL", "LocalJudge", "add_parser", "answer_for", "run"]

MODEL = "verdict-local-judge"
_SCHEMA_MARKER = "matches this JSON schema:\n"
_OUTPUT = re.compile(r"<action_output>\n?(.*?)\n?</action_output>", re.DOTALL)
_FAILURE = re.compile(r"\b(?:fail(?:ed|ure|s)?|error|errors|traceback|exception|not ok|panic(?:ked)?)\b", re.I)
_SUCCESS = re.compile(r"\b(?:pass(?:ed|es)?|ok|done|success(?:ful)?|succeeded|complete(?:d)?|all good)\b", re.I)
MAX_REQUEST_BYTES = 16 * 1024 * 1024


def _schema(prompt: str) -> dict[str, Any] | None:
    start = prompt.rfind(_SCHEMA_MARKER)
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(prompt, start + len(_SCHEMA_MARKER))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _smallest(schema: Any) -> Any:
    """The smallest value a JSON schema allows, by the common keywords (enum, type, minimum, properties)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {name: _smallest(sub) for name, sub in properties.items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return "" if kind == "string" else None


def _judged(prompt: str) -> dict[str, Any]:
    """The llm_structured answer: no / yes / cannot_judge from the output's last telling line."""
    found = _OUTPUT.search(prompt)
    lines = [line.strip() for line in (found.group(1) if found else "").splitlines() if line.strip()]
    for pattern, verdict, kind in ((_FAILURE, "no", "failure"), (_SUCCESS, "yes", "success")):
        for line in reversed(lines):
            if pattern.search(line):
                reason = f"the local judge read {verdict!r} from the output's last {kind} line"
                return {"verdict": verdict, "confidence": 0.9, "reason": reason, "evidence": line}
    return {
        "verdict": "cannot_judge",
        "confidence": 0.9,
        "reason": "no line reads like success or failure",
        "evidence": "",
    }


def answer_for(prompt: str) -> dict[str, Any]:
    """What the local judge answers to `prompt` (a pure function)."""
    schema = _schema(prompt)
    properties = (schema or {}).get("properties") or {}
    if (
        "verdict" in properties
        and "evidence" in properties
        and "cannot_judge" in (properties["verdict"].get("enum") or ())
    ):
        return _judged(prompt)
    if schema is None and "<action_output>" in prompt:
        return _judged(prompt)
    smallest = _smallest(schema) if schema is not None else {}
    return smallest if isinstance(smallest, dict) else {}


def completion(request: Any) -> dict[str, Any]:
    """The chat-completions envelope for one request body."""
    messages = request.get("messages") if isinstance(request, dict) else None
    prompt = ""
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            prompt = content if isinstance(content, str) else json.dumps(content)
    text = json.dumps(answer_for(prompt))
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split())},
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "verdict-local-judge"

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": "POST /v1/chat/completions"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self._send(413, {"error": {"message": f"request over {MAX_REQUEST_BYTES} bytes"}})
            return
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except ValueError as exc:
            self._send(400, {"error": {"message": f"not JSON: {exc}"}})
            return
        self._send(200, completion(request))

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LocalJudge:
    """The local judge's HTTP server, bound at construction (port 0 picks a free port, read back from `port`)."""

    def __init__(self, address: str = "127.0.0.1:0") -> None:
        host, _, port = address.rpartition(":")
        self.httpd = http.server.ThreadingHTTPServer((host.strip("[]") or "127.0.0.1", int(port)), _Handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "local-judge",
        help="serve a deterministic OpenAI-compatible judge on this machine (for demos and tests)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--address", default="127.0.0.1:8089", help="host:port to listen on (default 127.0.0.1:8089; port 0: any)"
    )


def run(args: argparse.Namespace) -> int:
    judge = LocalJudge(args.address)
    print(json.dumps({"event": "serving", "url": judge.url, "model": MODEL}), flush=True)
    try:
        judge.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        judge.httpd.server_close()
    return 0
