"""`verdict serve | verify | evaluate`: the server, and the same checks from a shell without one.

`verify` and `evaluate` run the domain code in-process by default (no server needed: a CI step can check a saved
completion), or call a running server with `--target host:port`. Both print JSON. Exit status for `verify`: 0 when the
response did not fail (ok or unverifiable), 1 when it failed (truncated or malformed), 2 on a usage or I/O error.
Given many files, a directory or JSONL, they run as a batch job (`verdict.cli.jobs`): one JSON line per input, a
summary on stderr, exit status 1 when any input failed or could not be checked. A closed stdout (`verdict verify ... |
head -1`) ends the run quietly with status 141, as a shell tool killed by SIGPIPE would.

Human-facing spellings are the ones every client and doc uses: verdicts in lower case (`malformed`, the wire enum
`VERIFY_VERDICT_MALFORMED` without its prefix) and the state token in base64 (the proto3 JSON form of bytes, which
grpcurl and curl show too).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import logging.handlers
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from verdict.cli import calibrate
from verdict.cli.calls import call, local_components, open_channel, remote_batches, state_token
from verdict.config.keys import Config, config_keys
from verdict.config.sources import load_config
from verdict.errors import ConfigError, VerdictError
from verdict.server.logs import configure_logging

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + 13


def _serve_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("serve", help="run the gRPC server", description="Run the Verdict gRPC server.")
    parser.add_argument("--config", help="YAML file of configuration keys")
    defaults = Config()
    docs = defaults.describe()
    for key in config_keys():
        parser.add_argument(
            f"--{key.replace('_', '-')}",
            dest=key,
            default=None,
            metavar="VALUE",
            help=f"{docs[key]} (default: {getattr(defaults, key)!r}; env VERDICT_{key.upper()})",
        )


def _input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", help="call a running server at host:port instead of checking in-process")
    parser.add_argument("--timeout", type=float, default=30.0, help="deadline in seconds when calling a server")
    parser.add_argument("--ca-file", help="with --target: PEM roots that verify the server (turns TLS on)")
    parser.add_argument("--cert-file", help="with --target and --ca-file: PEM client certificate (mutual TLS)")
    parser.add_argument("--key-file", help="with --cert-file: its PEM private key")
    parser.add_argument("--token-file", help="with --target: file holding the bearer token to send")
    parser.add_argument("--server-name", help="with --ca-file: host name expected in the server certificate")
    parser.add_argument(
        "--batch-size", type=int, default=100, help="batch jobs: inputs per batch (per batch RPC with --target)"
    )


def build_parser() -> argparse.ArgumentParser:
    from verdict import __version__

    parser = argparse.ArgumentParser(prog="verdict", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"verdict {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    _serve_parser(subparsers)

    verify = subparsers.add_parser(
        "verify", help="verify completions, print the verdicts as JSON (one file, or a batch job over many)"
    )
    verify.add_argument(
        "files",
        nargs="*",
        default=["-"],
        metavar="FILE",
        help="completion files or directories (every file under them), or JSONL files (*.jsonl or --jsonl: one "
        "request object per line); '-' or nothing reads stdin",
    )
    verify.add_argument("--jsonl", action="store_true", help="read every FILE (and stdin) as JSONL requests")
    verify.add_argument("--finish-reason", default="", help="the provider's finish reason (stop, length, ...)")
    verify.add_argument(
        "--has-tool-calls",
        action="store_true",
        help="the turn called tools but the calls are not given (the proto's has_tool_calls: nothing is checked); "
        "to check the calls, give the provider's message with --provider",
    )
    verify.add_argument(
        "--completion-tokens", type=int, default=0, help="tokens the completion used (0: unknown), for truncation"
    )
    verify.add_argument("--request-file", help="the user's request, for the optional second opinion")
    verify.add_argument(
        "--provider",
        action="store_true",
        help="each FILE (or JSONL line) is a provider's response or assistant message as JSON (OpenAI Chat or "
        "Responses, Anthropic, Gemini), sent as message_json: its text and tool calls are checked",
    )
    verify.add_argument(
        "--tools", metavar="FILE", help="the `tools` array as sent to the provider (JSON), sent as tools_json"
    )
    _input_arguments(verify)

    config = subparsers.add_parser(
        "config",
        help="print the effective configuration as YAML (secrets masked), or check a file",
        description="Print the configuration `verdict serve` would run with (file < VERDICT_* environment), secrets "
        "masked; or, with --check FILE, validate a file and exit 0 (valid) or 2 (the message names the bad key).",
    )
    config.add_argument("--config", help="YAML file of configuration keys, as for `verdict serve`")
    config.add_argument(
        "--check", metavar="FILE", help="validate FILE alone (the environment is not read); lists every error"
    )
    config.add_argument(
        "--explain",
        action="store_true",
        help="print each key's effective value and where it came from (default, file, environment variable)",
    )

    evaluate = subparsers.add_parser(
        "evaluate", help="run an evaluator, print the verdict as JSON (or a batch job over JSONL with --jsonl)"
    )
    evaluate.add_argument("--evaluator", help="a little-loops `evaluate:` block, YAML or JSON")
    evaluate.add_argument("--promptfoo", help="a promptfoo `assert:` list (or test case), YAML or JSON")
    evaluate.add_argument("--openai-grader", help="an OpenAI grader object as JSON")
    evaluate.add_argument(
        "--tool-calls", default="[]", help="the step's tool calls as a JSON list of {id, name, arguments}"
    )
    evaluate.add_argument("--tools", default="[]", help="the declared tools as a JSON list of {name, parameters, ...}")
    evaluate.add_argument("--finish-reason", default="", help="the provider's finish reason (promptfoo finish-reason)")
    evaluate.add_argument("--latency-ms", type=float, help="the provider call's latency in ms (promptfoo latency)")
    evaluate.add_argument("--cost", type=float, help="the provider call's cost in dollars (promptfoo cost)")
    evaluate.add_argument("--logprobs", default="[]", help="token log-probabilities as a JSON list")
    evaluate.add_argument(
        "--jsonl",
        nargs="+",
        metavar="FILE",
        help="JSONL files ('-': stdin) of evaluations, one object per line: config, output, exit_code, context, "
        "state, workspace, id",
    )
    evaluate.add_argument("--output-file", default="-", help="the action's stdout; '-' reads stdin")
    evaluate.add_argument("--exit-code", type=int, default=0, help="the action's exit status (default 0)")
    evaluate.add_argument("--context", default="{}", help="interpolation namespaces as JSON")
    evaluate.add_argument("--state", default="", help="the state token from the previous call (base64, as printed)")
    evaluate.add_argument(
        "--state-file",
        metavar="FILE",
        help="carry the state token in FILE: read it from FILE (missing or empty: the first call) and write the new "
        "token back, so a shell loop needs no parsing",
    )
    evaluate.add_argument(
        "--workspace",
        default="",
        help="the loop's working tree, relative to the workspace root (diff_stall, file-reading evaluators)",
    )
    evaluate.add_argument(
        "--workspace-root",
        default=None,
        help="directory the evaluators may read files and run git under (in process; default VERDICT_WORKSPACE_ROOT)",
    )
    _input_arguments(evaluate)
    calibrate.add_parser(subparsers)
    from verdict.cli import catalogue, local_judge, suite

    local_judge.add_parser(subparsers)
    suite.add_parser(subparsers, _input_arguments)
    catalogue.add_parser(subparsers, _input_arguments)
    return parser


def _read(path: str) -> str:
    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    # Invalid UTF-8 cannot travel in a proto string; replace it so the rest of the text is still checked.
    return data.decode("utf-8", errors="replace")


def _is_batch(args: argparse.Namespace) -> bool:
    if args.command == "evaluate":
        return bool(args.jsonl)
    files: list[str] = args.files
    return args.jsonl or len(files) > 1 or any(f.endswith(".jsonl") or Path(f).is_dir() for f in files)


async def _job(args: argparse.Namespace) -> int:
    """Many inputs: in process through the batch code path, or through the batch RPC of `--target`."""
    from verdict.cli import jobs

    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.command == "verify":
        defaults = {
            "finish_reason": args.finish_reason,
            "has_tool_calls": args.has_tool_calls,
            "completion_tokens": args.completion_tokens,
        }
        tools_json = _read(args.tools) if args.tools else ""
        if args.provider:
            items: Any = jobs.provider_items(args.files, jsonl=args.jsonl, tools_json=tools_json)
        else:
            items = jobs.verify_items(args.files, jsonl=args.jsonl, defaults=defaults, tools_json=tools_json)
    else:
        items = jobs.evaluate_items(args.jsonl)
    if args.target:
        async with open_channel(args) as channel:
            run = remote_batches(args, channel)
            summary = await jobs.run_job(args.command, items, run, out=sys.stdout, err=sys.stderr, size=args.batch_size)
    else:
        from verdict.rpc import Limits, VerdictServicer

        config = load_config(env=os.environ)
        async with local_components({"workspace_root": getattr(args, "workspace_root", None)}) as components:
            servicer = VerdictServicer(
                components.verifier,
                components.evaluations,
                limits=Limits.from_config(config),
                off_loop=components.runner.off_loop,
            )
            run = servicer.verify_batch if args.command == "verify" else servicer.evaluate_batch
            summary = await jobs.run_job(args.command, items, run, out=sys.stdout, err=sys.stderr, size=args.batch_size)
    return summary.exit_status


async def _verify(args: argparse.Namespace) -> dict[str, Any]:
    from verdict.v1 import verdict_pb2

    request = verdict_pb2.VerifyResponseRequest(
        request_text=Path(args.request_file).read_text(errors="replace") if args.request_file else "",
        tools_json=_read(args.tools) if args.tools else "",
    )
    if args.provider:
        request.message_json = _read(args.files[0])
    else:
        request.text = _read(args.files[0])
        request.finish_reason = args.finish_reason
        request.has_tool_calls = args.has_tool_calls
        request.completion_tokens = args.completion_tokens
    if args.target:
        response = await call(args, "VerifyResponse", request)
    else:
        from verdict.rpc import verification_to_proto, verify_input

        async with local_components() as components:
            response = verification_to_proto(await components.verifier.verify(verify_input(request)))
    return _as_json(response)


async def _evaluate(args: argparse.Namespace) -> dict[str, Any]:
    from google.protobuf import json_format

    from verdict.v1 import verdict_pb2

    if args.promptfoo is not None:
        config = verdict_pb2.EvaluatorConfig(promptfoo=args.promptfoo)
    elif args.openai_grader is not None:
        config = verdict_pb2.EvaluatorConfig(openai_grader=args.openai_grader)
    else:
        config = verdict_pb2.EvaluatorConfig(yaml=args.evaluator)
    state = args.state
    if args.state_file:
        if state:
            raise ValueError("--state and --state-file are alternatives: give one")
        carried = Path(args.state_file)
        state = carried.read_text(encoding="ascii").strip() if carried.exists() else ""
    request = verdict_pb2.EvaluateRequest(
        config=config,
        output=_read(args.output_file),
        exit_code=args.exit_code,
        state=state_token(state),
        workspace=args.workspace,
        finish_reason=args.finish_reason,
    )
    facts = {"toolCalls": json.loads(args.tool_calls), "tools": json.loads(args.tools)}
    facts["logprobs"] = json.loads(args.logprobs)
    facts.update({k: v for k, v in (("latencyMs", args.latency_ms), ("cost", args.cost)) if v is not None})
    json_format.ParseDict(facts, request)
    json_format.ParseDict(json.loads(args.context), request.context)
    if args.target:
        response = await call(args, "Evaluate", request)
    else:
        from verdict.rpc import evaluation_input, evaluation_to_proto

        async with local_components({"workspace_root": args.workspace_root}) as components:
            response = evaluation_to_proto(await components.evaluations.evaluate(evaluation_input(request)))
    result = _as_json(response)
    if args.state_file:
        _write_state(Path(args.state_file), str(result.get("state", "")))
    return result


def _write_state(path: Path, token: str) -> None:
    """Replace `path` with the new token at once (a write cut short must not leave half a token for the next step)."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(token + "\n", encoding="ascii")
    os.replace(partial, path)


def _as_json(response: Any) -> dict[str, Any]:
    from verdict.cli.jobs import as_json

    return as_json(response)


def _config(args: argparse.Namespace) -> int:
    from verdict.config.effective import render
    from verdict.config.provenance import check_all, explained, provenance

    try:
        if args.check:
            errors = check_all(args.check)
            for each in errors:
                print(f"verdict: invalid configuration: {each}", file=sys.stderr)
            if errors:
                print(f"{args.check}: {len(errors)} error(s)", file=sys.stderr)
                return EXIT_ERROR
            print(f"{args.check}: valid")
            return EXIT_OK
        if args.explain:
            found = provenance(args.config, env=os.environ)
            for each in found.errors:
                print(f"verdict: invalid configuration: {each}", file=sys.stderr)
            if found.errors:
                return EXIT_ERROR
            rows = explained(found)
            width = max(len(row["key"]) for row in rows)
            for row in rows:
                print(f"{row['key']:<{width}}  {json.dumps(row['value'])}  ({row['source']})")
            return EXIT_OK
        print(render(load_config(args.config, env=os.environ)), end="")
        return EXIT_OK
    except ConfigError as error:
        print(f"verdict: invalid configuration: {error}", file=sys.stderr)
        return EXIT_ERROR


class _HeldRecords(logging.handlers.BufferingHandler):
    """Keeps every record until it is replayed: `shouldFlush` never fires, so nothing is dropped or written early."""

    def shouldFlush(self, record: logging.LogRecord) -> bool:
        return False


@contextlib.contextmanager
def _held_config_records() -> Iterator[_HeldRecords]:
    """Hold what the configuration loader logs until the log level (which that configuration sets) is known.

    The loader runs before logging is set up, so its debug lines (the Kubernetes service-link variables it skipped)
    would otherwise reach only Python's last-resort handler, which drops everything below WARNING."""
    logger = logging.getLogger("verdict.config")
    held = _HeldRecords(capacity=0)
    level, propagate = logger.level, logger.propagate
    logger.addHandler(held)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield held
    finally:
        logger.removeHandler(held)
        logger.setLevel(level)
        logger.propagate = propagate


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`| head -1`): nothing left to say and no one to say it to. Point stdout at /dev/null
        # so the interpreter's final flush does not raise again, and exit as SIGPIPE would have.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    chosen = [args.evaluator, args.promptfoo, args.openai_grader] if args.command == "evaluate" else []
    if args.command == "evaluate" and not args.jsonl and sum(value is not None for value in chosen) != 1:
        parser.error(
            "evaluate needs one of --evaluator, --promptfoo or --openai-grader (one evaluation), "
            "or --jsonl FILE (a batch job)"
        )
    if args.command == "serve":
        flags = {key: getattr(args, key) for key in config_keys()}
        with _held_config_records() as held:
            try:
                config = load_config(args.config, env=os.environ, flags=flags)
            except ConfigError as error:
                print(f"verdict: invalid configuration: {error}", file=sys.stderr)
                return EXIT_ERROR
        configure_logging(config.log_format, config.log_level)
        for record in held.buffer:
            logger = logging.getLogger(record.name)
            if logger.isEnabledFor(record.levelno):
                logger.handle(record)
        from verdict.server.lifecycle import serve
        from verdict.server.supervisor import resolve_workers, supervise

        try:
            workers = resolve_workers(config)
            if workers > 1:
                return asyncio.run(supervise(config, workers))
            return asyncio.run(serve(config))
        except ConfigError as error:  # an address that cannot be bound
            print(f"verdict: cannot serve: {error}", file=sys.stderr)
            return EXIT_ERROR
    if args.command == "config":
        return _config(args)
    if args.command == "calibrate":
        return asyncio.run(calibrate.run(args))
    if args.command == "local-judge":
        from verdict.cli import local_judge

        return local_judge.run(args)
    if args.command in ("test", "evaluators"):
        from verdict.cli import catalogue, suite

        try:
            return (suite.run if args.command == "test" else catalogue.run)(args)
        except (OSError, ValueError, ConfigError, VerdictError) as error:
            print(f"verdict: {error}", file=sys.stderr)
            return EXIT_ERROR
    try:
        if _is_batch(args):
            return asyncio.run(_job(args))
        if args.command == "verify":
            result = asyncio.run(_verify(args))
            print(json.dumps(result, indent=2))
            return EXIT_FAILED if result.get("failed") else EXIT_OK
        result = asyncio.run(_evaluate(args))
        print(json.dumps(result, indent=2))
        return EXIT_OK
    except BrokenPipeError:
        raise
    except (OSError, ValueError, ConfigError, VerdictError) as error:
        print(f"verdict: {error}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as error:  # a grpc.RpcError from --target, among others
        details = getattr(error, "details", None)
        print(f"verdict: {details() if callable(details) else error}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
