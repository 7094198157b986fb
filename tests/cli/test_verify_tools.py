"""`verdict verify --provider [--tools FILE]`: provider responses checked from files and JSON lines, in process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_main import _verdict
from tests.verify.tool_corpus import provider_tools
from tests.verify.tool_corpus.shapes import MESSAGE_FORMS, TOOLS_FORMS, anthropic, openai_chat
from verdict.verify.model import ToolCall

GOOD = ToolCall("call_1", "get_current_weather", '{"location": "Boston, MA"}')
BAD = ToolCall("call_2", "get_current_weather", '{"unit": "celsius"}')


def test_one_provider_response_with_its_tools(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(TOOLS_FORMS["anthropic"](provider_tools()))
    message = anthropic("Checking.", [GOOD, BAD], "tool_calls")
    done = _verdict("verify", "--provider", "--tools", str(tools), stdin=message.encode())
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "malformed"
    assert [check.get("reason", "") for check in result["tool_checks"]] == ["", "missing_argument"]


def test_provider_json_lines_as_a_batch(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(TOOLS_FORMS["openai_chat"](provider_tools()))
    log = tmp_path / "turns.jsonl"
    lines = [
        openai_chat("", [GOOD], "tool_calls"),
        openai_chat("", [BAD], "tool_calls"),
    ]
    log.write_text("\n".join(lines) + "\n")
    done = _verdict("verify", "--provider", "--tools", str(tools), str(log))
    assert done.returncode == 1, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [result["verdict"] for result in results] == ["ok", "malformed"]


def test_request_lines_may_carry_the_provider_json_inline(tmp_path: Path) -> None:
    line = {"message_json": json.loads(MESSAGE_FORMS["gemini"]("", [GOOD], "tool_calls") or "{}"),
            "tools_json": json.loads(TOOLS_FORMS["gemini"](provider_tools()))}  # fmt: skip
    log = tmp_path / "requests.jsonl"
    log.write_text(json.dumps(line) + "\n")
    done = _verdict("verify", str(log))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["verdict"] == "ok"


def test_has_tool_calls_keeps_the_exemption_and_tool_calls_is_only_evaluates_list() -> None:
    """`--has-tool-calls` is the proto's has_tool_calls (the text is not checked); `--tool-calls` belongs to
    `verdict evaluate`, where it is the calls as a JSON list, so on `verify` it is refused instead of meaning a flag."""
    broken = b'```json\n{"a": 1,}\n```\n'
    checked = _verdict("verify", stdin=broken)
    assert json.loads(checked.stdout)["verdict"] == "malformed"
    exempt = _verdict("verify", "--has-tool-calls", stdin=broken)
    assert exempt.returncode == 0, exempt.stderr
    assert json.loads(exempt.stdout)["verdict"] != "malformed"
    refused = _verdict("verify", "--tool-calls", stdin=broken)
    assert refused.returncode == 2
    assert b"--tool-calls" in refused.stderr
