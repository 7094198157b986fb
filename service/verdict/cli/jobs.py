"""`verdict verify` and `verdict evaluate` over many inputs: an offline evaluation job, in process or on a server.

Inputs are read lazily, `batch_size` at a time, so a million-line JSONL file is never held whole:

- `verify`: files (each one completion), directories (every regular file under them, sorted, recursively), or JSONL
  (`--jsonl`, or a file named `*.jsonl`; `-` is stdin): one JSON object per line with VerifyResponseRequest's fields
  (`text`, `finish_reason`, `has_tool_calls`, `completion_tokens`, `request_text`, `model`) and an optional `id`;
- `evaluate --jsonl`: one object per line with `config` (an evaluate block as a mapping, or YAML text), `output`,
  `exit_code`, `context`, `state` (base64, as printed), `workspace`, and an optional `id`.

Each batch runs through the same code as the batch RPCs (`VerdictServicer.verify_batch` in process, or
BatchVerifyResponses / BatchEvaluate against `--target`), so results mean the same either way. One JSON line per input
goes to stdout, in input order, with `input` (the file, or `file:line`) and `id` when given; an input that could not
be checked gets an `error` object (code, reason, message) instead. A summary (counts per verdict and per language,
errors, throughput) goes to stderr as one JSON line, and a progress line redraws on stderr only when it is a
terminal. Exit status: 0 when every input was checked and none failed, 1 when any failed (truncated, malformed) or
could not be checked.
"""

from __future__ import annotations

import collections
import json
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from google.protobuf import json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2

from verdict.v1 import verdict_pb2

__all__ = ["Item", "Summary", "as_json", "evaluate_items", "run_job", "verify_items"]

DEFAULT_BATCH_SIZE = 100

Runner = Callable[[list[Any]], Awaitable[list[Any]]]
"""Runs one batch of requests: one response or google.rpc.Status per request, in order."""


@dataclass(frozen=True)
class Item:
    """One input: where it came from, its `id` (JSONL), and its request, or why it has none."""

    label: str
    request: Any = None
    id: Any = None
    problem: str = ""


def _read_text(path: Path) -> str:
    # Invalid UTF-8 cannot travel in a proto string; replace it so the rest of the text is still checked.
    return path.read_bytes().decode("utf-8", errors="replace")


def _lines(source: str) -> Iterator[tuple[str, str]]:
    stream = sys.stdin if source == "-" else open(source, encoding="utf-8", errors="replace")  # noqa: SIM115
    try:
        for number, line in enumerate(stream, start=1):
            if line.strip():
                yield f"{'stdin' if source == '-' else source}:{number}", line
    finally:
        if stream is not sys.stdin:
            stream.close()


def _files(sources: Sequence[str]) -> Iterator[Path]:
    for source in sources:
        path = Path(source)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        else:
            yield path


def verify_items(
    sources: Sequence[str], *, jsonl: bool, defaults: dict[str, Any], tools_json: str = ""
) -> Iterator[Item]:
    """The completions in `sources`; `defaults` (finish_reason, ...) apply to plain files, `tools_json` to every
    item that declares no tools of its own."""
    for item in _verify_items(sources, jsonl=jsonl, defaults=defaults):
        if tools_json and item.request is not None and not (item.request.tools or item.request.tools_json):
            item.request.tools_json = tools_json
        yield item


def provider_items(sources: Sequence[str], *, jsonl: bool, tools_json: str) -> Iterator[Item]:
    """Provider responses or messages (one per file, or one per line of a JSONL file), each sent as message_json
    with the same `tools_json`: an agent loop's log of raw provider answers, checked as it was recorded."""
    for source in sources:
        if jsonl or source.endswith(".jsonl"):
            for label, line in _lines(source):
                yield Item(label, verdict_pb2.VerifyResponseRequest(message_json=line, tools_json=tools_json))
            continue
        for path in _files([source]):
            try:
                text = _read_text(path)
            except OSError as error:
                yield Item(str(path), problem=f"cannot read {path}: {error.strerror}")
                continue
            yield Item(str(path), verdict_pb2.VerifyResponseRequest(message_json=text, tools_json=tools_json))


def _verify_items(sources: Sequence[str], *, jsonl: bool, defaults: dict[str, Any]) -> Iterator[Item]:
    for source in sources:
        if jsonl or source.endswith(".jsonl"):
            for label, line in _lines(source):
                yield _json_item(label, line, _verify_request)
            continue
        for path in _files([source]):
            try:
                text = _read_text(path)
            except OSError as error:
                yield Item(str(path), problem=f"cannot read {path}: {error.strerror}")
                continue
            yield Item(str(path), verdict_pb2.VerifyResponseRequest(text=text, **defaults))


def evaluate_items(sources: Sequence[str]) -> Iterator[Item]:
    """The evaluations in the JSONL `sources`."""
    for source in sources:
        for label, line in _lines(source):
            yield _json_item(label, line, _evaluate_request)


def _json_item(label: str, line: str, build: Callable[[dict[str, Any]], Any]) -> Item:
    try:
        document = json.loads(line)
        if not isinstance(document, dict):
            raise ValueError("each line must be a JSON object")
        identity = document.pop("id", None)
        return Item(label, build(document), identity)
    except (ValueError, TypeError, json_format.ParseError) as error:
        return Item(label, problem=f"{label}: {error}")


def _verify_request(document: dict[str, Any]) -> verdict_pb2.VerifyResponseRequest:
    for key in ("message_json", "messageJson", "tools_json", "toolsJson"):
        if isinstance(document.get(key), (dict, list)):  # the provider's JSON inline, not as a string
            document[key] = json.dumps(document[key])
    request = verdict_pb2.VerifyResponseRequest()
    json_format.ParseDict(document, request)
    return request


def _evaluate_request(document: dict[str, Any]) -> verdict_pb2.EvaluateRequest:
    config = document.pop("config", None)
    if config is None:
        raise ValueError("`config` is required (an evaluate block, as a mapping or YAML text)")
    request = verdict_pb2.EvaluateRequest()
    json_format.ParseDict(document, request)  # `state` is base64, the proto3 JSON form of bytes
    request.config.yaml = config if isinstance(config, str) else json.dumps(config)
    return request


@dataclass
class Summary:
    """What a job did, for the stderr summary and the exit status."""

    kind: str
    total: int = 0
    failed: int = 0
    errors: int = 0
    verdicts: collections.Counter[str] = field(default_factory=collections.Counter)
    languages: collections.Counter[str] = field(default_factory=collections.Counter)
    started: float = field(default_factory=time.perf_counter)

    @property
    def exit_status(self) -> int:
        return 1 if self.failed or self.errors else 0

    def as_json(self) -> dict[str, Any]:
        seconds = max(time.perf_counter() - self.started, 1e-9)
        summary: dict[str, Any] = {
            "inputs": self.total,
            "failed": self.failed,
            "errors": self.errors,
            "verdicts": dict(sorted(self.verdicts.items())),
            "seconds": round(seconds, 3),
            "per_second": round(self.total / seconds, 1),
        }
        if self.kind == "verify":
            summary["languages"] = dict(sorted(self.languages.items()))
        return {"summary": summary}


def _error(status: status_pb2.Status) -> dict[str, Any]:
    reason = ""
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
    return {"code": code_pb2.Code.Name(status.code), "reason": reason, "message": status.message}


_PROTO_VERDICTS = frozenset(verdict_pb2.VerifyVerdict.keys())
"""The proto enum names of the VerifyResponse verdicts, as proto JSON prints them."""


def as_json(response: Any) -> dict[str, Any]:
    """A response as the CLI prints it: proto3 JSON with the field names of the proto (bytes in base64), whole
    numbers as ints, and verdicts in the one spelling people read (`malformed`, not `VERIFY_VERDICT_MALFORMED`)."""
    from verdict.evaluators.values import whole_numbers

    document = json_format.MessageToDict(
        response, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return _sorted_details(_lower_verdicts(whole_numbers(document)))  # type: ignore[no-any-return]


def _sorted_details(value: Any, *, inside: bool = False) -> Any:
    """Every object under a `details` key with its keys sorted: `details` is a Struct, a map whose order changes
    from call to call, and output people diff must not."""
    if isinstance(value, dict):
        keys = sorted(value) if inside else list(value)
        return {key: _sorted_details(value[key], inside=inside or key == "details") for key in keys}
    if isinstance(value, list):
        return [_sorted_details(item, inside=inside) for item in value]
    return value


def _lower_verdicts(value: Any) -> Any:
    """`VERIFY_VERDICT_MALFORMED` -> `malformed` under every `verdict` key that holds a VerifyVerdict name; the
    spelling is `rpc.messages`' (one table for the wire, the decision log and the CLI), so none is typed here."""
    from verdict.rpc.messages import verdict_name

    if isinstance(value, dict):
        return {
            key: verdict_name(item)
            if key == "verdict" and isinstance(item, str) and item in _PROTO_VERDICTS
            else _lower_verdicts(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_lower_verdicts(item) for item in value]
    return value


def _result(kind: str, item: Item, outcome: Any, summary: Summary) -> dict[str, Any]:
    line: dict[str, Any] = {"input": item.label}
    if item.id is not None:
        line["id"] = item.id
    summary.total += 1
    if isinstance(outcome, status_pb2.Status):
        summary.errors += 1
        line["error"] = _error(outcome)
        return line
    body = as_json(outcome)
    if kind == "evaluate":
        summary.verdicts[outcome.verdict] += 1
    else:
        from verdict.rpc.messages import verdict_name

        summary.verdicts[verdict_name(outcome.verdict)] += 1
        summary.failed += int(outcome.failed)
        for check in outcome.checks:
            summary.languages[check.language or "none"] += 1
    line.update(body)
    return line


def _chunks(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    chunk: list[Item] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


async def run_job(
    kind: str,
    items: Iterable[Item],
    run: Runner,
    *,
    out: TextIO,
    err: TextIO,
    size: int = DEFAULT_BATCH_SIZE,
) -> Summary:
    """Run every item, `size` at a time, printing one JSON line per item in order; returns the summary (also
    printed on `err`)."""
    summary = Summary(kind)
    progress = err.isatty()
    for chunk in _chunks(items, size):
        requests = [item.request for item in chunk if item.request is not None]
        outcomes = iter(await run(requests) if requests else [])
        for item in chunk:
            if item.request is None:
                outcome: Any = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=item.problem)
            else:
                outcome = next(outcomes)
            out.write(json.dumps(_result(kind, item, outcome, summary)) + "\n")
        out.flush()
        if progress:
            seconds = max(time.perf_counter() - summary.started, 1e-9)
            err.write(f"\r{kind}: {summary.total} inputs, {summary.failed} failed, {summary.total / seconds:.0f}/s ")
            err.flush()
    if progress:
        err.write("\r\033[K")
    err.write(json.dumps(summary.as_json()) + "\n")
    err.flush()
    return summary
