#!/usr/bin/env python3
"""A stand-in for the judge CLIs (every binary in `CLIS` below), for tests that run the real runner.

Installed per test under a CLI's real name in a directory the test puts on the judge's PATH (support.FakeJudges).
It behaves like that CLI at its edges, so the argv builders are tested honestly: it parses the arguments the way the
real program does and refuses what the real program refuses, with the real program's error text and exit code
(unknown flags; claude's bypass flag as root without IS_SANDBOX; gemini in an untrusted directory; codex's
`--output-schema` file; a missing prompt), and reads the prompt from stdin exactly where the real CLI does (codex
blocks on an open stdin).

What it then does is chosen per test by `scenario.json` beside it: `{"steps": [step, ...]}`, one step per call in
order (the last step repeats). A step may hold:

  stdout, stderr, rc      what to print and the exit status
  sleep                   seconds to wait before answering (a slow judge)
  hang                    never answer; with `orphan`, first start a child that ignores SIGTERM (a CLI's worker
                          process that would outlive a kill of the parent alone); the parent ignores SIGTERM too
  signal                  die by this signal (a crash)
  huge                    print this many bytes of progress lines before stdout (an enormous stream)
  flood                   write to stdout without end, ignoring SIGTERM (a judge stuck in a loop)
  detach                  first start a grandchild in a session of its own that keeps stdout open and sleeps (what a
                          Node `detached: true` child does); its pid goes to `escaped/`
  daemon                  first start a classic daemon (fork, setsid, fork, close every descriptor) that sleeps; its
                          pid goes to `escaped/`
  authenticated           false: fail before any trust check, as a CLI without credentials does (default true)
  match                   [{"contains": text, ...step keys}]: the first rule whose text occurs in the prompt
                          overrides the step (a judge whose answer depends on what it is shown)

Every call is recorded in `calls/<n>.json` beside it (argv, the prompt as the CLI assembled it, environment, cwd,
and the exit status of a refusal) for the test to inspect.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(sys.argv[0]).parent
NAME = Path(sys.argv[0]).name


class Refused(Exception):
    def __init__(self, message: str, rc: int) -> None:
        super().__init__(message)
        self.message = message
        self.rc = rc


def _reserve() -> int:
    """This call's number: the first free `calls/<n>.json`, taken atomically (calls may run concurrently)."""
    calls = HERE / "calls"
    calls.mkdir(exist_ok=True)
    index = 0
    while True:
        try:
            os.close(os.open(calls / f"{index}.json", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            index += 1
            continue
        return index


def _record(index: int, entry: dict[str, object]) -> None:
    path = HERE / "calls" / f"{index}.json"
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(entry))
    partial.replace(path)


def _step(index: int) -> dict[str, Any]:
    steps: list[dict[str, Any]] = json.loads((HERE / "scenario.json").read_text())["steps"]
    return steps[min(index, len(steps) - 1)]


def _parse(argv: list[str], booleans: set[str], valued: set[str], unknown) -> tuple[dict[str, str | bool], list[str]]:
    """Options and positionals; `unknown(flag)` raises the CLI's own refusal."""
    options: dict[str, str | bool] = {}
    positionals: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
        elif arg in booleans:
            options[arg] = True
        elif arg in valued:
            if i + 1 >= len(argv):
                raise Refused(f"error: option '{arg}' argument missing", 1)
            options[arg] = argv[i + 1]
            i += 1
        else:
            unknown(arg)
        i += 1
    return options, positionals


def _yargs_unknown(flag: str) -> None:
    name = flag.lstrip("-")
    if name.startswith("no-"):
        name = name[3:]
    parts = name.split("-")
    camel = parts[0] + "".join(part.capitalize() for part in parts[1:])
    raise Refused(f"Unknown arguments: {name}, {camel}\nUsage: {NAME} [options] [command]\n", 1)


def _read_stdin() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.read()


def claude(argv: list[str]) -> str:
    def unknown(flag: str) -> None:
        raise Refused(f"error: unknown option '{flag}'", 1)

    options, positionals = _parse(
        argv,
        {"--dangerously-skip-permissions", "-p", "--print", "--no-session-persistence", "--verbose", "--bare"},
        {"--output-format", "--model", "--json-schema", "--permission-mode", "--tools", "--max-budget-usd"},
        unknown,
    )
    if options.get("--output-format", "text") not in ("text", "json", "stream-json"):
        raise Refused(f"error: option '--output-format <format>' argument '{options['--output-format']}' is invalid", 1)
    if "--json-schema" in options:
        try:
            json.loads(str(options["--json-schema"]))
        except json.JSONDecodeError:
            raise Refused("Error: --json-schema must be valid JSON", 1) from None
    if (
        "--dangerously-skip-permissions" in options
        and os.geteuid() == 0
        and not (os.environ.get("IS_SANDBOX") or os.environ.get("CLAUDE_CODE_BUBBLEWRAP"))
    ):
        raise Refused("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons", 1)
    if not ({"-p", "--print"} & options.keys()):
        raise Refused("Error: Raw mode is not supported on the current process.stdin (interactive mode needs a TTY)", 1)
    stdin = _read_stdin()
    prompt = "\n".join(filter(None, [stdin, *positionals]))
    if not prompt.strip():
        raise Refused(
            "Error: Input must be provided either through stdin or as a prompt argument when using --print", 1
        )
    return prompt


def codex(argv: list[str]) -> str:
    if not argv or argv[0] != "exec":
        raise Refused("Error: stdin is not a terminal", 1)

    def unknown(flag: str) -> None:
        raise Refused(
            f"error: unexpected argument '{flag}' found\n\n  tip: to pass '{flag}' as a value, use '-- {flag}'\n\n"
            "Usage: codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]\n\n"
            "For more information, try '--help'.",
            2,
        )

    options, positionals = _parse(
        argv[1:],
        {
            "--dangerously-bypass-approvals-and-sandbox",
            "--json",
            "--skip-git-repo-check",
            "--ephemeral",
            "--ignore-user-config",
        },
        {"-m", "--model", "--output-schema", "-s", "--sandbox", "-o", "--output-last-message"},
        unknown,
    )
    schema = options.get("--output-schema")
    if schema and not Path(str(schema)).is_file():
        raise Refused(f"Failed to read output schema file {schema}: No such file or directory (os error 2)", 1)
    if len(positionals) > 1:
        unknown(positionals[1])
    if positionals == ["-"] or not positionals:
        stdin = _read_stdin()
        if not stdin.strip():
            raise Refused("No prompt provided via stdin.", 1)
        return stdin
    sys.stderr.write("Reading additional input from stdin...\n")
    return positionals[0] + _read_stdin()


def _gemini_like(argv: list[str], booleans: set[str], valued: set[str], trust: bool) -> str:
    options, positionals = _parse(argv, booleans, valued, _yargs_unknown)
    mode = options.get("--approval-mode")
    if mode is not None and mode not in ("default", "auto_edit", "yolo", "plan"):
        raise Refused(f'Invalid values:\n  Argument: approval-mode, Given: "{mode}"', 1)
    chat_recording = options.get("--chat-recording")
    if chat_recording is not None and chat_recording not in ("true", "false"):
        raise Refused(f'Invalid values:\n  Argument: chat-recording, Given: "{chat_recording}"', 1)
    schema = options.get("--json-schema")
    if schema is not None and not str(schema).startswith("@"):
        try:
            json.loads(str(schema))
        except json.JSONDecodeError:
            raise Refused("Invalid --json-schema: not valid JSON", 1) from None
    prompt = options.get("-p", options.get("--prompt"))
    stdin = _read_stdin()
    if prompt is None and not positionals and not stdin.strip():
        raise Refused(
            "No input provided via stdin. Input can be provided by piping data into gemini or using the --prompt "
            "option.",
            42,
        )
    if trust and "--skip-trust" not in options and os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") != "true":
        raise Refused(
            "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the "
            "`GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode.",
            55,
        )
    return "\n\n".join(part for part in (stdin, *positionals, prompt) if isinstance(part, str) and part)


def gemini(argv: list[str], authenticated: bool) -> str:
    return _gemini_like(
        argv,
        {"--skip-trust", "-y", "--yolo", "-d", "--debug"},
        {"-p", "--prompt", "-o", "--output-format", "--approval-mode", "-m", "--model"},
        trust=authenticated,
    )


def qwen(argv: list[str]) -> str:
    return _gemini_like(
        argv,
        {"-y", "--yolo", "-d", "--debug"},
        {
            "-p",
            "--prompt",
            "-o",
            "--output-format",
            "-m",
            "--model",
            "--json-schema",
            "--chat-recording",
            "--auth-type",
        },
        trust=False,
    )


def kimi(argv: list[str]) -> str:
    def unknown(flag: str) -> None:
        raise Refused(f"Error: No such option: {flag}", 2)

    options, positionals = _parse(
        argv, {"--print", "--yolo"}, {"--output-format", "--model", "-p", "--prompt"}, unknown
    )
    if positionals or len(argv) < 2 or argv[-2] not in ("-p", "--prompt"):
        raise Refused("Error: the prompt (-p) must be the last argument", 2)
    return str(options.get("-p", options.get("--prompt", "")))


def omp(argv: list[str]) -> str:
    def unknown(flag: str) -> None:
        raise Refused(f"Unknown option: {flag}", 1)

    options, _ = _parse(argv, {"--no-session", "--print"}, {"--mode", "-p", "--model"}, unknown)
    if options.get("--mode") not in (None, "text", "json", "rpc"):
        raise Refused(f"Invalid mode: {options['--mode']}", 1)
    return str(options.get("-p", ""))


def hang(orphan: bool) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if orphan:
        pid = os.fork()
        if pid == 0:
            (HERE / "orphans").mkdir(exist_ok=True)
            (HERE / "orphans" / str(os.getpid())).write_text("")
            while True:
                time.sleep(60)
    while True:
        time.sleep(60)


def _escape(daemon: bool) -> None:
    """A grandchild that leaves the process group; the parent goes on at once."""
    if os.fork() != 0:
        if daemon:
            os.wait()
        return
    os.setsid()
    if daemon:
        if os.fork() != 0:
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(null, descriptor)
    (HERE / "escaped").mkdir(exist_ok=True)
    (HERE / "escaped" / str(os.getpid())).write_text("")
    while True:
        time.sleep(60)


CLIS: dict[str, Callable[[list[str], bool], str]] = {
    "claude": lambda argv, authenticated: claude(argv),
    "codex": lambda argv, authenticated: codex(argv),
    "gemini": gemini,
    "qwen": lambda argv, authenticated: qwen(argv),
    "kimi": lambda argv, authenticated: kimi(argv),
    "omp": lambda argv, authenticated: omp(argv),
}
"""The CLIs this fake can stand in for, by binary name: each parses argv as that CLI does and returns the prompt.
A test checks it covers the binary of every judge host record."""


def main() -> int:
    argv = sys.argv[1:]
    index = _reserve()
    step = _step(index)
    base = {"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd(), "uid": os.geteuid()}
    try:
        prompt = CLIS[NAME](argv, bool(step.get("authenticated", True)))
    except Refused as refusal:
        _record(index, {**base, "prompt": None, "refused": refusal.rc})
        sys.stderr.write(refusal.message + "\n")
        return refusal.rc
    _record(index, {**base, "prompt": prompt, "refused": None})
    for rule in step.get("match", []):
        if rule["contains"] in prompt:
            step = {**step, **rule}
            break
    if step.get("sleep"):
        time.sleep(float(step["sleep"]))
    if step.get("detach") or step.get("daemon"):
        _escape(daemon=bool(step.get("daemon")))
    if step.get("hang"):
        hang(bool(step.get("orphan")))
    if step.get("flood"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        chunk = "x" * 65536
        while True:
            sys.stdout.write(chunk)
    if step.get("signal"):
        os.kill(os.getpid(), getattr(signal, step["signal"]))
    out = sys.stdout
    if step.get("huge"):
        line = json.dumps({"type": "progress", "text": "x" * 1000}) + "\n"
        for _ in range(int(step["huge"]) // len(line) + 1):
            out.write(line)
    out.write(step.get("stdout", ""))
    out.flush()
    sys.stderr.write(step.get("stderr", ""))
    return int(step.get("rc", 0))


if __name__ == "__main__":
    sys.exit(main())
