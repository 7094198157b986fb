"""`verdict test SUITE...`: pin a loop's evaluators in CI with a file of inputs and the verdicts they must give.

What `opa test` is to a policy and a promptfoo test file is to a prompt: a YAML file of cases, each an evaluator
configuration, an input (output, exit code, context, workspace) and the expected verdict. A change to an
`evaluate:` block, to the server, or to Verdict itself that changes a route fails the suite before a loop takes it.

```yaml
evaluators:                       # named configurations, the `evaluate:` blocks of the loop (optional)
  tests_pass: {type: output_contains, pattern: "passed"}
cases:
  - name: a green pytest run routes on
    evaluator: tests_pass         # a name above, or an inline mapping or YAML text
    output: "12 passed in 0.4s"
    expect: "yes"                 # the verdict; or a mapping: {verdict: "yes", details: {...}} (details a subset)
  - name: the same action three times stalls
    evaluator: {type: action_stall, max_repeat: 2}
    steps:                        # several calls in order, the state token carried from one to the next
      - {output: "same", expect: "yes"}
      - {output: "same", expect: "yes"}
      - {output: "same", expect: "no"}
```

Every case runs in this process (the same code the server runs, configured from VERDICT_* like `verdict
evaluate`) or, with `--target`, through a running server's Evaluate. The report: one line per case (`ok` or
`FAIL`, with what was expected and what came), a summary line, and with `--junit FILE` a JUnit XML file CI systems
show. Exit status 0 when every case matched, 1 when any did not (a call that errors counts as a mismatch, unless the
case expects `error`), 2 when a suite cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import yaml

__all__ = ["CaseResult", "Step", "SuiteCase", "SuiteError", "add_parser", "load_suite", "run", "run_suites"]


class SuiteError(Exception):
    """A suite file that cannot be read: the message names the file and the case."""


@dataclasses.dataclass(frozen=True)
class Step:
    output: str = ""
    exit_code: int = 0
    context: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    workspace: str = ""
    expect_verdict: str = ""
    expect_details: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class SuiteCase:
    suite: str
    name: str
    evaluator: str
    """The evaluator configuration as YAML text (what the `yaml` member of EvaluatorConfig takes)."""
    steps: tuple[Step, ...]


@dataclasses.dataclass
class CaseResult:
    case: SuiteCase
    failures: list[str]
    seconds: float
    error: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures


_STEP_KEYS = {"output", "exit_code", "context", "workspace", "expect"}
_CASE_KEYS = {"name", "evaluator", "steps", *_STEP_KEYS}


def _step(raw: Any, where: str) -> Step:
    if not isinstance(raw, Mapping):
        raise SuiteError(f"{where}: a step is a mapping of output, exit_code, context, workspace, expect")
    unknown = set(raw) - _STEP_KEYS
    if unknown:
        raise SuiteError(f"{where}: unknown keys {sorted(unknown)}; a step takes {sorted(_STEP_KEYS)}")
    if "expect" not in raw:
        raise SuiteError(f"{where}: no `expect` (the verdict this input must give)")
    expect = raw["expect"]
    if isinstance(expect, bool):  # YAML 1.1 reads a bare yes/no as a boolean
        expect = "yes" if expect else "no"
    details: Mapping[str, Any] = {}
    if isinstance(expect, Mapping):
        details = expect.get("details") or {}
        verdict = expect.get("verdict", "")
        verdict = ("yes" if verdict else "no") if isinstance(verdict, bool) else str(verdict)
    else:
        verdict = str(expect)
    context = raw.get("context") or {}
    if not isinstance(context, Mapping):
        raise SuiteError(f"{where}: `context` must be a mapping")
    return Step(
        str(raw.get("output", "")),
        int(raw.get("exit_code", 0)),
        context,
        str(raw.get("workspace", "")),
        verdict,
        details,
    )


def load_suite(path: Path) -> list[SuiteCase]:
    """The cases of one suite file. Raises SuiteError naming the file and the case."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise SuiteError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(document, Mapping) or not isinstance(document.get("cases"), list) or not document["cases"]:
        raise SuiteError(f"{path}: a suite is a mapping with a non-empty list `cases` (and optional `evaluators`)")
    named = document.get("evaluators") or {}
    if not isinstance(named, Mapping):
        raise SuiteError(f"{path}: `evaluators` maps names to evaluator configurations")
    cases = []
    for index, raw in enumerate(document["cases"]):
        where = f"{path}: case {index + 1}"
        if not isinstance(raw, Mapping):
            raise SuiteError(f"{where}: a case is a mapping")
        name = str(raw.get("name") or f"case {index + 1}")
        where = f"{path}: case {name!r}"
        unknown = set(raw) - _CASE_KEYS
        if unknown:
            raise SuiteError(f"{where}: unknown keys {sorted(unknown)}; a case takes {sorted(_CASE_KEYS)}")
        evaluator = raw.get("evaluator")
        if isinstance(evaluator, str) and evaluator in named:
            evaluator = named[evaluator]
        if isinstance(evaluator, Mapping):
            evaluator = yaml.safe_dump(dict(evaluator), sort_keys=False)
        if not isinstance(evaluator, str) or not evaluator.strip():
            known = ", ".join(map(str, named)) or "none defined"
            raise SuiteError(f"{where}: `evaluator` is a name from `evaluators` ({known}) or a configuration")
        if "steps" in raw:
            if set(raw) & _STEP_KEYS:
                raise SuiteError(f"{where}: give either `steps` or one step's keys, not both")
            if not isinstance(raw["steps"], list) or not raw["steps"]:
                raise SuiteError(f"{where}: `steps` is a non-empty list")
            steps = tuple(_step(step, f"{where}, step {i + 1}") for i, step in enumerate(raw["steps"]))
        else:
            steps = (_step({k: v for k, v in raw.items() if k in _STEP_KEYS}, where),)
        cases.append(SuiteCase(str(path), name, evaluator, steps))
    return cases


def _subset_mismatches(expected: Mapping[str, Any], actual: Mapping[str, Any], prefix: str = "details") -> list[str]:
    problems = []
    for key, want in expected.items():
        got = actual.get(key, _MISSING)
        if isinstance(want, Mapping) and isinstance(got, Mapping):
            problems += _subset_mismatches(want, got, f"{prefix}.{key}")
        elif got is _MISSING:
            problems.append(f"{prefix}.{key}: expected {want!r}, absent")
        elif got != want and not (isinstance(want, int | float) and isinstance(got, int | float) and want == got):
            problems.append(f"{prefix}.{key}: expected {want!r}, got {got!r}")
    return problems


_MISSING = object()
Evaluate = Callable[[Any], Awaitable[Any]]
"""An EvaluateRequest -> its EvaluateResponse (raises on a refused call)."""


async def run_case(case: SuiteCase, evaluate: Evaluate) -> CaseResult:
    from google.protobuf import json_format

    from verdict.cli.jobs import as_json
    from verdict.v1 import verdict_pb2

    started = time.perf_counter()
    failures: list[str] = []
    state = b""
    for number, step in enumerate(case.steps, 1):
        label = f"step {number}: " if len(case.steps) > 1 else ""
        request = verdict_pb2.EvaluateRequest(
            config=verdict_pb2.EvaluatorConfig(yaml=case.evaluator),
            output=step.output,
            exit_code=step.exit_code,
            state=state,
            workspace=step.workspace,
        )
        json_format.ParseDict(dict(step.context), request.context)
        try:
            response = await evaluate(request)
        except Exception as exc:  # a refused call (INVALID_ARGUMENT, ...) is this case's answer, not the run's end
            message = exc.details() if callable(getattr(exc, "details", None)) else str(exc)  # type: ignore[attr-defined]
            if step.expect_verdict != "error":
                failures.append(f"{label}expected {step.expect_verdict!r}, the call failed: {message}")
                return CaseResult(case, failures, time.perf_counter() - started, error=True)
            continue
        answer = as_json(response)
        if answer["verdict"] != step.expect_verdict:
            reason = answer.get("details", {}).get("error") or answer.get("details", {}).get("reason") or ""
            got = f"{answer['verdict']!r}" + (f" ({str(reason)[:200]})" if reason else "")
            failures.append(f"{label}expected {step.expect_verdict!r}, got {got}")
        failures += [f"{label}{problem}" for problem in _subset_mismatches(step.expect_details, answer["details"])]
        state = response.state
    return CaseResult(case, failures, time.perf_counter() - started)


def junit_xml(results: list[CaseResult], seconds: float) -> bytes:
    """The results as JUnit XML: one testsuite per suite file, one testcase per case."""
    root = ET.Element(
        "testsuites",
        name="verdict test",
        tests=str(len(results)),
        failures=str(sum(1 for r in results if not r.ok and not r.error)),
        errors=str(sum(1 for r in results if r.error)),
        time=f"{seconds:.3f}",
    )
    by_suite: dict[str, list[CaseResult]] = {}
    for result in results:
        by_suite.setdefault(result.case.suite, []).append(result)
    for suite, members in by_suite.items():
        element = ET.SubElement(
            root,
            "testsuite",
            name=suite,
            tests=str(len(members)),
            failures=str(sum(1 for r in members if not r.ok and not r.error)),
            errors=str(sum(1 for r in members if r.error)),
            time=f"{sum(r.seconds for r in members):.3f}",
        )
        for result in members:
            case = ET.SubElement(
                element, "testcase", classname=Path(suite).stem, name=result.case.name, time=f"{result.seconds:.3f}"
            )
            if not result.ok:
                kind = "error" if result.error else "failure"
                ET.SubElement(case, kind, message=result.failures[0][:500]).text = "\n".join(result.failures)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data


async def run_suites(cases: list[SuiteCase], evaluate: Evaluate, out: TextIO) -> list[CaseResult]:
    results = []
    for case in cases:
        result = await run_case(case, evaluate)
        results.append(result)
        if result.ok:
            out.write(f"ok    {case.name}\n")
        else:
            out.write(f"FAIL  {case.name}\n" + "".join(f"        {line}\n" for line in result.failures))
    return results


def add_parser(subparsers: Any, input_arguments: Callable[[argparse.ArgumentParser], None]) -> None:
    parser = subparsers.add_parser(
        "test",
        help="run suites of inputs and expected verdicts (YAML), pinning a loop's evaluators in CI",
        description="Run each case of each SUITE (YAML: evaluator configurations, inputs, expected verdicts) and "
        "report; exit 0 when all match, 1 when any does not, 2 when a suite cannot be read.",
    )
    parser.add_argument("suites", nargs="+", metavar="SUITE", help="suite files (YAML)")
    parser.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML to FILE")
    input_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        cases = [case for path in args.suites for case in load_suite(Path(path))]
    except SuiteError as exc:
        print(f"verdict: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = asyncio.run(_run(args, cases))
    seconds = time.perf_counter() - started
    failed = [result for result in results if not result.ok]
    summary = {"cases": len(results), "passed": len(results) - len(failed), "failed": len(failed)}
    print(json.dumps({"summary": {**summary, "seconds": round(seconds, 3)}}))
    if args.junit:
        Path(args.junit).write_bytes(junit_xml(results, seconds))
    return 1 if failed else 0


async def _run(args: argparse.Namespace, cases: list[SuiteCase]) -> list[CaseResult]:
    if args.target:
        from verdict.cli.calls import call_metadata, open_channel
        from verdict.v1 import verdict_pb2_grpc

        async with open_channel(args) as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)

            async def remote(request: Any) -> Any:
                return await stub.Evaluate(request, timeout=args.timeout, metadata=call_metadata(args))

            return await run_suites(cases, remote, sys.stdout)
    from verdict.cli.calls import local_components
    from verdict.rpc import evaluation_input, evaluation_to_proto

    async with local_components() as components:

        async def local(request: Any) -> Any:
            return evaluation_to_proto(await components.evaluations.evaluate(evaluation_input(request)))

        return await run_suites(cases, local, sys.stdout)
