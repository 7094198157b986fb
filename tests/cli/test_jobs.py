"""`verdict verify` / `verdict evaluate` as batch jobs (files, directories, JSONL; in process and against a server),
and the CLI's edges: --version, the log level's case, a port in use, a closed pipe."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ServerProcess
from verdict.config.sources import load_config

OK = "```python\nx = 1\n```\n"
MALFORMED = "```python\ndef f(:\n```\n"
SHELL_OK = "```sh\necho hi\n```\n"
PROSE = "Just prose.\n"


def _verdict(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verdict", *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _lines(done: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def _summary(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    last = done.stderr.strip().splitlines()[-1]
    summary: dict[str, object] = json.loads(last)["summary"]
    return summary


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    folder = tmp_path / "answers"
    (folder / "nested").mkdir(parents=True)
    (folder / "1-ok.md").write_text(OK)
    (folder / "2-prose.txt").write_text(PROSE)
    (folder / "nested" / "3-bad.md").write_text(MALFORMED)
    (folder / "nested" / "4-shell.md").write_text(SHELL_OK)
    return folder


def test_a_directory_is_checked_file_by_file_with_a_summary(answers: Path) -> None:
    done = _verdict("verify", str(answers))
    assert done.returncode == 1, done.stderr  # one answer is malformed
    lines = _lines(done)
    assert [Path(str(line["input"])).name for line in lines] == ["1-ok.md", "2-prose.txt", "3-bad.md", "4-shell.md"]
    assert [line["verdict"] for line in lines] == [
        "ok",
        "unverifiable",
        "malformed",
        "ok",
    ]
    summary = _summary(done)
    assert summary["inputs"] == 4
    assert summary["failed"] == 1
    assert summary["errors"] == 0
    assert summary["verdicts"] == {"malformed": 1, "ok": 2, "unverifiable": 1}
    assert summary["languages"] == {"python": 2, "shell": 1}
    assert isinstance(summary["per_second"], float)
    assert "\r" not in done.stderr  # no progress bar when stderr is not a terminal


def test_many_files_that_all_pass_exit_zero(tmp_path: Path) -> None:
    files = []
    for index in range(3):
        path = tmp_path / f"{index}.md"
        path.write_text(OK if index % 2 else PROSE)
        files.append(str(path))
    done = _verdict("verify", *files, "--finish-reason", "stop")
    assert done.returncode == 0, done.stderr
    assert [line["input"] for line in _lines(done)] == files


def test_jsonl_lines_carry_their_envelope_and_id_and_bad_lines_are_errors(tmp_path: Path) -> None:
    source = tmp_path / "answers.jsonl"
    rows = [
        json.dumps({"id": "a", "text": OK, "finish_reason": "stop"}),
        json.dumps({"id": "b", "text": "The answer is", "finish_reason": "length"}),
        "",
        "not json",
        json.dumps({"text": MALFORMED, "has_tool_calls": True}),
    ]
    source.write_text("\n".join(rows) + "\n")
    done = _verdict("verify", str(source), "--batch-size", "2")
    assert done.returncode == 1
    lines = _lines(done)
    assert [line["input"] for line in lines] == [f"{source}:{n}" for n in (1, 2, 4, 5)]
    assert [line.get("id") for line in lines] == ["a", "b", None, None]
    assert lines[0]["verdict"] == "ok"
    assert lines[1]["verdict"] == "truncated"
    assert lines[2]["error"]["code"] == "INVALID_ARGUMENT"  # type: ignore[index]
    assert (lines[3]["verdict"], lines[3]["failed"]) == ("unverifiable", False)  # tool turns are exempt
    summary = _summary(done)
    assert (summary["inputs"], summary["failed"], summary["errors"]) == (4, 1, 1)


def test_jsonl_from_stdin() -> None:
    stdin = "".join(json.dumps({"text": OK}) + "\n" for _ in range(5)).encode()
    done = _verdict("verify", "--jsonl", "-", stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert [line["input"] for line in _lines(done)] == [f"stdin:{n}" for n in range(1, 6)]


def _evaluations(tmp_path: Path) -> Path:
    source = tmp_path / "steps.jsonl"
    rows = [
        {"id": 1, "config": {"type": "exit_code"}, "exit_code": 0},
        {"id": 2, "config": "type: output_numeric\noperator: ge\ntarget: 3", "output": "2"},
        {"id": 3, "config": {"type": "no_such_type"}},
        {"id": 4, "config": {"type": "action_stall", "max_repeat": 1}, "context": {"context": {"action": "ls"}}},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return source


def test_evaluate_jsonl(tmp_path: Path) -> None:
    done = _verdict("evaluate", "--jsonl", str(_evaluations(tmp_path)))
    assert done.returncode == 1  # item 3 cannot be evaluated
    lines = _lines(done)
    assert [line["id"] for line in lines] == [1, 2, 3, 4]
    assert [line.get("verdict") for line in lines] == ["yes", "no", None, "yes"]
    assert lines[2]["error"]["reason"] == "INVALID_EVALUATOR_CONFIG"  # type: ignore[index]
    assert lines[3]["state"]  # the token to send back, as hex
    summary = _summary(done)
    assert summary["verdicts"] == {"no": 1, "yes": 2}
    assert summary["errors"] == 1


def test_batch_jobs_against_a_server_use_the_batch_rpcs(server_process: ServerProcess, answers: Path) -> None:
    local = _verdict("verify", str(answers))
    remote = _verdict("verify", str(answers), "--target", server_process.target, "--batch-size", "3")
    assert remote.returncode == local.returncode == 1
    assert _lines(remote) == _lines(local)
    assert _summary(remote)["verdicts"] == _summary(local)["verdicts"]
    evaluated = _verdict("evaluate", "--jsonl", str(_evaluations(answers)), "--target", server_process.target)
    assert [line.get("verdict") for line in _lines(evaluated)] == ["yes", "no", None, "yes"]
    assert server_process.metrics_port is not None
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{server_process.metrics_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    assert 'grpc_method="BatchVerifyResponses",grpc_service="verdict.v1.VerdictService",grpc_type="unary"} 2.0' in text


def test_version() -> None:
    done = _verdict("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("verdict ")


def test_evaluate_needs_an_evaluator_or_jsonl() -> None:
    done = _verdict("evaluate")
    assert done.returncode == 2
    assert "--evaluator" in done.stderr
    assert "Traceback" not in done.stderr


def test_log_level_is_case_insensitive() -> None:
    assert load_config(flags={"log_level": "debug"}).log_level == "DEBUG"
    assert load_config(env={"VERDICT_LOG_LEVEL": "Warning"}).log_level == "WARNING"


def test_a_port_in_use_is_a_readable_error() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = _verdict("serve", "--grpc-address", f"127.0.0.1:{port}", "--metrics-address", "")
    assert done.returncode == 2
    assert "grpc_address" in done.stderr
    assert "in use" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    source = tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps({"text": OK}) + "\n" for _ in range(3000)))
    producer = subprocess.Popen(
        [sys.executable, "-m", "verdict", "verify", "--batch-size", "50", str(source)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert producer.stdout is not None
    first = producer.stdout.readline()
    producer.stdout.close()  # what `| head -1` does after its first line
    _, stderr = producer.communicate(timeout=120)
    assert json.loads(first)["verdict"] == "ok"
    assert producer.returncode == 141
    assert "Traceback" not in stderr
    assert "BrokenPipe" not in stderr
